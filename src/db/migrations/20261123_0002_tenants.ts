import type { Knex } from 'knex';

/**
 * The firm that hosts businesses is a tenant in code; "account" means a ledger account. The
 * table and its foreign-key columns follow. SQLite's RENAME keeps every reference (foreign
 * keys, indexes, triggers) pointing at the renamed table and columns.
 */
export const statements: string[] = [
  'ALTER TABLE accounts RENAME TO tenants',
  ...['businesses', 'customers', 'vendors', 'api_keys', 'audit_log', 'email_outbox'].map(
    (table) => `ALTER TABLE ${table} RENAME COLUMN account_id TO tenant_id`,
  ),
  'DROP INDEX businesses_account',
  'CREATE INDEX businesses_tenant ON businesses(tenant_id, name)',
  'DROP INDEX customers_account_name',
  'CREATE INDEX customers_tenant_name ON customers(tenant_id, name_key)',
  'DROP INDEX api_keys_account',
  'CREATE INDEX api_keys_tenant ON api_keys(tenant_id)',
  'DROP INDEX audit_log_account_at',
  'CREATE INDEX audit_log_tenant_at ON audit_log(tenant_id, at)',
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
