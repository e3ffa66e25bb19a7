import Database from 'better-sqlite3';
import { ensurePrivateDatabaseFile } from './private-files.js';

/**
 * One server per books file. Two would each run the job pool (every job twice), and the one
 * starting would free the idempotency claims of the one running (start-up frees claims left
 * by a process that died).
 *
 * The lock is an exclusive SQLite lock on a small file beside the books (`<books>.lock`), held
 * for the server's whole life. The kernel drops it the moment its process ends, however it
 * ends, so there is no stale lock to judge, no window between creating a file and writing an
 * owner into it, and it holds across containers sharing a volume, whose process ids mean
 * nothing to each other.
 */

/**
 * The lock connections held now. A connection nothing refers to is closed when it is garbage
 * collected (better-sqlite3 13), which would drop its lock: holding them here keeps each lock
 * until its release is called, whether or not the caller keeps the connection reachable.
 */
const heldLocks = new Set<Database.Database>();

export class ServerLockError extends Error {
  override name = 'ServerLockError';
}

export function lockPath(booksPath: string): string {
  return `${booksPath}.lock`;
}

/** Takes the books file's server lock, or throws ServerLockError at once. Returns the release. */
export function acquireServerLock(booksPath: string): () => void {
  if (booksPath === ':memory:') return () => {};
  const path = lockPath(booksPath);
  ensurePrivateDatabaseFile(path);
  // No busy timeout: a held lock is an answer, not something to wait for.
  const lock = new Database(path, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new ServerLockError(`another daybook server is serving ${booksPath} (it holds ${path}); stop it first`);
    }
    throw error;
  }
  heldLocks.add(lock);
  return () => {
    if (!heldLocks.delete(lock)) return;
    lock.close();
  };
}
