import { ApiError } from '../errors.js';
import type { AppMiddleware } from './context.js';
import { RefusedInput } from './control.js';

/**
 * Failures a test asks for (daybook/testing), so a client's retries and idempotency can be
 * tried against the real error bodies: the next requests under /api/v1 answer 429 or 500
 * instead of running, or run only after a stall.
 */
export type Fault = { kind: 'rate_limited'; retryAfterSeconds: number } | { kind: 'internal_error' } | { kind: 'stall'; ms: number };

/**
 * The faults still to give, first one first; each request under /api/v1 takes one. One entry
 * per failNext, holding its count: the queue's size follows the calls, never the counts.
 */
export class FaultQueue {
  readonly #queue: Array<{ fault: Fault; left: number }> = [];

  add(count: number, fault: Fault): void {
    if (!Number.isInteger(count) || count < 1 || count > MAX_FAIL_COUNT) throw new Error(`FaultQueue.add: count out of range: ${count}`);
    this.#queue.push({ fault, left: count });
  }

  take(): Fault | undefined {
    const first = this.#queue[0];
    if (first === undefined) return undefined;
    first.left -= 1;
    if (first.left === 0) this.#queue.shift();
    return first.fault;
  }
}

export function injectFaults(queue: FaultQueue, apiPrefix: string): AppMiddleware {
  return async (ctx, next) => {
    const fault = ctx.path.startsWith(`${apiPrefix}/`) ? queue.take() : undefined;
    if (fault === undefined) return next();
    if (fault.kind === 'stall') {
      await new Promise((resolve) => setTimeout(resolve, fault.ms));
      return next();
    }
    if (fault.kind === 'rate_limited') {
      throw new ApiError('rate_limited', 'Too many requests for this key in the current window.', { 'retry-after': String(fault.retryAfterSeconds) });
    }
    throw new ApiError('internal_error', 'Something went wrong on our side. Retry once or twice with the same Idempotency-Key.');
  };
}

/** What daybook/testing's failNext takes. */
export type TestFailure = { status: 429; retryAfterSeconds?: number } | { status: 500 } | { stallMs: number };

/**
 * Limits on what one failNext may ask for: enough for any retry test, small enough that a
 * typo (count 1e9, stallMs 1e11) is refused rather than holding the server for days. A stall
 * over a minute would outlast any client's timeout worth testing.
 */
export const MAX_FAIL_COUNT = 1_000;
export const MAX_STALL_MS = 60_000;
export const MAX_RETRY_AFTER_SECONDS = 86_400;

const FAILURE_SHAPES = '{status: 429, retryAfterSeconds}, {status: 500} or {stallMs}';

/** The fault a failNext() asks for, or a RefusedInput naming what is wrong with it. */
export function faultFor(count: number, failure: TestFailure): Fault {
  wholeNumberIn('count', count, 1, MAX_FAIL_COUNT);
  if (typeof failure !== 'object' || failure === null) throw refused('failure', `must be ${FAILURE_SHAPES} (got ${shown(failure)})`);
  if ('stallMs' in failure) return { kind: 'stall', ms: wholeNumberIn('stallMs', failure.stallMs, 0, MAX_STALL_MS) };
  if (failure.status === 500) return { kind: 'internal_error' };
  if (failure.status === 429) return { kind: 'rate_limited', retryAfterSeconds: wholeNumberIn('retryAfterSeconds', failure.retryAfterSeconds ?? 1, 1, MAX_RETRY_AFTER_SECONDS) };
  throw refused('failure', `must be ${FAILURE_SHAPES} (got ${shown(failure)})`);
}

function wholeNumberIn(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw refused(field, `must be a whole number from ${min} to ${max} (got ${shown(value)})`);
  }
  return value;
}

function shown(value: unknown): string {
  return typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? 'nothing');
}

function refused(field: string, problem: string): RefusedInput {
  return new RefusedInput('failNext', field, problem);
}
