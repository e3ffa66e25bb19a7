import Database from 'better-sqlite3';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { type BackupCheck, inspectBackupFile, refuseFileInUse, refuseNonSqlite } from './backup-check.js';
import { BackupRefused } from './backup-refusal.js';
import type { Db } from './connection.js';
import { removeTemporary, syncFile, syncFolder, temporaryBeside } from './durable-files.js';
import { elapsedSince } from '../elapsed.js';
import { copyToPrivateFile, keepStricterMode } from './private-files.js';
import { acquireServerLock, lockPath, ServerLockError } from './server-lock.js';
import { sameFile } from './same-file.js';

/**
 * Restoring the books from a backup, under the books' server lock. Restored books are 0600, or
 * stricter where the books they replace were (src/db/private-files.ts).
 */

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
    const check = { ...inspectBackupFile(temporary, fromPath), path: fromPath };
    const replaced = existsSync(booksPath);
    if (replaced && options.replaceExisting !== true) {
      throw new BackupRefused('books_exist', `${booksPath} holds books already; restoring ${fromPath} would replace them`);
    }
    options.onChecked?.(check);
    if (replaced) closeOldBooks(booksPath);
    renameOverBooks(temporary, booksPath);
    return { path: booksPath, from: fromPath, bytes: statSync(booksPath).size, replaced, check, durationMs: elapsedSince(started) };
  } finally {
    removeTemporary(temporary);
    releaseLock();
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

/** Renames the checked copy over the books, their log files gone first so none is replayed into it. */
function renameOverBooks(temporary: string, booksPath: string): void {
  keepStricterMode(temporary, booksPath);
  for (const log of [`${booksPath}-wal`, `${booksPath}-shm`]) rmSync(log, { force: true });
  renameSync(temporary, booksPath);
  syncFolder(dirname(booksPath));
  if (existsSync(`${booksPath}-wal`)) {
    throw new Error(`another process opened ${booksPath} during the restore and left ${booksPath}-wal beside it; stop it, then restore again`);
  }
}
