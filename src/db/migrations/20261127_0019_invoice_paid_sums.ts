import type { Knex } from 'knex';

const DAY = (column: string) => `CHECK (${column} IS NULL OR ${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`;

/**
 * What each invoice's payments relieved of its receivable, kept on the invoice, so the AR
 * aging reads one index instead of probing every open invoice's payments
 * (src/books/reports/aging.ts):
 *
 * - `paid_receivable_usd_cents`: the sum of its payments' `receivable_usd_cents`;
 * - `last_paid_at`: the latest of their dates. An invoice with no payment after the aging's
 *   date owes its USD total less the sum; only one paid after it needs its payments read.
 *
 * A payment's insert adds to both (payments are never changed or deleted), and the invoice
 * refuses any other value: the two always agree with the payments, as `paid_cents` does.
 * `invoices_aging` holds every column the aging reads (the partial index's own condition
 * included, or SQLite reads each row to check it), for the posted invoices only.
 */
export const statements: string[] = [
  'ALTER TABLE invoices ADD COLUMN paid_receivable_usd_cents INTEGER NOT NULL DEFAULT 0 CHECK (paid_receivable_usd_cents >= 0)',
  `ALTER TABLE invoices ADD COLUMN last_paid_at TEXT ${DAY('last_paid_at')}`,
  `UPDATE invoices SET
     paid_receivable_usd_cents = (SELECT coalesce(sum(p.receivable_usd_cents), 0) FROM invoice_payments p WHERE p.invoice_id = invoices.id),
     last_paid_at = (SELECT max(p.paid_at) FROM invoice_payments p WHERE p.invoice_id = invoices.id)
   WHERE EXISTS (SELECT 1 FROM invoice_payments p WHERE p.invoice_id = invoices.id)`,
  `CREATE TRIGGER invoices_paid_sums_are_payments BEFORE UPDATE OF paid_receivable_usd_cents, last_paid_at ON invoices
   WHEN NEW.paid_receivable_usd_cents <> (SELECT coalesce(sum(p.receivable_usd_cents), 0) FROM invoice_payments p WHERE p.invoice_id = NEW.id)
     OR NEW.last_paid_at IS NOT (SELECT max(p.paid_at) FROM invoice_payments p WHERE p.invoice_id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'an invoice''s paid sums are those of its recorded payments'); END`,
  `CREATE TRIGGER invoice_payments_sums AFTER INSERT ON invoice_payments
   BEGIN
     UPDATE invoices SET
       paid_receivable_usd_cents = paid_receivable_usd_cents + NEW.receivable_usd_cents,
       last_paid_at = CASE WHEN last_paid_at IS NULL OR last_paid_at < NEW.paid_at THEN NEW.paid_at ELSE last_paid_at END
     WHERE id = NEW.invoice_id;
   END`,
  `CREATE INDEX invoices_aging ON invoices (business_id, closed_on, issue_date, due_date, number, customer_id,
     subtotal_usd_cents, tax_usd_cents, paid_receivable_usd_cents, last_paid_at, id, journal_entry_id) WHERE journal_entry_id IS NOT NULL`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
