import knexFactory, { type Knex } from 'knex';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrations } from '../../db/migrations/index.js';
import { applyPragmas, type Db } from './connection.js';

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
      afterCreate: (conn: Db, done: (err: Error | null, conn: unknown) => void) => {
        applyPragmas(conn, 'full');
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
