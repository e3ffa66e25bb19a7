import type { Statement } from 'better-sqlite3';
import { type Clock, todayUtc } from '../clock.js';
import { counterStorePath, type Db, inTransaction, openDb, withoutWaiting } from '../db/connection.js';

/**
 * Request counters in fixed windows, counted in memory and written through to their own SQLite
 * file beside the books (`*.counters.sqlite`, synchronous=OFF) in batches.
 *
 * Why in memory: a SQLite write per request took a fifth of the server's time under load. The
 * file stays the store of record: a window not yet in memory is read from it, so a restart
 * keeps the counts, and windows counted since the last batch are written every
 * FLUSH_INTERVAL_MS and at close. A crash loses at most that interval's counts (in the
 * client's favour; budgets are abuse guards, not billing), or more while writes to the file
 * fail (they are retried, less often each time). Counts are per process: one server serves a
 * books file, and two stores on one file each count their own requests.
 *
 * Why not a library: time must come from our Clock so tests step through windows without
 * sleeping, and the limiters at hand read the system time.
 *
 * A window opens with the subject's first request and lasts RATE_WINDOW_SECONDS; the count
 * starts again from the first request after it ended.
 */

export const RATE_LIMIT_TABLE = 'rate_limits';

/** The day each API key was last used (UTC), for the console's keys page: day precision, written in the same batches. */
export const KEY_USE_TABLE = 'key_use';

/** How long a budget's window lasts: plans (books/plans.ts) give each key a budget per window. */
export const RATE_WINDOW_SECONDS = 600;

/** How often counted windows are written to the file. */
export const FLUSH_INTERVAL_MS = 250;

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;

/** How long the last write, at close, waits for another process to release the file. */
const CLOSE_WAIT_MS = 1_000;

/** Longest wait before a background write that keeps failing is tried again. */
const MAX_RETRY_MS = 8_000;

/**
 * Windows kept in memory at most. Past it, the ones already written leave memory (they are read
 * back from the file when their subject comes again), so many distinct subjects (failed
 * authentications from many addresses) cannot grow the process without bound.
 */
export const MAX_WINDOWS_IN_MEMORY = 20_000;

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
  /** Keeps the later of the stored day and this one. */
  useKey: Statement<[string, string]>;
  keyUsedOn: Statement<[string], { last_used_on: string }>;
}

/** Opens (creating when missing) the counter file for the books file at `booksPath`. */
function openCounterFile(booksPath: string): Db {
  const db = openDb(counterStorePath(booksPath), { synchronous: 'off', bigints: false });
  db.exec(`CREATE TABLE IF NOT EXISTS ${RATE_LIMIT_TABLE} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`);
  db.exec(`CREATE INDEX IF NOT EXISTS ${RATE_LIMIT_TABLE}_expire ON ${RATE_LIMIT_TABLE}(expire)`);
  db.exec(`CREATE TABLE IF NOT EXISTS ${KEY_USE_TABLE} (key_id TEXT PRIMARY KEY, last_used_on TEXT NOT NULL)`);
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
    useKey: db.prepare(`INSERT INTO ${KEY_USE_TABLE} (key_id, last_used_on) VALUES (?, ?)
      ON CONFLICT(key_id) DO UPDATE SET last_used_on = max(last_used_on, excluded.last_used_on)`),
    keyUsedOn: db.prepare(`SELECT last_used_on FROM ${KEY_USE_TABLE} WHERE key_id = ?`),
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

/**
 * The counters file and the counters kept in it: reads and writes per key, failed
 * authentications per address, pay-page requests per address, and console sign-ins per address.
 */
export class CounterStore {
  readonly reads: RequestCounter;
  readonly writes: RequestCounter;
  readonly authFailures: RequestCounter;
  readonly payPages: RequestCounter;
  readonly consoleSignIns: RequestCounter;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #statements: Statements;
  readonly #windows = new Map<string, Window>();
  readonly #unwritten = new Set<string>();
  /** Keys used since the last write, with the day; at most one entry per key. */
  readonly #keysUsed = new Map<string, string>();
  /** The day each key was last written as used, so a key's every request is not a new entry. */
  readonly #keyDaysWritten = new Map<string, string>();
  readonly #onWriteFailure: (error: unknown) => void;
  #flushTimer: NodeJS.Timeout | null = null;
  #retryMs = FLUSH_INTERVAL_MS;

  /** `onWriteFailure` hears the first of a run of failed background writes (the server logs it). */
  constructor(booksPath: string, clock: Clock, onWriteFailure: (error: unknown) => void = () => {}) {
    this.#db = openCounterFile(booksPath);
    this.#clock = clock;
    this.#onWriteFailure = onWriteFailure;
    this.#statements = prepareStatements(this.#db);
    this.reads = new RequestCounter(this, 'read');
    this.writes = new RequestCounter(this, 'write');
    this.authFailures = new RequestCounter(this, 'authfail');
    this.payPages = new RequestCounter(this, 'pay');
    this.consoleSignIns = new RequestCounter(this, 'signin');
  }

  /** Counts one request against the window stored under `key`. */
  count(key: string): WindowUsage {
    const now = this.#clock.now().getTime();
    let window = this.#windows.get(key) ?? this.#readStored(key, now);
    if (window.endsAt <= now) window = { used: 0, endsAt: now + WINDOW_MS, unwritten: 0 };
    if (!this.#windows.has(key) && this.#windows.size >= MAX_WINDOWS_IN_MEMORY) this.#makeRoom(now);
    this.#windows.set(key, window);
    window.used += 1;
    window.unwritten += 1;
    this.#unwritten.add(key);
    this.#scheduleFlush();
    return { used: window.used, msBeforeReset: window.endsAt - now };
  }

  /** Notes that an API key authenticated a request today: memory only, written with the next batch. */
  recordKeyUse(keyId: string): void {
    const today = todayUtc(this.#clock);
    if (this.#keyDaysWritten.get(keyId) === today || this.#keysUsed.get(keyId) === today) return;
    if (this.#keyDaysWritten.size >= MAX_WINDOWS_IN_MEMORY) this.#keyDaysWritten.clear();
    this.#keysUsed.set(keyId, today);
    this.#scheduleFlush();
  }

  /**
   * The day each of `keyIds` was last used (UTC): the stored day, or the one noted since the
   * last write when later; a key never used is absent. Reads only, so a page asking never waits
   * for the file (a write of it may be held by another process).
   */
  keysLastUsed(keyIds: readonly string[]): Map<string, string> {
    const used = new Map<string, string>();
    for (const keyId of keyIds) {
      const stored = this.#db.open ? this.#statements.keyUsedOn.get(keyId)?.last_used_on : undefined;
      const noted = this.#keysUsed.get(keyId);
      const day = stored === undefined ? noted : noted === undefined || stored > noted ? stored : noted;
      if (day !== undefined) used.set(keyId, day);
    }
    return used;
  }

  /**
   * Writes every window counted and every key used since the last write, in one transaction;
   * ended windows leave memory. When the write fails, they stay in memory for the next one.
   */
  flush(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    const batch = [...this.#unwritten].flatMap((key) => {
      const window = this.#windows.get(key);
      return window && window.unwritten > 0 ? [[key, window] as const] : [];
    });
    const keysUsed = [...this.#keysUsed];
    if (batch.length > 0 || keysUsed.length > 0) {
      inTransaction(this.#db, () => {
        for (const [key, window] of batch) this.#statements.write.run(key, window.unwritten, window.endsAt);
        for (const [keyId, day] of keysUsed) this.#statements.useKey.run(keyId, day);
      });
      for (const [, window] of batch) window.unwritten = 0;
      for (const [keyId, day] of keysUsed) {
        this.#keysUsed.delete(keyId);
        this.#keyDaysWritten.set(keyId, day);
      }
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

  /** Windows held in memory now (for tests of the bound). */
  windowsInMemory(): number {
    return this.#windows.size;
  }

  /**
   * Writes what is counted (waiting up to CLOSE_WAIT_MS for the file) and closes the file,
   * whatever the write did: the counts are lost then, and the caller hears why.
   */
  close(): void {
    if (!this.#db.open) return;
    try {
      this.#db.pragma(`busy_timeout = ${CLOSE_WAIT_MS}`);
      this.flush();
    } finally {
      if (this.#flushTimer) clearTimeout(this.#flushTimer);
      this.#flushTimer = null;
      this.#db.close();
    }
  }

  #readStored(key: string, now: number): Window {
    // After close, counting goes on in memory alone (the requests still in flight at shutdown).
    if (!this.#db.open) return { used: 0, endsAt: now, unwritten: 0 };
    const stored = this.#statements.read.get(key, now);
    return stored ? { used: stored.points, endsAt: stored.expire, unwritten: 0 } : { used: 0, endsAt: now, unwritten: 0 };
  }

  #forgetEnded(beforeMs: number): void {
    for (const [key, window] of this.#windows) {
      if (window.endsAt <= beforeMs && window.unwritten === 0) this.#windows.delete(key);
    }
  }

  /** Ended windows leave memory, then written ones (the file has them), until there is room. */
  #makeRoom(now: number): void {
    this.#forgetEnded(now);
    for (const [key, window] of this.#windows) {
      if (this.#windows.size < MAX_WINDOWS_IN_MEMORY) return;
      if (window.unwritten === 0) this.#windows.delete(key);
    }
  }

  /**
   * The batch written in the background: it never waits for the file (a request would wait
   * with it) and never throws. A failed write (the file busy, full or read-only) keeps its
   * counts for the next try, which comes later each time, up to MAX_RETRY_MS.
   */
  #flushInBackground(): void {
    this.#flushTimer = null;
    try {
      withoutWaiting(this.#db, () => this.flush());
      this.#retryMs = FLUSH_INTERVAL_MS;
    } catch (error) {
      if (this.#retryMs === FLUSH_INTERVAL_MS) this.#onWriteFailure(error);
      this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
      this.#scheduleFlush();
    }
  }

  #scheduleFlush(): void {
    if (this.#flushTimer || !this.#db.open) return;
    this.#flushTimer = setTimeout(() => this.#flushInBackground(), this.#retryMs);
    this.#flushTimer.unref();
  }
}
