import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * One server per books file. Two would each run the job pool (every job twice), and the one
 * starting would free the idempotency claims of the one running (start-up frees claims left
 * by a process that died). The lock is a file beside the books holding the owner's process id
 * and the machine's boot id; a lock whose owner is gone (killed, or from before a reboot) is
 * taken over.
 */

export class ServerLockError extends Error {
  override name = 'ServerLockError';
}

interface LockOwner {
  pid: number;
  bootId: string | null;
}

export function lockPath(booksPath: string): string {
  return `${booksPath}.lock`;
}

/** Takes the books file's server lock, or throws ServerLockError naming the running owner. Returns the release. */
export function acquireServerLock(booksPath: string): () => void {
  if (booksPath === ':memory:') return () => {};
  const path = lockPath(booksPath);
  mkdirSync(dirname(path), { recursive: true });
  const me: LockOwner = { pid: process.pid, bootId: bootId() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(me), { flag: 'wx' });
      return () => releaseIfMine(path, me);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(path);
    if (owner && isAlive(owner, me)) {
      throw new ServerLockError(`another daybook server (process ${owner.pid}) is serving ${booksPath}; stop it first`);
    }
    rmSync(path, { force: true });
  }
  throw new ServerLockError(`could not take the server lock ${path}: another server is starting at the same time`);
}

/** Throws ServerLockError when a live server holds the books file (before deleting or replacing it). */
export function assertNotServed(booksPath: string): void {
  acquireServerLock(booksPath)();
}

function releaseIfMine(path: string, me: LockOwner): void {
  const owner = readOwner(path);
  if (owner && owner.pid === me.pid) rmSync(path, { force: true });
}

function readOwner(path: string): LockOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, bootId: typeof parsed.bootId === 'string' ? parsed.bootId : null } : null;
  } catch {
    // Unreadable or half-written: an owner that died while writing it.
    return null;
  }
}

/**
 * Whether the recorded owner still runs: same boot, and a process with its id exists. Our own
 * id is a previous life of this process's id (a container restarted), not a live owner.
 */
function isAlive(owner: LockOwner, me: LockOwner): boolean {
  if (owner.pid === me.pid) return false;
  if (owner.bootId !== null && me.bootId !== null && owner.bootId !== me.bootId) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The kernel's id of this boot (Linux); null elsewhere, where the process id alone decides. */
function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}
