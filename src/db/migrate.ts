import knexFactory, { type Knex } from 'knex';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrations } from '../../db/migrations/index.js';

const migrationSource: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (migration) => migration.name,
  getMigration: async (migration) => migration.module,
};

export interface MigrateResult {
  applied: string[];
}

/** Brings the database file at `path` up to the latest schema. Safe to run repeatedly. */
export async function migrateLatest(path: string): Promise<MigrateResult> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: path },
    useNullAsDefault: true,
    pool: {
      afterCreate: (conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
        conn.pragma('journal_mode = WAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        conn.pragma('synchronous = FULL');
        done(null, conn);
      },
    },
  });
  try {
    const [, applied] = (await knex.migrate.latest({ migrationSource })) as [number, string[]];
    return { applied };
  } finally {
    await knex.destroy();
  }
}
