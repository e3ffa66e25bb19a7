import type { Knex } from 'knex';
import { type MigrationEntry, migrations } from './migrations/index.js';
import { applyPragmas, type Db, openDb } from './connection.js';
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
 * Whether the books at `path` have recorded exactly the migrations of `list` and no migration
 * holds the lock: then there is nothing to run. Read with one plain query, so books that are
 * current never load knex; anything else (new books, a migration to run, history this list
 * does not know, a held lock) is left to knex, which applies or reports it.
 */
function alreadyCurrent(path: string, list: readonly MigrationEntry[]): boolean {
  if (path === ':memory:') return false;
  let db: Db | undefined;
  try {
    db = openDb(path);
    const tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('knex_migrations', 'knex_migrations_lock')").pluck().get();
    if (Number(tables) !== 2) return false;
    if (db.prepare('SELECT 1 FROM knex_migrations_lock WHERE is_locked <> 0').get() !== undefined) return false;
    const recorded = new Set(db.prepare('SELECT name FROM knex_migrations').pluck().all() as string[]);
    return recorded.size === list.length && list.every((migration) => recorded.has(migration.name));
  } catch {
    // Not readable as books: knex opens them again and says why.
    return false;
  } finally {
    db?.close();
  }
}

/**
 * Brings the database file at `path` up to the latest schema. Safe to run repeatedly: books
 * that are current already are told by one query, without loading knex.
 * `after` runs further migrations after the real ones: tests use it to exercise a migration
 * (a table rebuild, say) on a books file the real list has produced.
 */
export async function migrateLatest(path: string, after: readonly MigrationEntry[] = []): Promise<MigrateResult> {
  // Made here, not by knex's driver: SQLite would create the books with the umask's mode.
  ensurePrivateDatabaseFile(path);
  const list = [...migrations, ...after];
  if (alreadyCurrent(path, list)) return { applied: [] };
  // Loaded only when there is something for it to do: it is the largest part of a command's start.
  const { default: knexFactory } = await import('knex');
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
    const [, applied] = (await knex.migrate.latest({ migrationSource: migrationSource(list) })) as [number, string[]];
    return { applied };
  } finally {
    await knex.destroy();
  }
}
