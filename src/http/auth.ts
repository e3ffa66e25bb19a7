import { authenticateKey } from '../books/keys.js';
import { ApiError } from '../errors.js';
import { budgetSubject } from './client-address.js';
import type { AppMiddleware } from './context.js';
import type { Services } from '../services.js';
import { rateLimited } from './limits.js';

/** Failed authentications allowed per source address per window before rate_limited. */
export const AUTH_FAILURES_PER_WINDOW = 300;

const INVALID_KEY_MESSAGE = 'The API key is missing, malformed, revoked or expired, or the account has no API access.';

/**
 * `Authorization: Bearer <key>` is the only way in; cookies are never read. Every kind of
 * failure answers the identical invalid_key body, and failures are counted per client
 * address, an IPv6 client by its /64 (src/http/client-address.ts): past the budget the answer
 * is rate_limited instead. Working keys are never counted.
 */
export function authenticate(services: Services): AppMiddleware {
  return async (ctx, next) => {
    const presented = bearerToken(ctx.get('authorization'));
    const principal = presented === null ? null : authenticateKey(services.db, services.clock, presented);
    if (!principal) {
      const usage = services.counters.authFailures.count(budgetSubject(ctx.state.client?.address ?? 'unknown'));
      if (usage.used > AUTH_FAILURES_PER_WINDOW) {
        throw rateLimited('Too many failed authentications from this address; wait and retry.', usage);
      }
      throw new ApiError('invalid_key', INVALID_KEY_MESSAGE);
    }
    ctx.state.principal = principal;
    services.counters.recordKeyUse(principal.keyId);
    await next();
  };
}

/** The auth scheme is case-insensitive (RFC 9110); the key itself is not. */
function bearerToken(header: string): string | null {
  const match = /^bearer ([!-~]{1,200})$/i.exec(header);
  return match?.[1] ?? null;
}
