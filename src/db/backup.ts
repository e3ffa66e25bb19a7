import Database from 'better-sqlite3';
import { closeSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { BackupRefused } from './backup-refusal.js';
import type { Db } from './connection.js';
import { flushFile, removeTemporary, syncFolder, temporaryBeside } from './durable-files.js';
import { elapsedSince } from '../elapsed.js';
import { integrityInWorker, judgeIntegrity } from './integrity.js';
import { createPrivateFile, keepStricterMode } from './private-files.js';
import { lockPath } from './server-lock.js';
import { sameFile } from './same-file.js';

/**
 * The online backup of the books file: a plain function of a connection and a path, which the
 * CLI (`daybook backup`) and the daily job (scheduled-backup.ts) call.
 *
 * A backup is SQLite's online backup (better-sqlite3's `backup()`), so the server keeps
 * serving while it runs. It is written under a temporary name beside its destination, made a
 * single self-contained file (rollback journal, no `-wal` beside it), checked with
 * `integrity_check` and `foreign_key_check`, flushed to disk, and only then renamed into
 * place: a file with the final name is always a whole, checked backup. Backups are 0600, or
 * stricter where the file they replace was (src/db/private-files.ts).
 */

export interface BackupResult {
  /** The backup file, as given. */
  path: string;
  bytes: number;
  pages: number;
  integrity: 'ok';
  durationMs: number;
}

export interface BackupOptions {
  /** Called between the steps of the copy: how far it has got. Writes made here go on as the server's would. */
  onProgress?: (progress: { totalPages: number; remainingPages: number }) => void;
}

/** Pages copied per step of an online backup: 1 MiB at SQLite's default page size, a few milliseconds of the event loop. */
const STEP_PAGES = 250;

/**
 * Writes an online backup of `db` to `toPath` (replaced if it exists). The server may keep
 * writing meanwhile: writes through `db` itself are carried into the backup as it goes; a write
 * through another connection makes SQLite start the copy again, so after twice the steps a clean
 * copy needs, the rest is copied in one step (a read transaction, which in WAL mode does not
 * hold up writers). Throws BackupRefused('damaged') and leaves `toPath` as it was when the copy
 * fails its checks.
 */
export async function backupBooks(db: Db, toPath: string, options: BackupOptions = {}): Promise<BackupResult> {
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

/** The backup must not land on the books or any file SQLite keeps beside them. */
function refuseBooksFiles(db: Db, toPath: string): void {
  if (db.memory) return;
  const books = db.name;
  for (const file of [books, `${books}-wal`, `${books}-shm`, `${books}-journal`, lockPath(books)]) {
    if (sameFile(toPath, file)) throw new BackupRefused('same_as_books', `${toPath} is ${file === books ? 'the books file itself' : `${file}, kept beside the books`}`);
  }
}
