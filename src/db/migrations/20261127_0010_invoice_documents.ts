import type { Knex } from 'knex';

/**
 * - `invoice_documents`: each invoice's PDF as last drawn, with the fingerprint of everything
 *   it shows (`state_key`). Drawing takes a thread seconds for a large invoice, so a PDF is
 *   drawn once per state and kept in the books, where backups carry it, rather than in a small
 *   memory cache that anyone fetching many pay links could churn.
 * - `invoices.pay_link_version`: the pay link is derived from the invoice id and this number,
 *   so `daybook invoice relink` can give a sent invoice a new link (the old one then finds
 *   nothing). A sent invoice's `pay_token` was fixed with its amounts; it may now change, but
 *   only together with a higher version.
 */

const SENT_FIXED_COLUMNS = `business_id, customer_id, number, currency, issue_date, due_date,
     payment_terms_days, tax_rate_percent, subtotal_cents, tax_cents, total_cents, memo, usd_per_unit,
     subtotal_usd_cents, tax_usd_cents, journal_entry_id, sent_at`;

export const statements: string[] = [
  `CREATE TABLE invoice_documents (
    invoice_id TEXT PRIMARY KEY REFERENCES invoices(id),
    state_key TEXT NOT NULL CHECK (length(state_key) = 64),
    pdf BLOB NOT NULL CHECK (length(pdf) > 0)
  ) STRICT`,
  'ALTER TABLE invoices ADD COLUMN pay_link_version INTEGER NOT NULL DEFAULT 0 CHECK (pay_link_version >= 0)',
  'DROP TRIGGER invoices_sent_fixed',
  `CREATE TRIGGER invoices_sent_fixed BEFORE UPDATE OF ${SENT_FIXED_COLUMNS} ON invoices
   WHEN OLD.sent_at IS NOT NULL
   BEGIN SELECT RAISE(ABORT, 'a sent invoice keeps its amounts, currency, dates, rate and posting; void it and issue another'); END`,
  `CREATE TRIGGER invoices_pay_link_forward BEFORE UPDATE OF pay_token, pay_link_version ON invoices
   WHEN NEW.pay_link_version < OLD.pay_link_version
     OR (NEW.pay_token IS NOT OLD.pay_token) <> (NEW.pay_link_version IS NOT OLD.pay_link_version)
   BEGIN SELECT RAISE(ABORT, 'a pay link changes only to a new version, and never back'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
