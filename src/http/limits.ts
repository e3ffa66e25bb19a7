import { rateBudgets } from '../books/accounts.js';
import { ApiError } from '../errors.js';
import { type AppMiddleware, principalOf, type Services } from './context.js';

export type RequestKind = 'read' | 'write';

/**
 * Counts the request against its key's budget for reads or writes (separate 10-minute
 * windows, budgets by plan tier or the operator's override). From here on every response
 * carries ratelimit-limit, -remaining and -reset; the rate_limited answer itself carries
 * only retry-after. No counting and no headers when the operator turned limits off.
 */
export function rateLimit(services: Services, kind: RequestKind): AppMiddleware {
  const counter = kind === 'read' ? services.counters.reads : services.counters.writes;
  return async (ctx, next) => {
    const principal = principalOf(ctx);
    const budgets = rateBudgets(principal.account);
    if (!budgets) return next();
    const limit = kind === 'read' ? budgets.readsPerWindow : budgets.writesPerWindow;
    const usage = await counter.count(principal.keyId);
    const secondsToReset = Math.ceil(usage.msBeforeReset / 1000);
    if (usage.used > limit) {
      throw new ApiError('rate_limited', `Rate limit of ${limit} ${kind}s per 10 minutes reached for this key.`, {
        'retry-after': String(Math.max(1, secondsToReset)),
      });
    }
    ctx.set('ratelimit-limit', String(limit));
    ctx.set('ratelimit-remaining', String(limit - usage.used));
    // The first whole Unix second at or after the window's end (never a second before it).
    ctx.set('ratelimit-reset', String(Math.ceil((services.clock.now().getTime() + usage.msBeforeReset) / 1000)));
    await next();
  };
}
