import knexFactory, { type Knex } from 'knex';
import { type MigrationEntry, migrations } from './migrations/index.js';
import { applyPragmas, type Db } from './connection.js';
import { ensurePrivateDatabaseFile } from './private-files.js';

function migrationSource(list: readonly MigrationEntry[]): Knex.MigrationSource<MigrationEntry> {
  return {
    getMigrations: async () => [...list],
    getMigrationName: (migration) => migration.name,
    getMigration: async (migration) => migration.module,
  };
}

export interface MigrateResult {
  applied: string[];
}

/**
 * Brings the database file at `path` up to the latest schema. Safe to run repeatedly.
 * `after` runs further migrations after the real ones: tests use it to exercise a migration
 * (a table rebuild, say) on a books file the real list has produced.
 */
export async function migrateLatest(path: string, after: readonly MigrationEntry[] = []): Promise<MigrateResult> {
  // Made here, not by knex's driver: SQLite would create the books with the umask's mode.
  ensurePrivateDatabaseFile(path);
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: path },
    useNullAsDefault: true,
    // A failed migration is thrown to the caller, which reports it once; knex would also
    // print it to the console on its own.
    log: { error: () => {} },
    pool: {
      afterCreate: (conn: Db, done: (err: Error | null, conn: unknown) => void) => {
        applyPragmas(conn, 'full');
        done(null, conn);
      },
    },
  });
  try {
    const [, applied] = (await knex.migrate.latest({ migrationSource: migrationSource([...migrations, ...after]) })) as [number, string[]];
    return { applied };
  } finally {
    await knex.destroy();
  }
}
