import Database from 'better-sqlite3';
import type { SqliteSynchronous } from '../config.js';
import { ensurePrivateDatabaseFile } from './private-files.js';

export type Db = Database.Database;

export interface OpenOptions {
  synchronous?: SqliteSynchronous | 'off';
  /** Integers come back as bigint on the books connection, so money never passes through a float. */
  bigints?: boolean;
}

/**
 * Opens a connection with the pragmas set explicitly: WAL, foreign keys, a busy timeout, and
 * synchronous=FULL by default (the driver's WAL default is NORMAL; books need an acknowledged
 * write to survive power loss). A file (books, counters) that is not there yet is made 0600 in a
 * 0700 folder first, so it and the log files SQLite keeps beside it are the owner's alone.
 */
export function openDb(path: string, options: OpenOptions = {}): Db {
  ensurePrivateDatabaseFile(path);
  const db = new Database(path);
  applyPragmas(db, options.synchronous ?? 'full');
  db.defaultSafeIntegers(options.bigints ?? true);
  return db;
}

/**
 * The pragmas every connection to a books file sets. recursive_triggers makes SQLite fire the
 * DELETE triggers of the row an INSERT OR REPLACE removes, so REPLACE cannot rewrite a posted
 * line or an audit row behind the immutability triggers. temp_store=MEMORY keeps SQLite's
 * statement journal in memory: inserting a journal line also updates three stored balances (a
 * trigger), the statement journal that lets that one statement fail alone outgrows SQLite's
 * 64 KiB in-memory spill size, and with temporary files allowed each line paid for writing a
 * temporary file, 200 µs of a posting's 35 (docs/performance.md). It also means a read-only
 * root file system (the image) never needs a writable temporary folder.
 */
export function applyPragmas(db: Pick<Db, 'pragma'>, synchronous: SqliteSynchronous | 'off'): void {
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('recursive_triggers = ON');
  db.pragma('temp_store = MEMORY');
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
}

/**
 * Runs `work` with no busy wait: where another process holds the lock `work` needs, SQLite
 * answers SQLITE_BUSY at once instead of holding up the server's requests for the timeout.
 */
export function withoutWaiting<T>(db: Db, work: () => T): T {
  const timeout = Number(db.pragma('busy_timeout', { simple: true }));
  db.pragma('busy_timeout = 0');
  try {
    return work();
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}

/**
 * Runs `work` in one synchronous transaction (BEGIN IMMEDIATE; a SAVEPOINT when one is open
 * already); nothing awaits inside. For what is not a write to the books: request counters, the
 * outbox's delivery attempts, job runs, Today's signals, stored documents, idempotency expiry.
 * A write to the books goes through the write door (src/door), which opens its own.
 */
export function inTransaction<T>(db: Db, work: () => T): T {
  return db.transaction(work).immediate();
}

/** Connections whose audited writes must be made inside the write door. */
const guarded = new WeakSet<Db>();
/** How many door transactions are open on a connection (a batch holds commands, each in its SAVEPOINT). */
const doorDepth = new WeakMap<Db, number>();

/**
 * From now on, an audited write on `db` (every write to the books appends an audit row) is
 * refused unless the write door opened the transaction it runs in. The server and every CLI
 * command guard the connection they open.
 */
export function guardBookWrites(db: Db): void {
  guarded.add(db);
}

/** The write door's transaction (src/door/door.ts, nowhere else): like inTransaction, marked as the door's. */
export function doorTransaction<T>(db: Db, work: () => T): T {
  doorDepth.set(db, (doorDepth.get(db) ?? 0) + 1);
  try {
    return db.transaction(work).immediate();
  } finally {
    doorDepth.set(db, (doorDepth.get(db) ?? 1) - 1);
  }
}

/**
 * For a write to the books (recordAudit, which every such write calls): inside a transaction,
 * and on a guarded connection inside the write door's.
 */
export function assertBookWrite(db: Db, who: string): void {
  assertInTransaction(db, who);
  if (guarded.has(db) && (doorDepth.get(db) ?? 0) === 0) {
    throw new Error(`${who}: a write to the books must go through the write door (src/door)`);
  }
}

/**
 * For functions whose writes only make sense as part of a larger transaction (a chart written
 * with its business, an audit row with its write): called outside one, they would commit
 * piecemeal, so that is a bug, and it fails loudly.
 */
export function assertInTransaction(db: Db, who: string): void {
  if (!db.inTransaction) throw new Error(`${who}: must run inside the caller's transaction`);
}

/** The request-counter file beside a books file: data/daybook.sqlite -> data/daybook.counters.sqlite. */
export function counterStorePath(booksPath: string): string {
  if (booksPath === ':memory:') return booksPath;
  return booksPath.endsWith('.sqlite') ? `${booksPath.slice(0, -'.sqlite'.length)}.counters.sqlite` : `${booksPath}.counters.sqlite`;
}

/** Every file SQLite keeps for a books file: the file itself, its WAL and shared memory, and its counters. */
export function databaseFiles(booksPath: string): string[] {
  const counters = counterStorePath(booksPath);
  return [booksPath, counters].flatMap((path) => [path, `${path}-wal`, `${path}-shm`]);
}
