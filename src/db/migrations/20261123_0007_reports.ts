import type { Knex } from 'knex';

/**
 * What the statements and payables need:
 *
 * - `ledger_balances`: each account's debits and credits per line basis, summed by day, by
 *   month and by year, kept by a trigger in the same transaction that writes the journal line
 *   (lines are never updated or deleted, so an insert is the only change to follow). A report
 *   over any range reads at most a few runs of these rows instead of every line; `daybook
 *   verify` recomputes them from the lines. Existing books are summed once here.
 * - `bill_payments`: what was paid on a bill and when, so payables can be aged as of any date;
 *   a bill's paid amount is exactly the sum of its payments, and a bill's terms never change.
 * - `closed_on` on invoices and bills: the date from which nothing is owed (the last payment's
 *   date once paid in full, or the date a void reversed the invoice), so aging as of a date
 *   reads the documents open on that date through an index instead of every one ever issued.
 */

const DATE = (column: string) => `CHECK (${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`;

/** The first day of the day, month and year a line's date falls in. */
const SPANS = [
  { span: 'day', start: (date: string) => date },
  { span: 'month', start: (date: string) => `substr(${date}, 1, 7) || '-01'` },
  { span: 'year', start: (date: string) => `substr(${date}, 1, 4) || '-01-01'` },
] as const;

export const statements: string[] = [
  `CREATE TABLE ledger_balances (
    business_id TEXT NOT NULL REFERENCES businesses(id),
    span TEXT NOT NULL CHECK (span IN ('day','month','year')),
    period_start TEXT NOT NULL ${DATE('period_start')},
    ledger_account_id TEXT NOT NULL REFERENCES ledger_accounts(id),
    basis TEXT NOT NULL CHECK (basis IN ('both','accrual','cash')),
    debit_cents INTEGER NOT NULL CHECK (debit_cents >= 0),
    credit_cents INTEGER NOT NULL CHECK (credit_cents >= 0),
    PRIMARY KEY (business_id, span, period_start, ledger_account_id, basis)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TRIGGER journal_lines_balances AFTER INSERT ON journal_lines
   BEGIN
   ${SPANS.map(
     ({ span, start }) => `INSERT INTO ledger_balances (business_id, span, period_start, ledger_account_id, basis, debit_cents, credit_cents)
     VALUES (NEW.business_id, '${span}', ${start('NEW.entry_date')}, NEW.ledger_account_id, NEW.basis,
       CASE NEW.direction WHEN 'debit' THEN NEW.amount_cents ELSE 0 END, CASE NEW.direction WHEN 'credit' THEN NEW.amount_cents ELSE 0 END)
     ON CONFLICT (business_id, span, period_start, ledger_account_id, basis)
     DO UPDATE SET debit_cents = debit_cents + excluded.debit_cents, credit_cents = credit_cents + excluded.credit_cents;`,
   ).join('\n   ')}
   END`,
  `CREATE TRIGGER ledger_balances_no_delete BEFORE DELETE ON ledger_balances
   BEGIN SELECT RAISE(ABORT, 'ledger balances follow the journal; they are never deleted'); END`,
  ...SPANS.map(
    ({ span, start }) => `INSERT INTO ledger_balances (business_id, span, period_start, ledger_account_id, basis, debit_cents, credit_cents)
     SELECT business_id, '${span}', ${start('entry_date')}, ledger_account_id, basis,
       sum(CASE direction WHEN 'debit' THEN amount_cents ELSE 0 END), sum(CASE direction WHEN 'credit' THEN amount_cents ELSE 0 END)
     FROM journal_lines GROUP BY business_id, ${start('entry_date')}, ledger_account_id, basis`,
  ),

  `ALTER TABLE invoices ADD COLUMN closed_on TEXT ${DATE('closed_on')}`,
  `UPDATE invoices SET closed_on = (SELECT max(p.paid_at) FROM invoice_payments p WHERE p.invoice_id = invoices.id) WHERE status = 'paid'`,
  `UPDATE invoices SET closed_on = coalesce((SELECT r.entry_date FROM journal_entries r WHERE r.reverses_entry_id = invoices.journal_entry_id), substr(voided_at, 1, 10))
   WHERE status = 'void'`,
  'CREATE INDEX invoices_open ON invoices(business_id, closed_on)',
  `CREATE TRIGGER invoices_closed_on_settled BEFORE UPDATE OF closed_on ON invoices
   WHEN NEW.closed_on IS NOT OLD.closed_on AND (OLD.closed_on IS NOT NULL OR NEW.status NOT IN ('paid', 'void'))
   BEGIN SELECT RAISE(ABORT, 'an invoice is closed once, when it is paid in full or void'); END`,

  `ALTER TABLE bills ADD COLUMN closed_on TEXT ${DATE('closed_on')}`,
  'CREATE INDEX bills_open ON bills(business_id, closed_on)',
  `CREATE TRIGGER bills_closed_on_paid BEFORE UPDATE OF closed_on ON bills
   WHEN NEW.closed_on IS NOT OLD.closed_on AND (OLD.closed_on IS NOT NULL OR NEW.paid_cents <> NEW.amount_cents)
   BEGIN SELECT RAISE(ABORT, 'a bill is closed once, when it is paid in full'); END`,
  `CREATE TABLE bill_payments (
    id TEXT PRIMARY KEY,
    bill_id TEXT NOT NULL REFERENCES bills(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0 AND amount_cents < 1000000000000000),
    paid_on TEXT NOT NULL ${DATE('paid_on')},
    journal_entry_id TEXT NOT NULL REFERENCES journal_entries(id),
    created_at TEXT NOT NULL
  ) STRICT`,
  'CREATE INDEX bill_payments_bill ON bill_payments(bill_id, paid_on)',
  `CREATE TRIGGER bills_terms_fixed BEFORE UPDATE OF business_id, vendor_id, number, issue_date, due_date, amount_cents,
     ledger_account_id, journal_entry_id, created_at ON bills
   BEGIN SELECT RAISE(ABORT, 'a bill keeps its vendor, number, dates, amount, account and posting'); END`,
  `CREATE TRIGGER bills_paid_is_payments BEFORE UPDATE OF paid_cents ON bills
   WHEN NEW.paid_cents <> (SELECT coalesce(sum(amount_cents), 0) FROM bill_payments WHERE bill_id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'a bill''s paid amount is the sum of its recorded payments'); END`,
  `CREATE TRIGGER bills_start_unpaid BEFORE INSERT ON bills
   WHEN NEW.paid_cents <> 0 OR NEW.closed_on IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'a bill starts unpaid; payments are recorded in bill_payments'); END`,
  `CREATE TRIGGER bill_payments_within_owed BEFORE INSERT ON bill_payments
   WHEN NEW.amount_cents > (SELECT amount_cents - paid_cents FROM bills WHERE id = NEW.bill_id)
     OR NEW.paid_on < (SELECT issue_date FROM bills WHERE id = NEW.bill_id)
   BEGIN SELECT RAISE(ABORT, 'a bill payment is at most what is owed, on or after the bill''s date'); END`,
  `CREATE TRIGGER bills_no_delete BEFORE DELETE ON bills
   BEGIN SELECT RAISE(ABORT, 'bills are kept; they are part of the books'); END`,
  `CREATE TRIGGER bill_payments_no_update BEFORE UPDATE ON bill_payments
   BEGIN SELECT RAISE(ABORT, 'bill payments are immutable'); END`,
  `CREATE TRIGGER bill_payments_no_delete BEFORE DELETE ON bill_payments
   BEGIN SELECT RAISE(ABORT, 'bill payments are immutable'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
