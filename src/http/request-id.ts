import { randomUUID } from 'node:crypto';
import type { AppMiddleware } from './context.js';

/** Every response carries x-request-id; the same id is in every error body. */
export const requestId: AppMiddleware = async (ctx, next) => {
  ctx.state.requestId = randomUUID();
  ctx.set('x-request-id', ctx.state.requestId);
  await next();
};
