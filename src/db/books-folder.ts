import { randomUUID } from 'node:crypto';
import { closeSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError } from '../config.js';
import { createPrivateFile, ensurePrivateFolder } from './private-files.js';

/**
 * Makes sure the folder of the books exists (made 0700 when missing) and takes new files
 * (SQLite writes its journal and lock files beside the books), or stops start-up with one line
 * naming the setting. A file is written and removed to find out: the permission bits alone do
 * not say (a read-only mount refuses root too; root passes any permission check).
 */
export function ensureWritableBooksFolder(booksPath: string): void {
  if (booksPath === ':memory:') return;
  const folder = dirname(booksPath);
  // A name of its own each time: two processes (both PID 1 in containers) never share one,
  // and a probe left by a killed process cannot block a later start.
  const probe = join(folder, `.daybook-write-check-${randomUUID()}`);
  try {
    ensurePrivateFolder(folder);
    closeSync(createPrivateFile(probe));
  } catch (error) {
    throw new ConfigError(`DAYBOOK_DB: the folder ${folder} cannot hold the books: ${whyNot(error as NodeJS.ErrnoException)}; give a writable folder (--db or DAYBOOK_DB)`);
  } finally {
    removeProbe(probe);
  }
}

/** The probe goes whatever happened; where the folder itself is missing there is nothing to remove. */
function removeProbe(probe: string): void {
  try {
    rmSync(probe, { force: true });
  } catch {
    // ENOTDIR or EACCES: the probe was never made.
  }
}

function whyNot(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'EEXIST':
    case 'ENOTDIR':
      return 'a file is in the way of that path';
    case 'EACCES':
    case 'EPERM':
      return 'this user may not write there';
    case 'EROFS':
      return 'it is on a read-only file system';
    default:
      return `${error.code ?? 'error'}: ${error.message}`;
  }
}
