import type { Knex } from 'knex';

/**
 * `access_version`: one row whose number moves whenever anything a key's principal is made of
 * changes (the key, its account, the businesses, a key's grants), by whichever connection and
 * however (a command, a migration, plain SQL). The server keeps each key's principal, with the
 * businesses it reaches, while this number stands (src/db/access-cache.ts): a request reads one
 * small row instead of the key, the account, the grants and the businesses, and a write to the
 * books (an expense) no longer empties the cache.
 */
const WATCHED = ['tenants', 'api_keys', 'api_key_businesses', 'businesses'] as const;
const EVENTS = ['insert', 'update', 'delete'] as const;

/**
 * The columns of `businesses` a business's record is read from: every one but
 * `next_invoice_number`, which each new invoice moves and which no principal holds. A column
 * added to businesses joins this list (test/api/key-cache.test.ts checks it).
 */
export const BUSINESS_RECORD_COLUMNS = ['id', 'tenant_id', 'name', 'basis', 'payment_terms_days', 'created_at'] as const;

function watchedEvent(table: (typeof WATCHED)[number], event: (typeof EVENTS)[number]): string {
  return table === 'businesses' && event === 'update' ? `UPDATE OF ${BUSINESS_RECORD_COLUMNS.join(', ')}` : event.toUpperCase();
}

export const statements: string[] = [
  `CREATE TABLE access_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL CHECK (version >= 0)
  ) STRICT`,
  'INSERT INTO access_version (id, version) VALUES (1, 0)',
  `CREATE TRIGGER access_version_kept BEFORE DELETE ON access_version
   BEGIN SELECT RAISE(ABORT, 'the access version is never deleted'); END`,
  ...WATCHED.flatMap((table) =>
    EVENTS.map(
      (event) => `CREATE TRIGGER ${table}_access_${event} AFTER ${watchedEvent(table, event)} ON ${table}
   BEGIN UPDATE access_version SET version = version + 1 WHERE id = 1; END`,
    ),
  ),
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
