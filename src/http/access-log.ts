import type { Logger } from '../log.js';
import type { AppContext, AppMiddleware } from './context.js';
import type { RefusedRequest } from './connections.js';

/**
 * One log line per request, once its answer is written or its connection is gone: request id,
 * method, the route's template (never the path itself, which may carry ids or a pay link's
 * token), status, duration, client address, key id and operation id. Bodies and keys are
 * never logged. Written at info, so DAYBOOK_LOG_LEVEL=warn or above turns it off.
 */
export function accessLog(log: Logger): AppMiddleware {
  return async (ctx, next) => {
    if (!log.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    ctx.res.once('close', () => log.info(accessLine(ctx, started), 'request'));
    await next();
  };
}

/** The template of the route that matched (`/api/v1/invoices/:id`), as the router recorded it; null when none did. */
export function routeTemplate(ctx: AppContext): string | null {
  const matched = (ctx as AppContext & { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? matched : null;
}

/** What one request's line says; fields that do not apply (no route matched, no key) are null. */
export function accessLine(ctx: AppContext, started: bigint): Record<string, unknown> {
  const matched = ctx as AppContext & { _matchedRouteName?: unknown };
  return {
    requestId: ctx.state.requestId,
    method: ctx.method,
    route: routeTemplate(ctx),
    status: ctx.res.headersSent ? ctx.res.statusCode : null,
    durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
    client: ctx.state.client?.address ?? null,
    scheme: ctx.state.client?.scheme ?? null,
    keyId: ctx.state.principal?.keyId ?? null,
    operationId: typeof matched._matchedRouteName === 'string' ? matched._matchedRouteName : null,
  };
}

/**
 * The line of a request answered below the app (src/http/connections.ts): the 422 it was
 * given and why; nothing of the request itself is known or believed.
 */
export function refusedLine(refused: RefusedRequest): Record<string, unknown> {
  return {
    requestId: refused.requestId,
    method: null,
    route: null,
    status: 422,
    durationMs: null,
    client: refused.client,
    scheme: refused.scheme,
    keyId: null,
    operationId: null,
    refused: refused.reason,
  };
}
