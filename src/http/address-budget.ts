import type { RequestCounter } from '../store/counters.js';
import { budgetSubject } from './client-address.js';
import type { AppContext, AppMiddleware } from './context.js';

/**
 * A budget of requests per client address (an IPv6 client by its /64) per rate window: the
 * request is counted, and past `limit` it gets a Retry-After and `refuse`'s answer instead of
 * its route. The pay pages and the console's sign-in each have one.
 */
export function addressBudget(counter: RequestCounter, limit: number, refuse: (ctx: AppContext) => void): AppMiddleware {
  return async (ctx, next) => {
    const usage = counter.count(budgetSubject(ctx.state.client?.address ?? 'unknown'));
    if (usage.used > limit) {
      ctx.set('retry-after', String(Math.max(1, Math.ceil(usage.msBeforeReset / 1000))));
      return refuse(ctx);
    }
    await next();
  };
}
