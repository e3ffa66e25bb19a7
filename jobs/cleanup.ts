import { purgeExpiredIdempotency } from '../src/books/idempotency.js';
import type { Clock } from '../src/clock.js';
import type { Db } from '../src/db/connection.js';
import type { CounterStore } from '../src/http/rate-limit.js';

export interface CleanupContext {
  db: Db;
  clock: Clock;
  counters: CounterStore;
}

export interface CleanupResult {
  /** Idempotency records past their 24-hour window. */
  idempotencyRecords: number;
  /** Rate-limit windows that have ended. */
  counterWindows: number;
}

/** Removes what has outlived its purpose, so neither table grows without bound. */
export function runCleanup(context: CleanupContext): CleanupResult {
  return {
    idempotencyRecords: purgeExpiredIdempotency(context.db, context.clock),
    counterWindows: context.counters.clearEnded(context.clock.now().getTime()),
  };
}
