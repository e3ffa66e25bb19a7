import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError, validationFailed } from '../errors.js';
import type { AppContext, AppMiddleware } from './context.js';

/** Request bodies above this many bytes are refused (spec Limits). */
export const MAX_BODY_BYTES = 1_048_576;

const parseJson = koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: MAX_BODY_BYTES,
  jsonTypes: ['application/json'],
  urlencoded: false,
  text: false,
  multipart: false,
  parsedMethods: [HttpMethodEnum.GET, HttpMethodEnum.POST],
});

/**
 * Body rules, in order: a body needs Content-Type application/json; a declared length over
 * the limit is refused before reading; the JSON must be an object. A request without a body
 * gets `{}` (a POST with no body needs no content type).
 */
export const bodyRules: AppMiddleware = async (ctx, next) => {
  if (!hasBody(ctx)) {
    ctx.request.body = {};
    return next();
  }
  if (!ctx.is('application/json')) throw validationFailed('Content-Type', 'must be application/json when a body is sent');
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > MAX_BODY_BYTES) throw validationFailed('body', `must be at most ${MAX_BODY_BYTES} bytes`);
  try {
    await parseJson(ctx, async () => {});
  } catch (thrown) {
    // A gzip/deflate/br body that does not decompress is the client's fault, not a 500.
    if (ctx.get('content-encoding') !== '' && isZlibError(thrown)) throw validationFailed('body', 'could not be decoded as its Content-Encoding says');
    throw thrown;
  }
  const body: unknown = ctx.request.body;
  if (body === undefined) ctx.request.body = {};
  else if (!isPlainObject(body)) throw validationFailed('body', 'must be a JSON object');
  await next();
};

function hasBody(ctx: AppContext): boolean {
  if (ctx.get('transfer-encoding') !== '') return true;
  const length = ctx.get('content-length');
  if (length === '') return false;
  if (!/^[0-9]+$/.test(length)) throw new ApiError('validation_failed', 'Content-Length: must be a whole number of bytes');
  return Number(length) > 0;
}

/** zlib stream errors carry a numeric errno and a string code, and no HTTP status. */
function isZlibError(thrown: unknown): boolean {
  const error = thrown as { status?: unknown; errno?: unknown; code?: unknown } | null;
  return typeof error === 'object' && error !== null && error.status === undefined && typeof error.errno === 'number' && typeof error.code === 'string';
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
