import type { Statement } from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { counterStorePath, type Db, inTransaction, openDb } from '../db/connection.js';
import { RATE_WINDOW_SECONDS } from '../books/plans.js';

/**
 * Request counters in fixed windows, counted in memory and written through to their own SQLite
 * file beside the books (`*.counters.sqlite`, synchronous=OFF) in batches.
 *
 * Why in memory: a SQLite write per request took a fifth of the server's time under load. The
 * file stays the store of record: a window not yet in memory is read from it, so a restart
 * keeps the counts, and windows counted since the last batch are written every
 * FLUSH_INTERVAL_MS and at close. A crash loses at most that interval's counts (in the
 * client's favour; budgets are abuse guards, not billing).
 *
 * Why not a library: time must come from our Clock so tests step through windows without
 * sleeping, and the limiters at hand read the system time.
 *
 * A window opens with the subject's first request and lasts RATE_WINDOW_SECONDS; the count
 * starts again from the first request after it ended.
 */

export const RATE_LIMIT_TABLE = 'rate_limits';

/** How often counted windows are written to the file. */
export const FLUSH_INTERVAL_MS = 250;

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;

/** How long a write waits for another process (the cleanup job) to release the counter file. */
const BUSY_WAIT_MS = 50;

export interface WindowUsage {
  /** Requests counted in the current window, this one included. */
  used: number;
  /** Milliseconds until the window ends. */
  msBeforeReset: number;
}

interface Window {
  used: number;
  /** Epoch milliseconds at which the window ends. */
  endsAt: number;
  /** Counted since the window was last written. */
  unwritten: number;
}

interface StoredWindow {
  points: number;
  expire: number;
}

interface Statements {
  read: Statement<[string, number], StoredWindow>;
  /** Adds to the stored window when it is the same one, else replaces it. */
  write: Statement<[string, number, number]>;
  clearEnded: Statement<[number]>;
  size: Statement<[], { n: number }>;
}

/** Opens (creating when missing) the counter file for the books file at `booksPath`. */
function openCounterFile(booksPath: string): Db {
  const db = openDb(counterStorePath(booksPath), { synchronous: 'off', bigints: false });
  // A write waits on the event loop: better to try again at the next batch than to stall requests.
  db.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
  db.exec(`CREATE TABLE IF NOT EXISTS ${RATE_LIMIT_TABLE} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`);
  db.exec(`CREATE INDEX IF NOT EXISTS ${RATE_LIMIT_TABLE}_expire ON ${RATE_LIMIT_TABLE}(expire)`);
  return db;
}

function prepareStatements(db: Db): Statements {
  return {
    read: db.prepare(`SELECT points, expire FROM ${RATE_LIMIT_TABLE} WHERE key = ? AND expire > ?`),
    write: db.prepare(`INSERT INTO ${RATE_LIMIT_TABLE} (key, points, expire) VALUES (?, ?, ?)
      ON CONFLICT(key) DO UPDATE SET
        points = CASE WHEN expire = excluded.expire THEN points + excluded.points ELSE excluded.points END,
        expire = excluded.expire`),
    clearEnded: db.prepare(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire <= ?`),
    size: db.prepare(`SELECT count(*) AS n FROM ${RATE_LIMIT_TABLE}`),
  };
}

/** One kind of counter (reads, writes, failed authentications) in the shared store. */
export class RequestCounter {
  readonly #store: CounterStore;
  readonly #prefix: string;

  constructor(store: CounterStore, kind: string) {
    this.#store = store;
    this.#prefix = `${kind}:`;
  }

  /** Counts one request for `subject` and answers the window's usage, this request included. */
  count(subject: string): WindowUsage {
    return this.#store.count(this.#prefix + subject);
  }
}

/** The counters file and the three counters kept in it: reads and writes per key, failed authentications per address. */
export class CounterStore {
  readonly reads: RequestCounter;
  readonly writes: RequestCounter;
  readonly authFailures: RequestCounter;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #statements: Statements;
  readonly #windows = new Map<string, Window>();
  readonly #unwritten = new Set<string>();
  #flushTimer: NodeJS.Timeout | null = null;

  constructor(booksPath: string, clock: Clock) {
    this.#db = openCounterFile(booksPath);
    this.#clock = clock;
    this.#statements = prepareStatements(this.#db);
    this.reads = new RequestCounter(this, 'read');
    this.writes = new RequestCounter(this, 'write');
    this.authFailures = new RequestCounter(this, 'authfail');
  }

  /** Counts one request against the window stored under `key`. */
  count(key: string): WindowUsage {
    const now = this.#clock.now().getTime();
    let window = this.#windows.get(key) ?? this.#readStored(key, now);
    if (window.endsAt <= now) window = { used: 0, endsAt: now + WINDOW_MS, unwritten: 0 };
    this.#windows.set(key, window);
    window.used += 1;
    window.unwritten += 1;
    this.#unwritten.add(key);
    this.#scheduleFlush();
    return { used: window.used, msBeforeReset: window.endsAt - now };
  }

  /**
   * Writes every window counted since the last write, in one transaction; ended windows leave
   * memory. When the write fails, the counts stay in memory for the next one.
   */
  flush(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    const batch = [...this.#unwritten].flatMap((key) => {
      const window = this.#windows.get(key);
      return window && window.unwritten > 0 ? [[key, window] as const] : [];
    });
    if (batch.length > 0) {
      inTransaction(this.#db, () => {
        for (const [key, window] of batch) this.#statements.write.run(key, window.unwritten, window.endsAt);
      });
      for (const [, window] of batch) window.unwritten = 0;
    }
    this.#unwritten.clear();
    this.#forgetEnded(this.#clock.now().getTime());
  }

  /** Drops every window that ended at or before `beforeMs`; the cleanup job runs it. */
  clearEnded(beforeMs: number): number {
    this.flush();
    this.#forgetEnded(beforeMs);
    return Number(this.#statements.clearEnded.run(beforeMs).changes);
  }

  /** Windows in the file (ended or not), after writing the ones counted since the last write. */
  size(): number {
    this.flush();
    return this.#statements.size.get()?.n ?? 0;
  }

  /** Writes what is counted and closes the file. */
  close(): void {
    if (!this.#db.open) return;
    this.flush();
    this.#db.close();
  }

  #readStored(key: string, now: number): Window {
    const stored = this.#statements.read.get(key, now);
    return stored ? { used: stored.points, endsAt: stored.expire, unwritten: 0 } : { used: 0, endsAt: now, unwritten: 0 };
  }

  #forgetEnded(beforeMs: number): void {
    for (const [key, window] of this.#windows) {
      if (window.endsAt <= beforeMs && window.unwritten === 0) this.#windows.delete(key);
    }
  }

  /** A failed background write (the file busy or full) is tried again later, never thrown. */
  #flushInBackground(): void {
    try {
      this.flush();
    } catch {
      this.#flushTimer = null;
      this.#scheduleFlush();
    }
  }

  #scheduleFlush(): void {
    if (this.#flushTimer) return;
    this.#flushTimer = setTimeout(() => this.#flushInBackground(), FLUSH_INTERVAL_MS);
    this.#flushTimer.unref();
  }
}
