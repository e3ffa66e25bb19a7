import type { Knex } from 'knex';

/**
 * What the paged lists need: vendors get the case-folded name key customers already have
 * (search is case-insensitive for any script), every paged query gets an index in its own
 * order, and the books keep the secret that signs list cursors.
 */

/**
 * The folding of src/names.ts (foldName) as this migration ran, frozen here: it folds more than
 * the lower-casing customers were stored with (ß and ss, final and medial sigma), so existing
 * customers' keys are recomputed too.
 */
function nameKey(name: string): string {
  return name.normalize('NFC').toLocaleUpperCase('en-US').toLocaleLowerCase('en-US').replace(/ς/g, 'σ').normalize('NFC');
}

export const statements: string[] = [
  "ALTER TABLE vendors ADD COLUMN name_key TEXT NOT NULL DEFAULT ''",
  'CREATE INDEX vendors_tenant_name ON vendors(tenant_id, name_key, id)',
  'DROP INDEX customers_tenant_name',
  'CREATE INDEX customers_tenant_name ON customers(tenant_id, name_key, id)',
  // The register is newest first: date, then creation, then id. One index per filter that
  // narrows it most (vendor, account, status) keeps each filtered page in that order too.
  'DROP INDEX transactions_business_date',
  'DROP INDEX transactions_vendor',
  'CREATE INDEX transactions_register ON transactions(business_id, txn_date DESC, created_at DESC, id DESC)',
  'CREATE INDEX transactions_register_vendor ON transactions(business_id, vendor_id, txn_date DESC, created_at DESC, id DESC)',
  'CREATE INDEX transactions_register_account ON transactions(business_id, ledger_account_id, txn_date DESC, created_at DESC, id DESC)',
  'CREATE INDEX transactions_register_status ON transactions(business_id, status, txn_date DESC, created_at DESC, id DESC)',
  // Every vendor written from now on carries its key: one written without would sort first and
  // never match a search.
  `CREATE TRIGGER vendors_name_key_required BEFORE INSERT ON vendors WHEN NEW.name_key = ''
   BEGIN SELECT RAISE(ABORT, 'vendors.name_key must be the folded name (src/names.ts foldName)'); END`,
  `CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY CHECK (name IN ('cursor_signing','pay_links')),
    secret TEXT NOT NULL CHECK (length(secret) = 64),
    created_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
  for (const table of ['vendors', 'customers']) {
    const rows = (await knex.raw(`SELECT id, name FROM ${table}`)) as { id: string; name: string }[];
    for (const row of rows) await knex.raw(`UPDATE ${table} SET name_key = ? WHERE id = ?`, [nameKey(row.name), row.id]);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
