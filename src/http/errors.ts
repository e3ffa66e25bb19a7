import { ApiError, errorBody } from '../errors.js';
import { MAX_BODY_BYTES } from './body.js';
import type { Logger } from '../log.js';
import { routeTemplate } from './access-log.js';
import type { AppContext, AppMiddleware } from './context.js';

/**
 * Renders every failure as the spec's error body. ApiError carries its code; anything else
 * is a fault: logged with its stack, answered as internal_error with no internals leaked.
 */
export function errorRenderer(log: Logger): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = thrown instanceof ApiError ? thrown : translateForeign(thrown);
      if (error.code === 'internal_error') {
        log.error({ err: thrown, requestId: ctx.state.requestId, method: ctx.method, route: routeTemplate(ctx) }, 'request failed');
      }
      renderError(ctx, error);
    }
  };
}

export function renderError(ctx: AppContext, error: ApiError): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.body = errorBody(error.code, error.message, ctx.state.requestId);
}

/**
 * Errors raised by the body reader (raw-body, inflation) that are the client's fault, not
 * ours. JSON is parsed by readJsonBody itself, which answers a bad body directly.
 */
function translateForeign(thrown: unknown): ApiError {
  const status = (thrown as { status?: unknown; type?: unknown })?.status;
  const type = (thrown as { type?: unknown })?.type;
  if (status === 413 || type === 'entity.too.large') {
    return new ApiError('validation_failed', `body: must be at most ${MAX_BODY_BYTES} bytes`);
  }
  if (status === 400 || status === 415) {
    return new ApiError('validation_failed', `body: ${(thrown as Error).message}`);
  }
  return new ApiError('internal_error', 'Something went wrong on our side. Retry once or twice with the same Idempotency-Key.');
}

/** The last step of /api/v1: no route answered, so the path or method does not exist. */
export const notFoundFallback: AppMiddleware = async () => {
  throw new ApiError('not_found', 'No such endpoint.');
};
