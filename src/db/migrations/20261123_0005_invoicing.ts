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
  // A sent invoice is part of the books: its customer, number, currency, dates, amounts, rate,
  // posting, memo and lines never change (a correction is a void and a new invoice); its
  // status never returns to draft and nothing follows void; what it shows as paid is exactly
  // the sum of its payments, which are immutable.
  `CREATE TRIGGER invoices_sent_fixed BEFORE UPDATE OF business_id, customer_id, number, currency, issue_date, due_date,
     payment_terms_days, tax_rate_percent, subtotal_cents, tax_cents, total_cents, memo, pay_token, usd_per_unit,
     subtotal_usd_cents, tax_usd_cents, journal_entry_id, sent_at ON invoices
   WHEN OLD.sent_at IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'a sent invoice keeps its amounts, currency, dates, rate and posting; void it and issue another'); END`,
  `CREATE TRIGGER invoices_status_forward BEFORE UPDATE OF status ON invoices
   WHEN NEW.status IS NOT OLD.status AND (OLD.status = 'void' OR (NEW.status = 'draft' AND OLD.status <> 'draft'))
   BEGIN SELECT RAISE(ABORT, 'an invoice never returns to draft, and a void invoice stays void'); END`,
  `CREATE TRIGGER invoices_paid_is_payments BEFORE UPDATE OF paid_cents ON invoices
   WHEN NEW.paid_cents <> (SELECT coalesce(sum(amount_cents), 0) FROM invoice_payments WHERE invoice_id = NEW.id)
   BEGIN SELECT RAISE(ABORT, 'an invoice''s paid amount is the sum of its recorded payments'); END`,
  ...['INSERT', 'UPDATE', 'DELETE'].map(
    (event) => `CREATE TRIGGER invoice_lines_${event.toLowerCase()}_draft_only BEFORE ${event} ON invoice_lines
   WHEN (SELECT status FROM invoices WHERE id = ${event === 'INSERT' ? 'NEW' : 'OLD'}.invoice_id) <> 'draft'
   BEGIN SELECT RAISE(ABORT, 'invoice lines change only while the invoice is a draft'); END`,
  ),
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
