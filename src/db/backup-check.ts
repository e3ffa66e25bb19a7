import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { migrations } from './migrations/index.js';
import { BackupRefused } from './backup-refusal.js';
import type { Db } from './connection.js';
import { integrityFindings, judgeIntegrity } from './integrity.js';

/**
 * Whether a file is Daybook's books, whole, and not from a newer Daybook, and what it holds:
 * what a restore checks of the file it is given (on the copy it renames into place), and what
 * checkBackupFile reports of a backup. Reads only.
 */

/** What a backup file holds, as found by checkBackupFile. */
export interface BackupCheck {
  path: string;
  bytes: number;
  /** The migrations its schema has, in the order they ran. */
  migrations: string[];
  /** The migrations this version applies when a server next starts on it (none when it is current). */
  pendingMigrations: string[];
  tenants: number;
  businesses: number;
  journalEntries: number;
  /** The latest journal entry's date, null when there is none. */
  lastEntryDate: string | null;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
const KNOWN_MIGRATIONS = new Set(migrations.map((migration) => migration.name));
/** knex's default name for its migration history table. */
const MIGRATIONS_TABLE = 'knex_migrations';

/**
 * Checks that the file at `path` is Daybook's books, whole, and not from a newer Daybook, and
 * says what it holds. Reads only: the file is opened read-only, and the log files SQLite may
 * create beside it for that are removed again.
 */
export function checkBackupFile(path: string): BackupCheck {
  refuseFileInUse(path);
  return inspectBackupFile(path, path);
}

/** Opens and checks `path`; messages name `shownAs` (the file the operator gave, not a copy of it). */
export function inspectBackupFile(path: string, shownAs: string): BackupCheck {
  refuseNonSqlite(path, shownAs);
  const bytes = statSync(path).size;
  const found = readOnly(path, shownAs, (db) => {
    judgeIntegrity(integrityFindings(db), shownAs);
    const tables = new Set((db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]));
    for (const table of [MIGRATIONS_TABLE, 'journal_entries', 'businesses']) {
      if (!tables.has(table)) throw new BackupRefused('not_daybook', `${shownAs} is a SQLite database but not Daybook's books (it has no ${table} table)`);
    }
    // Before the tenants migration the firms' table was called accounts.
    const tenantsTable = tables.has('tenants') ? 'tenants' : 'accounts';
    const count = (table: string) => (tables.has(table) ? Number(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get()) : 0);
    return {
      migrations: db.prepare(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`).pluck().all() as string[],
      tenants: count(tenantsTable),
      businesses: count('businesses'),
      journalEntries: count('journal_entries'),
      lastEntryDate: (db.prepare('SELECT max(entry_date) FROM journal_entries').pluck().get() as string | null) ?? null,
    };
  });
  const unknown = found.migrations.find((name) => !KNOWN_MIGRATIONS.has(name));
  if (unknown !== undefined) {
    throw new BackupRefused(
      'newer_version',
      `${shownAs} was written by a newer version of Daybook (its schema has migration ${unknown}, which this version does not know); upgrade Daybook, then restore it`,
    );
  }
  const applied = new Set(found.migrations);
  const pendingMigrations = migrations.map((migration) => migration.name).filter((name) => !applied.has(name));
  return { path: shownAs, bytes, ...found, pendingMigrations };
}

/** Refuses anything at `path` but a file that starts with SQLite's header, before SQLite opens it. */
export function refuseNonSqlite(path: string, shownAs = path): void {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    throw new BackupRefused('missing', `no file at ${shownAs}`);
  }
  if (stats.isDirectory()) throw new BackupRefused('missing', `${shownAs} is a folder, not a backup file`);
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, 'r');
  try {
    const read = readSync(fd, header, 0, header.length, 0);
    if (read < header.length || !header.equals(SQLITE_HEADER)) {
      throw new BackupRefused('not_sqlite', `${shownAs} is not a SQLite database (it does not start with SQLite's header)`);
    }
  } finally {
    closeSync(fd);
  }
}

/** A write-ahead log holding writes beside the file means the file alone is not the whole database. */
export function refuseFileInUse(path: string): void {
  let walBytes = 0;
  try {
    walBytes = statSync(`${path}-wal`).size;
  } catch {
    return;
  }
  if (walBytes > 0) {
    throw new BackupRefused(
      'file_in_use',
      `${path}-wal lies beside ${path}: the file is open in a server, or was copied while one was; make a backup with daybook backup and restore that`,
    );
  }
}

/**
 * Runs `read` on a read-only connection to `path`. Opening a file in WAL mode read-only makes
 * SQLite create its log files beside it; those it created are removed again afterwards.
 */
function readOnly<T>(path: string, shownAs: string, read: (db: Db) => T): T {
  const logs = [`${path}-wal`, `${path}-shm`].filter((log) => !existsSync(log));
  let db: Db;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupRefused('damaged', `${shownAs} is damaged: SQLite cannot open it (${(error as Error).message})`);
  }
  try {
    return read(db);
  } finally {
    db.close();
    for (const log of logs) rmSync(log, { force: true });
  }
}
