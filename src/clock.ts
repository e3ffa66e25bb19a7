/**
 * The only source of "now" in Daybook. Production code receives a Clock; tests and jobs
 * pass a fixed one so expiry, cooldowns and windows are exercised without sleeping.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface FixedClock extends Clock {
  set(at: string | Date): void;
  advanceMs(ms: number): void;
  advanceDays(days: number): void;
}

export function fixedClock(at: string | Date): FixedClock {
  let current = new Date(at);
  assertValidInstant(current, at);
  return {
    now: () => new Date(current.getTime()),
    set(next) {
      const parsed = new Date(next);
      assertValidInstant(parsed, next);
      current = parsed;
    },
    advanceMs(ms) {
      current = new Date(current.getTime() + ms);
    },
    advanceDays(days) {
      current = new Date(current.getTime() + days * 86_400_000);
    },
  };
}

function assertValidInstant(date: Date, source: string | Date): void {
  if (Number.isNaN(date.getTime())) throw new Error(`fixedClock: not a valid instant: ${String(source)}`);
}

/** The current UTC calendar date as YYYY-MM-DD. */
export function todayUtc(clock: Clock): string {
  return clock.now().toISOString().slice(0, 10);
}

/** The current instant as an ISO-8601 UTC timestamp, the form every *_at column holds. */
export function nowIso(clock: Clock): string {
  return clock.now().toISOString();
}
