import { addDays, daysBetween } from '../../dates.js';
import type { Db } from '../../db/connection.js';
import { all } from '../../db/statements.js';

/**
 * Receivables and payables aged as of a date, in USD cents: every invoice (or bill) still
 * owed on that date, by how far past its due date it is. What is owed on a date is what was
 * posted on or before it less the payments dated on or before it, so the grand total equals
 * the receivable (payable) account's accrual balance that day. Reads only the documents open
 * on the date (closed_on, migration 0007).
 */

export const AGING_BUCKETS = ['current', 'd1_30', 'd31_60', 'd61_90', 'd90plus'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

/** How many of the largest balances a report lists (spec Limits). */
export const AGING_ITEMS = 25;

export interface AgingItem {
  id: string;
  customerOrVendor: string;
  number: string;
  dueDate: string;
  /** Days from the due date to asOf: negative before it is due. */
  daysOverdue: number;
  balanceCents: bigint;
}

export interface Aging {
  asOf: string;
  buckets: Record<AgingBucket, bigint>;
  grandTotalCents: bigint;
  /** The AGING_ITEMS largest balances, largest first (ties: earlier due date, then number). */
  items: AgingItem[];
}

/** The bucket of a balance this many days past due: current until the due date has passed. */
export function bucketOf(daysOverdue: number): AgingBucket {
  if (daysOverdue <= 0) return 'current';
  if (daysOverdue <= 30) return 'd1_30';
  if (daysOverdue <= 60) return 'd31_60';
  if (daysOverdue <= 90) return 'd61_90';
  return 'd90plus';
}

/**
 * The documents open as of @asOf in the business @business, each with its USD balance that day.
 * Open on a date means never closed, or closed after it: two ranges of an index that starts
 * (business_id, closed_on), read as two branches, since SQLite uses no index for `closed_on IS
 * NULL OR closed_on > ?`.
 *
 * Invoices are read from `invoices_aging` alone (migration 0019), which holds every column
 * needed, including what the payments relieved so far and the latest payment's date: an
 * invoice paid last on or before asOf owes its USD total less that sum, and only one with a
 * payment after asOf (an aging of a past date) has its payments read.
 */
const OPEN_INVOICES = (['i.closed_on IS NULL', 'i.closed_on > @asOf'] as const)
  .map(
    (open) => `
  SELECT i.id, i.due_date, i.number, i.customer_id AS party_id,
    coalesce(i.subtotal_usd_cents, 0) + coalesce(i.tax_usd_cents, 0) - CASE
      WHEN i.last_paid_at IS NULL THEN 0
      WHEN i.last_paid_at <= @asOf THEN i.paid_receivable_usd_cents
      ELSE coalesce((SELECT sum(p.receivable_usd_cents) FROM invoice_payments p WHERE p.invoice_id = i.id AND p.paid_at <= @asOf), 0)
    END AS balance
  FROM invoices i INDEXED BY invoices_aging
  WHERE i.business_id = @business AND ${open} AND i.journal_entry_id IS NOT NULL AND i.issue_date <= @asOf`,
  )
  .join('\n  UNION ALL');

const OPEN_BILLS = (['b.closed_on IS NULL', 'b.closed_on > @asOf'] as const)
  .map(
    (open) => `
  SELECT b.id, b.due_date, b.number, b.vendor_id AS party_id,
    b.amount_cents - coalesce((SELECT sum(p.amount_cents) FROM bill_payments p WHERE p.bill_id = b.id AND p.paid_on <= @asOf), 0) AS balance
  FROM bills b
  WHERE b.business_id = @business AND ${open} AND b.issue_date <= @asOf`,
  )
  .join('\n  UNION ALL');

interface AgingSource {
  open: string;
  parties: string;
}

const RECEIVABLES: AgingSource = { open: OPEN_INVOICES, parties: 'customers' };
const PAYABLES: AgingSource = { open: OPEN_BILLS, parties: 'vendors' };

/** Receivables aging: unpaid invoices (sent, not void, not yet paid in full) as of asOf. */
export function receivablesAging(db: Db, businessId: string, asOf: string): Aging {
  return aging(db, RECEIVABLES, businessId, asOf);
}

/** Payables aging: unpaid bills as of asOf. */
export function payablesAging(db: Db, businessId: string, asOf: string): Aging {
  return aging(db, PAYABLES, businessId, asOf);
}

function aging(db: Db, source: AgingSource, businessId: string, asOf: string): Aging {
  // A due date on or after asOf is current; each later bucket starts the day after the last one ends.
  const dueOnOrAfter = (days: number) => addDays(asOf, -days);
  // One statement: the open documents and their balances are worked out once (MATERIALIZED),
  // then give the totals row (part 0) and the largest balances (part 1), whose parties' names
  // are joined after the 25 are chosen (joined before, SQLite scanned every party and indexed
  // the open set by party: half the AR aging's 15 ms at 10,000 open invoices).
  const rows = all<{ part: bigint; id: string | null; party: string | null; number: string | null; due_date: string | null; balance: bigint | null } & Record<AgingBucket, bigint | null>>(
    db,
    `WITH open AS MATERIALIZED (${source.open}),
       owed AS (SELECT * FROM open WHERE balance > 0)
     SELECT 0 AS part, NULL AS id, NULL AS party, NULL AS number, NULL AS due_date, sum(balance) AS balance,
            sum(CASE WHEN due_date >= @asOf THEN balance END) AS current,
            sum(CASE WHEN due_date < @asOf AND due_date >= @d30 THEN balance END) AS d1_30,
            sum(CASE WHEN due_date < @d30 AND due_date >= @d60 THEN balance END) AS d31_60,
            sum(CASE WHEN due_date < @d60 AND due_date >= @d90 THEN balance END) AS d61_90,
            sum(CASE WHEN due_date < @d90 THEN balance END) AS d90plus
     FROM owed
     UNION ALL
     SELECT 1, top.id, party.name, top.number, top.due_date, top.balance, NULL, NULL, NULL, NULL, NULL
     FROM (SELECT * FROM owed ORDER BY balance DESC, due_date, number, id LIMIT ${AGING_ITEMS}) top
     JOIN ${source.parties} party ON party.id = top.party_id
     ORDER BY part, balance DESC, due_date, number, id`,
    { business: businessId, asOf, d30: dueOnOrAfter(30), d60: dueOnOrAfter(60), d90: dueOnOrAfter(90) },
  );
  const totals = rows[0];
  if (totals?.part !== 0n) throw new Error(`aging of ${businessId} as of ${asOf}: no totals row`);
  const buckets = Object.fromEntries(AGING_BUCKETS.map((bucket) => [bucket, totals[bucket] ?? 0n])) as Record<AgingBucket, bigint>;
  const grandTotalCents = totals.balance ?? 0n;
  const items = rows.slice(1).map((row) => ({
    id: row.id!,
    customerOrVendor: row.party!,
    number: row.number!,
    dueDate: row.due_date!,
    daysOverdue: daysBetween(row.due_date!, asOf),
    balanceCents: row.balance!,
  }));
  const bucketSum = AGING_BUCKETS.reduce((sum, bucket) => sum + buckets[bucket], 0n);
  if (bucketSum !== grandTotalCents) throw new Error(`aging of ${businessId} as of ${asOf}: buckets sum to ${bucketSum}, grand total ${grandTotalCents}`);
  return { asOf, buckets, grandTotalCents, items };
}
