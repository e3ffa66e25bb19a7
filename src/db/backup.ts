import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readSync, realpathSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { migrations } from './migrations/index.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { startWorker } from '../threads.js';
import type { Db } from './connection.js';
import { INTEGRITY_FAULTS_SHOWN, type IntegrityFindings, integrityFindings } from './integrity.js';
import { copyToPrivateFile, createPrivateFile, ensurePrivateFolder, exposureWarning, keepStricterMode } from './private-files.js';
import { acquireServerLock, lockPath, ServerLockError } from './server-lock.js';

/**
 * Backups of the books file, and restoring one. Plain functions of a path or a connection:
 * the CLI and the job pool call them, nothing here knows of either.
 *
 * A backup is SQLite's online backup (better-sqlite3's `backup()`), so the server keeps
 * serving while it runs. It is written under a temporary name beside its destination, made a
 * single self-contained file (rollback journal, no `-wal` beside it), checked with
 * `integrity_check` and `foreign_key_check`, flushed to disk, and only then renamed into
 * place: a file with the final name is always a whole, checked backup. Backups and restored
 * books are 0600, or stricter where the file they replace was (src/db/private-files.ts).
 */

/** Why a backup or a restore was refused; the CLI branches on the code, never on the message. */
export type BackupRefusal =
  /** The file to restore does not exist, or is a folder. */
  | 'missing'
  /** The file does not start with SQLite's header. */
  | 'not_sqlite'
  /** integrity_check or foreign_key_check found a fault, or SQLite could not read the file. */
  | 'damaged'
  /** A SQLite database, but not Daybook's books (no migration history or no journal). */
  | 'not_daybook'
  /** Written by a newer Daybook: its schema has migrations this version does not know. */
  | 'newer_version'
  /** A write-ahead log lies beside the file: it is open in a server, or was copied while it was. */
  | 'file_in_use'
  /** The backup would be written over the books (or a file SQLite keeps beside them). */
  | 'same_as_books'
  /** A server holds the books file's lock. */
  | 'server_running'
  /** The books file exists and replacing it was not asked for. */
  | 'books_exist'
  /** Another process has the books file open. */
  | 'books_in_use';

export class BackupRefused extends Error {
  override name = 'BackupRefused';
  constructor(
    readonly code: BackupRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface BackupResult {
  /** The backup file, as given. */
  path: string;
  bytes: number;
  pages: number;
  integrity: 'ok';
  durationMs: number;
}

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

export interface BackupOptions {
  /** Called between the steps of the copy: how far it has got. Writes made here go on as the server's would. */
  onProgress?: (progress: { totalPages: number; remainingPages: number }) => void;
}

export interface RestoreOptions {
  /** Replace a books file that exists. Without it, existing books are never touched. */
  replaceExisting?: boolean;
  /** Called once the file has passed every check, just before the books are replaced. */
  onChecked?: (check: BackupCheck) => void;
  /** The caller holds the books' server lock already (lockBooksForRestore) and releases it. */
  lockHeld?: boolean;
}

export interface RestoreResult {
  /** The books file now holding the backup. */
  path: string;
  from: string;
  bytes: number;
  /** Whether books existed at `path` and were replaced. */
  replaced: boolean;
  check: BackupCheck;
  durationMs: number;
}

export interface ScheduledBackupContext {
  db: Db;
  clock: Clock;
  /** The folder backups go to; made 0700 when missing, left as it is (and warned of when open to others) when not. */
  dir: string;
  /** How many scheduled backups to keep (the newest); 1 to 1000. */
  keep: number;
  log: Logger;
}

export interface ScheduledBackupResult {
  /** The file written, a path inside `dir`. */
  file: string;
  bytes: number;
  /** Older scheduled backups removed to keep `keep`, oldest first. */
  removed: string[];
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** Pages copied per step of an online backup: 1 MiB at SQLite's default page size, a few milliseconds of the event loop. */
const STEP_PAGES = 250;
/** The scheduled backups' names, and nothing else: retention never touches any other file. */
export const SCHEDULED_BACKUP_NAME = /^daybook-[0-9]{8}-[0-9]{6}\.sqlite$/;
const KNOWN_MIGRATIONS = new Set(migrations.map((migration) => migration.name));
/** knex's default name for its migration history table. */
const MIGRATIONS_TABLE = 'knex_migrations';

/**
 * Writes an online backup of `db` to `toPath` (replaced if it exists). The server may keep
 * writing meanwhile: writes through `db` itself are carried into the backup as it goes; a write
 * through another connection makes SQLite start the copy again, so after twice the steps a clean
 * copy needs, the rest is copied in one step (a read transaction, which in WAL mode does not
 * hold up writers). Throws BackupRefused('damaged') and leaves `toPath` as it was when the copy
 * fails its checks.
 */
export async function backupBooks(db: Db, toPath: string, options: BackupOptions = {}): Promise<BackupResult> {
  // Elapsed time only, never a date: a measurement, not "now".
  const started = performance.now();
  refuseBooksFiles(db, toPath);
  const temporary = temporaryBeside(toPath, 'backup');
  try {
    // Made before SQLite copies into it, which would create it with the umask's mode.
    closeSync(createPrivateFile(temporary));
    let steps = 0;
    const { totalPages } = await db.backup(temporary, {
      progress: ({ totalPages: pages, remainingPages }) => {
        steps += 1;
        options.onProgress?.({ totalPages: pages, remainingPages });
        return steps > 2 * Math.ceil(pages / STEP_PAGES) + 2 ? pages : STEP_PAGES;
      },
    });
    const shownAs = `the backup of ${db.name}`;
    // Flushed off the event loop first: the switch to a single file flushes it again, on the
    // caller's thread, and on large books that would hold up the requests the server is answering.
    await flushFile(temporary);
    singleFile(temporary, shownAs);
    judgeIntegrity(await integrityInWorker(temporary), shownAs);
    await flushFile(temporary);
    keepStricterMode(temporary, toPath);
    renameSync(temporary, toPath);
    syncFolder(dirname(toPath));
    const bytes = statSync(toPath).size;
    if (bytes <= 0) throw new Error(`backupBooks: ${toPath} is empty after the rename`);
    return { path: toPath, bytes, pages: totalPages, integrity: 'ok', durationMs: elapsedSince(started) };
  } finally {
    removeTemporary(temporary);
  }
}

/**
 * Checks that the file at `path` is Daybook's books, whole, and not from a newer Daybook, and
 * says what it holds. Reads only: the file is opened read-only, and the log files SQLite may
 * create beside it for that are removed again.
 */
export function checkBackupFile(path: string): BackupCheck {
  refuseFileInUse(path);
  return inspect(path, path);
}

/** Takes the books' server lock for a restore; a running server makes this refuse. Returns the release. */
export function lockBooksForRestore(booksPath: string): () => void {
  try {
    return acquireServerLock(booksPath);
  } catch (error) {
    if (!(error instanceof ServerLockError)) throw error;
    throw new BackupRefused(
      'server_running',
      `cannot restore over ${booksPath}: a daybook server is running on it (it holds the lock on ${lockPath(booksPath)}); stop the server first`,
    );
  }
}

/**
 * Replaces the books file at `booksPath` with the backup at `fromPath`, holding the books
 * file's server lock throughout, so no server can start on the books meanwhile and a running
 * one makes this refuse. The backup is copied beside the books and the copy checked (the bytes
 * checked are the bytes restored), flushed, and renamed over the books. The old books' log files
 * go before the rename: a stale write-ahead log must never be replayed into the restored file.
 * A caller that has more to do before a server may start (migrate, record the restore) takes
 * the lock itself with lockBooksForRestore and passes `lockHeld`.
 */
export function restoreBooks(fromPath: string, booksPath: string, options: RestoreOptions = {}): RestoreResult {
  if (booksPath === ':memory:') throw new Error('restoreBooks: the books must be a file');
  const started = performance.now();
  const releaseLock = options.lockHeld === true ? () => {} : lockBooksForRestore(booksPath);
  const temporary = temporaryBeside(booksPath, 'restore');
  try {
    if (sameFile(fromPath, booksPath)) throw new BackupRefused('same_as_books', `${fromPath} is the books file itself`);
    refuseFileInUse(fromPath);
    refuseNonSqlite(fromPath);
    copyToPrivateFile(fromPath, temporary);
    syncFile(temporary);
    const check = { ...inspect(temporary, fromPath), path: fromPath };
    const replaced = existsSync(booksPath);
    if (replaced && options.replaceExisting !== true) {
      throw new BackupRefused('books_exist', `${booksPath} holds books already; restoring ${fromPath} would replace them`);
    }
    options.onChecked?.(check);
    if (replaced) closeOldBooks(booksPath);
    keepStricterMode(temporary, booksPath);
    for (const log of [`${booksPath}-wal`, `${booksPath}-shm`]) rmSync(log, { force: true });
    renameSync(temporary, booksPath);
    syncFolder(dirname(booksPath));
    if (existsSync(`${booksPath}-wal`)) {
      throw new Error(`another process opened ${booksPath} during the restore and left ${booksPath}-wal beside it; stop it, then restore again`);
    }
    return { path: booksPath, from: fromPath, bytes: statSync(booksPath).size, replaced, check, durationMs: elapsedSince(started) };
  } finally {
    removeTemporary(temporary);
    releaseLock();
  }
}

/**
 * The daily backup: `daybook-YYYYMMDD-HHMMSS.sqlite` (UTC, from the clock) in `dir`, then the
 * oldest files of exactly that name pattern beyond `keep` are removed. The file just written is
 * always kept, and nothing is removed when the backup fails.
 */
export async function runScheduledBackup(context: ScheduledBackupContext): Promise<ScheduledBackupResult> {
  const { dir, keep, log } = context;
  if (!Number.isInteger(keep) || keep < 1 || keep > 1000) throw new Error(`runScheduledBackup: keep must be 1 to 1000, not ${keep}`);
  ensurePrivateFolder(dir);
  // Said on every run, not only the first: the folder may have been opened since.
  const exposed = exposureWarning(dir, 'the backup folder');
  if (exposed !== null) log.warn({ dir }, exposed);
  const name = scheduledBackupName(context.clock.now());
  const file = join(dir, name);
  const backup = await backupBooks(context.db, file);
  const older = readdirSync(dir)
    .filter((entry) => SCHEDULED_BACKUP_NAME.test(entry) && entry !== name)
    .sort();
  const removed: string[] = [];
  for (const entry of older.slice(0, Math.max(0, older.length - (keep - 1)))) {
    try {
      unlinkSync(join(dir, entry));
      removed.push(join(dir, entry));
    } catch (error) {
      // The new backup stands; an old one that cannot go is the operator's to look at.
      log.warn({ file: join(dir, entry), err: error }, 'old backup not removed');
    }
  }
  log.info({ file, bytes: backup.bytes, pages: backup.pages, durationMs: backup.durationMs, removed }, 'backup written and checked');
  return { file, bytes: backup.bytes, removed };
}

/** daybook-20260315-021500.sqlite for 2026-03-15T02:15:00Z. */
export function scheduledBackupName(at: Date): string {
  const iso = at.toISOString();
  const name = `daybook-${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}.sqlite`;
  if (!SCHEDULED_BACKUP_NAME.test(name)) throw new Error(`scheduledBackupName: ${name} breaks the pattern`);
  return name;
}

/** Opens and checks `path`; messages name `shownAs` (the file the operator gave, not a copy of it). */
function inspect(path: string, shownAs: string): BackupCheck {
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

/** integrityFindings on a worker thread (integrity-worker.ts): the server answers requests meanwhile. */
function integrityInWorker(path: string): Promise<IntegrityFindings> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const worker = startWorker(import.meta.url, 'integrity-worker', { workerData: { path } });
    worker.once('message', (findings: IntegrityFindings) => {
      answered = true;
      resolve(findings);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the integrity check of ${path} ended (exit ${code}) without an answer`));
    });
  });
}

/** Throws BackupRefused('damaged') for anything but a clean bill of health. */
function judgeIntegrity(findings: IntegrityFindings, shownAs: string): void {
  if (findings.stopped !== null) {
    const { check, message } = findings.stopped;
    const what = check === 'open' ? 'SQLite cannot open it' : `${check} stopped at a fault`;
    throw new BackupRefused('damaged', `${shownAs} is damaged: ${what} (${message})`);
  }
  const faults = findings.faults.map((fault) => fault.replace(/\s*\n\s*/g, ' '));
  if (faults.length !== 1 || faults[0] !== 'ok') {
    const more = faults.length > 1 ? ` and ${faults.length - 1} more${faults.length === INTEGRITY_FAULTS_SHOWN ? ' at least' : ''}` : '';
    throw new BackupRefused('damaged', `${shownAs} is damaged: integrity_check found ${faults[0] ?? 'nothing to say'}${more}`);
  }
  const first = findings.orphans[0];
  if (first) {
    const count = findings.orphans.length;
    throw new BackupRefused(
      'damaged',
      `${shownAs} is damaged: ${count} ${count === 1 ? 'row points' : 'rows point'} at rows that do not exist (foreign_key_check; the first in ${first.table}, row ${first.rowid}, to ${first.parent})`,
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

function refuseNonSqlite(path: string, shownAs = path): void {
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

/**
 * A fresh copy carries the books' WAL flag; switching it to a rollback journal makes it one
 * self-contained file that opens read-only without SQLite creating a log beside it.
 */
function singleFile(path: string, shownAs: string): void {
  let copy: Db | undefined;
  try {
    copy = new Database(path, { fileMustExist: true });
    copy.pragma('journal_mode = DELETE');
  } catch (error) {
    throw new BackupRefused('damaged', `${shownAs} is damaged: SQLite cannot read it (${(error as Error).message})`);
  } finally {
    copy?.close();
  }
}

/** A write-ahead log holding writes beside the file means the file alone is not the whole database. */
function refuseFileInUse(path: string): void {
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

/** The backup must not land on the books or any file SQLite keeps beside them. */
function refuseBooksFiles(db: Db, toPath: string): void {
  if (db.memory) return;
  const books = db.name;
  for (const file of [books, `${books}-wal`, `${books}-shm`, `${books}-journal`, lockPath(books)]) {
    if (sameFile(toPath, file)) throw new BackupRefused('same_as_books', `${toPath} is ${file === books ? 'the books file itself' : `${file}, kept beside the books`}`);
  }
}

/**
 * Whether two paths name the same file, following symbolic links in their folders. A path
 * whose folder does not exist names no file that exists.
 */
function sameFile(a: string, b: string): boolean {
  const canonical = (path: string) => {
    try {
      return join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      return resolve(path);
    }
  };
  if (canonical(a) === canonical(b)) return true;
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * Opens the old books alone and closes them: SQLite then folds their log into the file and
 * removes it. An exclusive lock that cannot be had means another process has them open (a
 * daybook command); a file SQLite cannot read is broken books being replaced, which is fine.
 */
function closeOldBooks(booksPath: string): void {
  let db: Db | undefined;
  try {
    db = new Database(booksPath, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      db?.close();
      throw new BackupRefused('books_in_use', `another process has ${booksPath} open (a daybook command still running?); let it finish, then restore`);
    }
  }
  db?.close();
}

function temporaryBeside(path: string, purpose: string): string {
  return join(dirname(path), `.${basename(path)}.${purpose}-${randomBytes(6).toString('hex')}.tmp`);
}

function removeTemporary(temporary: string): void {
  for (const file of [temporary, `${temporary}-wal`, `${temporary}-shm`, `${temporary}-journal`]) rmSync(file, { force: true });
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function flushFile(path: string): Promise<void> {
  const file = await open(path, 'r+');
  try {
    await file.sync();
  } finally {
    await file.close();
  }
}

/** A rename is durable once the folder holding it is flushed. */
function syncFolder(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
