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
