import type { Knex } from 'knex';

/**
 * A business may take card payments through a processor's hosted checkout (Stripe). Its
 * connection is kept in the books: the processor's secret key and webhook signing secret
 * (never printed, logged or answered back), and the opaque id of its webhook address
 * (`/webhooks/stripe/{endpoint_id}`), which tells the business apart without naming it.
 * Disconnecting deletes the row; the audit trail keeps when it was made and undone.
 */
export const statements: string[] = [
  `CREATE TABLE card_processors (
    business_id TEXT PRIMARY KEY REFERENCES businesses(id),
    processor TEXT NOT NULL CHECK (processor IN ('stripe')),
    endpoint_id TEXT NOT NULL UNIQUE CHECK (length(endpoint_id) = 22),
    secret_key TEXT NOT NULL CHECK (length(secret_key) BETWEEN 8 AND 255),
    webhook_secret TEXT NOT NULL CHECK (length(webhook_secret) BETWEEN 8 AND 255),
    connected_at TEXT NOT NULL
  ) STRICT`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
