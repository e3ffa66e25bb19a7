import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Db, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { ensureServerSecrets } from '../../src/books/secrets.js';
import { fixedClock } from '../../src/clock.js';

export interface TempDb {
  db: Db;
  path: string;
  dir: string;
  close(): void;
}

/** A fresh, fully migrated SQLite file in its own temporary folder. */
export async function freshDb(): Promise<TempDb> {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-test-'));
  const path = join(dir, 'books.sqlite');
  await migrateLatest(path);
  const db = openDb(path, { synchronous: 'normal' });
  ensureServerSecrets(db, fixedClock('2026-03-15T12:00:00.000Z'));
  return {
    db,
    path,
    dir,
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
