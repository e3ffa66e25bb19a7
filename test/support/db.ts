import knexFactory from 'knex';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Db, openDb } from '../../src/db/connection.js';
import { type MigrationEntry, migrations } from '../../src/db/migrations/index.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { fixedClock } from '../../src/clock.js';

export interface TempDb {
  db: Db;
  path: string;
  dir: string;
  close(): void;
}

/** A fresh, fully migrated SQLite file in its own temporary folder. */
export async function freshDb(): Promise<TempDb> {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-test-'));
  const path = join(dir, 'books.sqlite');
  await migrateLatest(path);
  const db = openDb(path, { synchronous: 'normal' });
  ensureServerSecrets(db, fixedClock('2026-03-15T12:00:00.000Z'));
  return {
    db,
    path,
    dir,
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Migrates the file at `path` through the migration named `last`: books as an installation that stopped there has them. */
export async function migrateThrough(path: string, last: string): Promise<void> {
  const index = migrations.findIndex((migration) => migration.name === last);
  if (index < 0) throw new Error(`migrateThrough: no migration ${last}`);
  const through = migrations.slice(0, index + 1);
  const knex = knexFactory({ client: 'better-sqlite3', connection: { filename: path }, useNullAsDefault: true });
  try {
    await knex.migrate.latest({
      migrationSource: {
        getMigrations: async () => through,
        getMigrationName: (migration: MigrationEntry) => migration.name,
        getMigration: async (migration: MigrationEntry) => migration.module,
      },
    });
  } finally {
    await knex.destroy();
  }
}

/**
 * Books migrated through a migration before 20261127_0013_audit_trail lack audit_log's `command`
 * column, which today's recordAudit writes. Adding it lets a test build older books through the
 * books functions. The audit rebuild copies the old columns only, so those rows' commands are
 * dropped then; no test of an older migration asserts on them.
 */
export function letOlderBooksTakeTodaysAuditRows(db: Db): void {
  db.exec('ALTER TABLE audit_log ADD COLUMN command TEXT');
}

/**
 * Books migrated through a migration before 20261127_0016_card_settlement refuse today's chart
 * (its card accounts' system roles are not in their CHECK list). On this connection only, CHECK
 * constraints are not enforced, so a test can build older books with today's businesses; the
 * migration then keeps those accounts (the business has the roles already). Triggers and
 * foreign keys still hold.
 */
export function letOlderBooksTakeTodaysChart(db: Db): void {
  db.pragma('ignore_check_constraints = ON');
}
