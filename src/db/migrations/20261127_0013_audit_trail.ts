import type { Knex } from 'knex';
import { rebuildTableInMigration } from '../rebuild.js';

/**
 * The audit trail holds every writer's rows:
 * - installation-wide rows, which belong to no account (exchange rates, restore, migrate), so
 *   `tenant_id` may be NULL, and then so is `business_id`;
 * - the kinds of writer: an API key, the admin CLI (the OS user, and the command in `command`),
 *   a job (by name), the owner's console, the customer's pay page and a processor's webhook.
 *   The old catch-all `system` becomes `job` (the overdue sweep, now named `overdue`) or
 *   `pay_page`.
 * Append-only as before: the table's triggers come back with it.
 *
 * The copy names the old table's columns and maps `system`; run again on its own result (a
 * crash before knex records the migration) it copies every row unchanged, `command` being NULL
 * on every row the first run wrote.
 */

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await rebuildTableInMigration(knex, {
    table: 'audit_log',
    create: (name) => `CREATE TABLE ${name} (
    id INTEGER PRIMARY KEY,
    tenant_id TEXT REFERENCES tenants(id),
    business_id TEXT REFERENCES businesses(id),
    actor_type TEXT NOT NULL CHECK (actor_type IN ('api_key','cli','job','console','pay_page','webhook')),
    actor_id TEXT CHECK (actor_type <> 'api_key' OR actor_id IS NOT NULL),
    actor_name TEXT NOT NULL,
    command TEXT CHECK (command IS NULL OR actor_type = 'cli'),
    action TEXT NOT NULL,
    subject_type TEXT,
    subject_id TEXT,
    detail_json TEXT NOT NULL DEFAULT '{}',
    at TEXT NOT NULL,
    CHECK (tenant_id IS NOT NULL OR business_id IS NULL)
  ) STRICT`,
    copy: (from, to) => `INSERT INTO "${to}" (id, tenant_id, business_id, actor_type, actor_id, actor_name, action, subject_type, subject_id, detail_json, at)
    SELECT id, tenant_id, business_id,
      CASE WHEN actor_type <> 'system' THEN actor_type WHEN actor_name = 'pay page' THEN 'pay_page' ELSE 'job' END,
      actor_id,
      CASE WHEN actor_type = 'system' AND actor_name = 'overdue sweep' THEN 'overdue' ELSE actor_name END,
      action, subject_type, subject_id, detail_json, at
    FROM "${from}"`,
  });
  await knex.raw('CREATE INDEX IF NOT EXISTS audit_log_tenant_id ON audit_log(tenant_id, id)');
  await knex.raw('DROP INDEX IF EXISTS audit_log_tenant_at');
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
