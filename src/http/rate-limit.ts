import type { Statement } from 'better-sqlite3';
import { RateLimiterRes, RateLimiterSQLite } from 'rate-limiter-flexible';
import type { Clock } from '../clock.js';
import { counterStorePath, type Db, openDb } from '../db/connection.js';
import { RATE_WINDOW_SECONDS } from '../books/plans.js';

/**
 * Request counters in rate-limiter-flexible's SQLite store, with two changes: time comes from
 * our Clock (so tests step through windows without sleeping), and the statements are
 * prepared once instead of on every request.
 *
 * The counters live in their own SQLite file beside the books (`*.counters.sqlite`) with
 * synchronous=OFF. A separate file matters: a write through another connection to the books
 * file would empty the books connection's page cache on every request; and a lost count
 * after power loss is harmless, where an fsync per GET is not.
 */

interface StoreRow {
  points: number;
  expire: number | null;
}

interface Statements {
  upsert: Statement;
  replace: Statement;
  get: Statement;
}

export const RATE_LIMIT_TABLE = 'rate_limits';

/** Opens (creating when missing) the counter store for the books file at `booksPath`. */
function openCounterStore(booksPath: string): Db {
  const db = openDb(counterStorePath(booksPath), { synchronous: 'off', bigints: false });
  db.exec(`CREATE TABLE IF NOT EXISTS ${RATE_LIMIT_TABLE} (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)`);
  db.exec(`CREATE INDEX IF NOT EXISTS ${RATE_LIMIT_TABLE}_expire ON ${RATE_LIMIT_TABLE}(expire)`);
  return db;
}

/** Large enough that the library never refuses on its own: budgets are compared by the caller. */
const UNBOUNDED_POINTS = 2 ** 31;

class ClockedRateLimiterSQLite extends RateLimiterSQLite {
  readonly #clock: Clock;
  readonly #statements: Statements;

  constructor(db: Db, clock: Clock, keyPrefix: string) {
    super({
      storeClient: db,
      storeType: 'better-sqlite3',
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      keyPrefix,
      points: UNBOUNDED_POINTS,
      duration: RATE_WINDOW_SECONDS,
    });
    this.#clock = clock;
    this.#statements = {
      upsert: db.prepare(`INSERT INTO ${RATE_LIMIT_TABLE} (key, points, expire) VALUES (?, ?, ?)
        ON CONFLICT(key) DO UPDATE SET
          points = CASE WHEN expire IS NULL OR expire > ? THEN points + excluded.points ELSE excluded.points END,
          expire = CASE WHEN expire IS NULL OR expire > ? THEN expire ELSE excluded.expire END
        RETURNING points, expire`),
      replace: db.prepare(`INSERT OR REPLACE INTO ${RATE_LIMIT_TABLE} (key, points, expire) VALUES (?, ?, ?) RETURNING points, expire`),
      get: db.prepare(`SELECT points, expire FROM ${RATE_LIMIT_TABLE} WHERE key = ? AND (expire > ? OR expire IS NULL)`),
    };
  }

  // The overrides below replace the store's private methods of the same names.
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<StoreRow> {
    const now = this.#clock.now().getTime();
    const expire = msDuration > 0 ? now + msDuration : null;
    return forceExpire
      ? (this.#statements.replace.get(rlKey, points, expire) as StoreRow)
      : (this.#statements.upsert.get(rlKey, points, expire, now, now) as StoreRow);
  }

  async _get(rlKey: string): Promise<StoreRow | null> {
    return (this.#statements.get.get(rlKey, this.#clock.now().getTime()) as StoreRow | undefined) ?? null;
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, result: StoreRow): RateLimiterRes {
    const isFirstInDuration = changedPoints === result.points;
    const consumedPoints = isFirstInDuration ? changedPoints : result.points;
    const msBeforeNext = result.expire ? Math.max(result.expire - this.#clock.now().getTime(), 0) : -1;
    return new RateLimiterRes(Math.max(UNBOUNDED_POINTS - consumedPoints, 0), msBeforeNext, consumedPoints, isFirstInDuration);
  }
}

export interface WindowUsage {
  /** Requests counted in the current window, this one included. */
  used: number;
  /** Milliseconds until the window ends. */
  msBeforeReset: number;
}

/** One counter per (kind, subject) in fixed windows of RATE_WINDOW_SECONDS. */
export class RequestCounter {
  readonly #limiter: ClockedRateLimiterSQLite;

  constructor(db: Db, clock: Clock, kind: string) {
    this.#limiter = new ClockedRateLimiterSQLite(db, clock, kind);
  }

  async count(subject: string): Promise<WindowUsage> {
    const result = await this.#limiter.consume(subject, 1);
    return { used: result.consumedPoints, msBeforeReset: result.msBeforeNext };
  }
}

/** The counters file and the three counters kept in it: reads and writes per key, failed authentications per address. */
export class CounterStore {
  readonly reads: RequestCounter;
  readonly writes: RequestCounter;
  readonly authFailures: RequestCounter;
  readonly #db: Db;

  constructor(booksPath: string, clock: Clock) {
    this.#db = openCounterStore(booksPath);
    this.reads = new RequestCounter(this.#db, clock, 'read');
    this.writes = new RequestCounter(this.#db, clock, 'write');
    this.authFailures = new RequestCounter(this.#db, clock, 'authfail');
  }

  /** Drops every window that ended before `beforeMs`; the cleanup job runs it. */
  clearEnded(beforeMs: number): number {
    return Number(this.#db.prepare(`DELETE FROM ${RATE_LIMIT_TABLE} WHERE expire < ?`).run(beforeMs).changes);
  }

  /** Windows still stored (ended or not). */
  size(): number {
    return Number((this.#db.prepare(`SELECT count(*) AS n FROM ${RATE_LIMIT_TABLE}`).get() as { n: number }).n);
  }

  close(): void {
    this.#db.close();
  }
}
