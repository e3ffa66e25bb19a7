import { statSync } from 'node:fs';
import { purgeExpiredIdempotency } from '../store/idempotency.js';
import type { Clock } from '../clock.js';
import { type Db, withoutWaiting } from '../db/connection.js';
import type { CounterStore } from '../store/counters.js';

export interface HousekeepingContext {
  db: Db;
  clock: Clock;
  counters: CounterStore;
  /** A write-ahead log larger than this is folded into the books file and truncated. */
  walLimitBytes?: number;
}

/**
 * SQLite folds the write-ahead log back into the books file on its own every 1,000 pages, but
 * a reader that stays open across that moment (a long report, a backup) keeps the log from
 * being reset, so it can grow; past this size housekeeping checkpoints it and truncates it.
 */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

export interface HousekeepingResult {
  /** Idempotency records past their 24-hour window, removed. */
  idempotencyRecords: number;
  /** Rate-limit windows that had ended, removed. */
  counterWindows: number;
  /** The write-ahead log's size before, and whether it was checkpointed and truncated. */
  walBytes: number;
  walCheckpointed: boolean;
}

/**
 * Removes what has outlived its purpose, so neither table grows without bound; lets SQLite
 * refresh its query planner statistics (`PRAGMA optimize`, cheap when nothing changed); and
 * truncates a write-ahead log that has grown past its limit.
 */
export function runHousekeeping(context: HousekeepingContext): HousekeepingResult {
  const idempotencyRecords = purgeExpiredIdempotency(context.db, context.clock);
  const counterWindows = context.counters.clearEnded(context.clock.now().getTime());
  context.db.pragma('optimize');
  const walBytes = walSize(context.db);
  const walCheckpointed = walBytes > (context.walLimitBytes ?? WAL_LIMIT_BYTES) && truncateWal(context.db);
  return { idempotencyRecords, counterWindows, walBytes, walCheckpointed };
}

/**
 * Checkpoints the whole log into the books file and truncates it, without waiting: while
 * another process holds a read open (the very reason a log grows), SQLite answers busy at once
 * instead of holding up the server's requests, and the next run tries again.
 */
function truncateWal(db: Db): boolean {
  return withoutWaiting(db, () => {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number | bigint }[];
    return Number(result?.busy ?? 1) === 0;
  });
}

/** The size of the books file's write-ahead log; 0 when there is none (or the books are in memory). */
function walSize(db: Db): number {
  try {
    return statSync(`${db.name}-wal`).size;
  } catch {
    return 0;
  }
}
