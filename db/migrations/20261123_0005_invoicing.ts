import type { Knex } from 'knex';

/**
 * What invoicing needs beyond the initial tables: an HTML body beside each email's text, the
 * part of the receivable each payment cleared (the accrual view's side of a foreign payment,
 * so realised FX differences can be traced), an index for the invoice list in its own order,
 * and reminders found by invoice and time.
 */
export const statements: string[] = [
  'ALTER TABLE email_outbox ADD COLUMN body_html TEXT',
  'ALTER TABLE invoice_payments ADD COLUMN receivable_usd_cents INTEGER NOT NULL DEFAULT 0 CHECK (receivable_usd_cents >= 0)',
  // The invoice list is newest first by issue date, then creation, then id.
  'DROP INDEX invoices_business_issue',
  'CREATE INDEX invoices_register ON invoices(business_id, issue_date DESC, created_at DESC, id DESC)',
  'CREATE INDEX invoices_register_status ON invoices(business_id, status, issue_date DESC, created_at DESC, id DESC)',
  'CREATE INDEX invoices_register_customer ON invoices(business_id, customer_id, issue_date DESC, created_at DESC, id DESC)',
  // Posted invoices and their payments are part of the books: once posted, an invoice's
  // amounts, currency, dates and rate never change (a correction is a void and a new invoice).
  `CREATE TRIGGER invoices_posted_fixed BEFORE UPDATE OF customer_id, number, currency, issue_date, due_date, subtotal_cents, tax_cents,
     total_cents, usd_per_unit, subtotal_usd_cents, tax_usd_cents, business_id ON invoices
   WHEN OLD.journal_entry_id IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'a sent invoice keeps its amounts, currency, dates and rate; void it and issue another'); END`,
  `CREATE TRIGGER invoice_lines_fixed_once_sent BEFORE UPDATE ON invoice_lines
   WHEN (SELECT status FROM invoices WHERE id = OLD.invoice_id) <> 'draft'
   BEGIN SELECT RAISE(ABORT, 'invoice lines are fixed once the invoice is sent'); END`,
  `CREATE TRIGGER invoice_payments_no_update BEFORE UPDATE ON invoice_payments
   BEGIN SELECT RAISE(ABORT, 'invoice payments are immutable'); END`,
  `CREATE TRIGGER invoice_payments_no_delete BEFORE DELETE ON invoice_payments
   BEGIN SELECT RAISE(ABORT, 'invoice payments are immutable'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
