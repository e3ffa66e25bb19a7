import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from './config.js';
import { migrateLatest } from './db/migrate.js';

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
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const path = join(dir, 'books.sqlite');
    copyFileSync(await migratedTemplate(), path);
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

let template: Promise<string> | undefined;

/** Books with every migration applied, made once per process and copied for each server. */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'daybook-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'books.sqlite');
    await migrateLatest(path);
    return path;
  })();
  // A failed migration is not kept: the next server tries again.
  template.catch(() => (template = undefined));
  return template;
}
