import type { Knex } from 'knex';
import { rebuildTableInMigration } from '../rebuild.js';

/**
 * A foreign payment worth less than half a US cent, in both views, has nothing to post: the
 * posting engine writes no entry without two non-zero lines. It is still a payment (paid and
 * balance change), so `invoice_payments.journal_entry_id` may now be NULL, and only for a
 * payment whose cash and cleared receivable are both zero USD cents.
 */

const DATE = (column: string) => `CHECK (${column} GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]')`;

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await rebuildTableInMigration(knex, {
    table: 'invoice_payments',
    create: (name) => `CREATE TABLE ${name} (
    id TEXT PRIMARY KEY,
    invoice_id TEXT NOT NULL REFERENCES invoices(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    method TEXT NOT NULL CHECK (method IN ('check','cash','wire','other','stripe')),
    paid_at TEXT NOT NULL ${DATE('paid_at')},
    memo TEXT CHECK (length(memo) <= 2000),
    usd_per_unit TEXT,
    usd_cents INTEGER NOT NULL CHECK (usd_cents >= 0),
    journal_entry_id TEXT REFERENCES journal_entries(id),
    created_at TEXT NOT NULL,
    receivable_usd_cents INTEGER NOT NULL DEFAULT 0 CHECK (receivable_usd_cents >= 0),
    CHECK (journal_entry_id IS NOT NULL OR (usd_cents = 0 AND receivable_usd_cents = 0))
  ) STRICT`,
  });
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
