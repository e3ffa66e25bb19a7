import { ApiError } from '../errors.js';
import type { AppMiddleware } from './context.js';

/**
 * Failures a test asks for (daybook/testing), so a client's retries and idempotency can be
 * tried against the real error bodies: the next requests under /api/v1 answer 429 or 500
 * instead of running, or run only after a stall.
 */
export type Fault = { kind: 'rate_limited'; retryAfterSeconds: number } | { kind: 'internal_error' } | { kind: 'stall'; ms: number };

/** The faults still to give, first one first; each request under /api/v1 takes one. */
export class FaultQueue {
  readonly #queue: Fault[] = [];

  add(count: number, fault: Fault): void {
    for (let i = 0; i < count; i++) this.#queue.push(fault);
  }

  take(): Fault | undefined {
    return this.#queue.shift();
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

/** The fault a failNext() asks for, or an error naming what is wrong with it. */
export function faultFor(count: number, failure: TestFailure): Fault {
  if (!Number.isInteger(count) || count < 1) throw new Error(`failNext: count must be a whole number from 1 (got ${count})`);
  if (typeof failure !== 'object' || failure === null) throw new Error(`failNext: give {status: 429, retryAfterSeconds}, {status: 500} or {stallMs} (got ${JSON.stringify(failure)})`);
  if ('stallMs' in failure) {
    if (!Number.isInteger(failure.stallMs) || failure.stallMs < 0) throw new Error(`failNext: stallMs must be a whole number of milliseconds (got ${failure.stallMs})`);
    return { kind: 'stall', ms: failure.stallMs };
  }
  if (failure.status === 500) return { kind: 'internal_error' };
  if (failure.status === 429) {
    const seconds = failure.retryAfterSeconds ?? 1;
    if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`failNext: retryAfterSeconds must be a whole number from 1 (got ${seconds})`);
    return { kind: 'rate_limited', retryAfterSeconds: seconds };
  }
  throw new Error(`failNext: give {status: 429, retryAfterSeconds}, {status: 500} or {stallMs} (got ${JSON.stringify(failure)})`);
}
