import { rateBudgets } from '../books/tenants.js';
import { RATE_WINDOW_SECONDS } from '../store/counters.js';
import { ApiError } from '../errors.js';
import type { WindowUsage } from '../store/counters.js';
import { type AppContext, principalOf } from './context.js';
import type { Services } from '../services.js';

export type RequestKind = 'read' | 'write';

/**
 * Counts the request against its key's budget for reads or writes (separate 10-minute
 * windows, budgets by plan tier or the operator's override). From here on every response
 * carries ratelimit-limit, -remaining and -reset; the rate_limited answer itself carries
 * only retry-after. No counting and no headers when the operator turned limits off.
 */
export function countAgainstBudget(ctx: AppContext, services: Services, kind: RequestKind): void {
  const principal = principalOf(ctx);
  const budgets = rateBudgets(principal.tenant);
  if (!budgets) return;
  const limit = kind === 'read' ? budgets.readsPerWindow : budgets.writesPerWindow;
  const counter = kind === 'read' ? services.counters.reads : services.counters.writes;
  const usage = counter.count(principal.keyId);
  if (usage.used > limit) throw rateLimited(`Rate limit of ${limit} ${kind}s per 10 minutes reached for this key.`, usage);
  ctx.set('ratelimit-limit', String(limit));
  ctx.set('ratelimit-remaining', String(limit - usage.used));
  // The first whole Unix second at or after the window's end (never a second before it).
  ctx.set('ratelimit-reset', String(Math.ceil((services.clock.now().getTime() + usage.msBeforeReset) / 1000)));
}

/** The rate_limited answer: retry-after is the whole seconds until the window ends (at least 1). */
export function rateLimited(message: string, usage: WindowUsage): ApiError {
  const msToWait = usage.msBeforeReset > 0 ? usage.msBeforeReset : RATE_WINDOW_SECONDS * 1000;
  return new ApiError('rate_limited', message, { 'retry-after': String(Math.max(1, Math.ceil(msToWait / 1000))) });
}
