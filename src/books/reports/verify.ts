import type { Db } from '../../db/connection.js';
import { all, one } from '../../db/statements.js';
import type { BalanceSpan } from './balances.js';
import type { LineBasis } from '../ledger.js';

/**
 * Recomputes a business's stored balances (ledger_balances) from its journal lines and lists
 * every difference: a stored sum that is wrong, missing, or has no lines behind it. The books
 * keep them in step by a trigger; this is the independent check (`daybook verify`).
 */

export interface BalanceMismatch {
  span: BalanceSpan;
  periodStart: string;
  accountId: string;
  basis: LineBasis;
  stored: { debitCents: bigint; creditCents: bigint } | null;
  fromLines: { debitCents: bigint; creditCents: bigint } | null;
}

export interface BalanceCheck {
  lines: number;
  storedRows: number;
  /** Every difference, up to `limit`; `mismatchCount` counts them all. */
  mismatches: BalanceMismatch[];
  mismatchCount: number;
}

const START = {
  day: 'entry_date',
  month: "substr(entry_date, 1, 7) || '-01'",
  year: "substr(entry_date, 1, 4) || '-01-01'",
} as const;

const COMPUTED = (Object.entries(START) as [BalanceSpan, string][])
  .map(
    ([span, start]) => `SELECT '${span}' AS span, ${start} AS period_start, ledger_account_id, basis,
       sum(CASE direction WHEN 'debit' THEN amount_cents ELSE 0 END) AS debit_cents,
       sum(CASE direction WHEN 'credit' THEN amount_cents ELSE 0 END) AS credit_cents
     FROM journal_lines WHERE business_id = @business GROUP BY ${start}, ledger_account_id, basis`,
  )
  .join(' UNION ALL ');

const PERIOD_END = `CASE s.span WHEN 'day' THEN s.period_start
  WHEN 'month' THEN date(s.period_start, '+1 month', '-1 day') ELSE date(s.period_start, '+1 year', '-1 day') END`;

/**
 * Two halves, each linear in the rows: every sum computed from the lines against its stored row
 * (a look-up by primary key), then every stored row with no line behind it (a probe of
 * journal_lines_account_date). A FULL OUTER JOIN of the two sets would compare every row with
 * every other, since SQLite makes no index for it.
 */
const DIFFERENCES = `
  WITH computed AS (${COMPUTED})
  SELECT c.span, c.period_start, c.ledger_account_id AS account_id, c.basis,
         s.debit_cents AS stored_debit, s.credit_cents AS stored_credit, c.debit_cents AS line_debit, c.credit_cents AS line_credit
  FROM computed c LEFT JOIN ledger_balances s
    ON s.business_id = @business AND s.span = c.span AND s.period_start = c.period_start
   AND s.ledger_account_id = c.ledger_account_id AND s.basis = c.basis
  WHERE s.debit_cents IS NOT c.debit_cents OR s.credit_cents IS NOT c.credit_cents
  UNION ALL
  SELECT s.span, s.period_start, s.ledger_account_id, s.basis, s.debit_cents, s.credit_cents, NULL, NULL
  FROM ledger_balances s
  WHERE s.business_id = @business AND NOT EXISTS (
    SELECT 1 FROM journal_lines l
    WHERE l.ledger_account_id = s.ledger_account_id AND l.entry_date BETWEEN s.period_start AND ${PERIOD_END}
      AND l.basis = s.basis AND l.business_id = s.business_id)`;

interface DifferenceRow {
  span: BalanceSpan;
  period_start: string;
  account_id: string;
  basis: LineBasis;
  stored_debit: bigint | null;
  stored_credit: bigint | null;
  line_debit: bigint | null;
  line_credit: bigint | null;
}

export function verifyBalances(db: Db, businessId: string, limit = 100): BalanceCheck {
  const differences = all<DifferenceRow>(db, `${DIFFERENCES} ORDER BY 2, 1, 3, 4`, { business: businessId });
  const count = (sql: string) => Number(one<{ n: bigint }>(db, sql, businessId)?.n ?? 0n);
  return {
    lines: count('SELECT count(*) AS n FROM journal_lines WHERE business_id = ?'),
    storedRows: count('SELECT count(*) AS n FROM ledger_balances WHERE business_id = ?'),
    mismatchCount: differences.length,
    mismatches: differences.slice(0, limit).map((row) => ({
      span: row.span,
      periodStart: row.period_start,
      accountId: row.account_id,
      basis: row.basis,
      stored: row.stored_debit === null ? null : { debitCents: row.stored_debit, creditCents: row.stored_credit ?? 0n },
      fromLines: row.line_debit === null ? null : { debitCents: row.line_debit, creditCents: row.line_credit ?? 0n },
    })),
  };
}
