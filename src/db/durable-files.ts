import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replacing a file so that a crash leaves either the old file or the whole new one: the new one
 * is written under a temporary name beside its target (same folder, so the rename is atomic),
 * flushed, renamed into place, and the folder flushed so the rename itself survives.
 */

/** A hidden name in `path`'s folder, unique to one attempt: `.books.sqlite.restore-1a2b3c4d5e6f.tmp`. */
export function temporaryBeside(path: string, purpose: string): string {
  return join(dirname(path), `.${basename(path)}.${purpose}-${randomBytes(6).toString('hex')}.tmp`);
}

/** Removes a temporary file and any log SQLite left beside it; what is not there is skipped. */
export function removeTemporary(temporary: string): void {
  for (const file of [temporary, `${temporary}-wal`, `${temporary}-shm`, `${temporary}-journal`]) rmSync(file, { force: true });
}

/** Flushes the file at `path` to disk on the calling thread. */
export function syncFile(path: string): void {
  fsyncOpened(path, 'r+');
}

/** Flushes the file at `path` to disk off the event loop: on large files a flush takes a while. */
export async function flushFile(path: string): Promise<void> {
  const file = await open(path, 'r+');
  try {
    await file.sync();
  } finally {
    await file.close();
  }
}

/** A rename is durable once the folder holding it is flushed. */
export function syncFolder(path: string): void {
  // A folder opens read-only, never for writing.
  fsyncOpened(path, 'r');
}

function fsyncOpened(path: string, flags: 'r' | 'r+'): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
