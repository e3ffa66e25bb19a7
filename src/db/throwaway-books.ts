import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '../config.js';
import { migrateLatest } from './migrate.js';
import { PRIVATE_FILE_MODE } from './private-files.js';

/**
 * Books that live as long as one test server: a copy of books migrated once per process, in a
 * temporary folder of their own, and the settings a server over them starts with. Used by
 * `daybook/testing` and by Daybook's own API tests, so both start the same way.
 */

export interface ThrowawayBooks {
  /** The books file, inside a folder nothing else uses. */
  path: string;
  /** Removes the folder and everything SQLite kept beside the books. */
  remove(): void;
}

/** A fresh copy of the migrated books, under a folder whose name starts with `prefix`. */
export async function throwawayBooks(prefix: string): Promise<ThrowawayBooks> {
  const image = await migratedImage();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const path = join(dir, 'books.sqlite');
    writeFileSync(path, image, { mode: PRIVATE_FILE_MODE });
    return { path, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/**
 * A server's settings over throwaway books: loopback on a free port, silent, synchronous=normal
 * (nothing to keep through a power cut), and an exchange-rate address on loopback that refuses
 * at once, so no look-up leaves the machine unless `overrides` points one somewhere.
 */
export function throwawayConfig(booksPath: string, overrides: Partial<Config> = {}): Config {
  return loadConfig({}, { db: booksPath, port: 0, host: '127.0.0.1', logLevel: 'silent', sqliteSynchronous: 'normal', fxProviderUrl: 'http://127.0.0.1:9', ...overrides });
}

/** Every job off its schedule: a test server runs a job when the test asks (runJob). */
export const JOBS_OFF = { jobRates: null, jobOverdue: null, jobOutbox: null, jobBackup: null, jobHousekeeping: null, jobCardPayments: null } as const;

let template: Promise<Buffer> | undefined;

/**
 * The bytes of books with every migration applied, made once per process and written out for
 * each server. Kept in memory, not in a file: a test runner's workers (Vitest, Jest) end
 * without the process's exit event, so a template file would be left behind by each.
 */
function migratedImage(): Promise<Buffer> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'daybook-template-'));
    try {
      const path = join(dir, 'books.sqlite');
      // Closed when it returns, so the write-ahead log is folded into the file.
      await migrateLatest(path);
      return readFileSync(path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  // A failed migration is not kept: the next server tries again.
  template.catch(() => (template = undefined));
  return template;
}
