import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError, validationFailed } from '../errors.js';
import type { AppContext } from './context.js';

/** Request bodies above this many bytes are refused (spec Limits). */
export const MAX_BODY_BYTES = 1_048_576;

/**
 * Reads the body's bytes (decompressed, within the byte limit) and leaves decoding and JSON to
 * us: koa-body's own JSON parser refuses any body holding a "__proto__" key outright, so such a
 * key could never be named as the unknown field it is; and its UTF-8 decoding replaces bad
 * bytes silently, so a name could be stored other than the client sent it. latin1 maps each
 * byte to one character and back, losing nothing.
 */
const readBytesAsLatin1 = koaBody({
  json: false,
  text: true,
  encoding: 'latin1',
  textLimit: MAX_BODY_BYTES,
  textTypes: ['application/json'],
  urlencoded: false,
  multipart: false,
  parsedMethods: [HttpMethodEnum.GET, HttpMethodEnum.POST],
});

/**
 * Body rules, in order: a body needs Content-Type application/json; a declared length over
 * the limit is refused before reading; the JSON must be an object. A request without a body
 * gets `{}` (a POST with no body needs no content type). Leaves the object in
 * `ctx.request.body`.
 */
export async function readJsonBody(ctx: AppContext): Promise<void> {
  if (!hasBody(ctx)) {
    ctx.request.body = {};
    return;
  }
  if (!ctx.is('application/json')) throw validationFailed('Content-Type', 'must be application/json when a body is sent');
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > MAX_BODY_BYTES) throw validationFailed('body', `must be at most ${MAX_BODY_BYTES} bytes`);
  // JSON.parse output is JSON by construction; koa-body types the field as type-fest's JsonValue.
  ctx.request.body = parseJsonObject(await bodyText(ctx)) as RequestBody;
}

type RequestBody = AppContext['request']['body'];

async function bodyText(ctx: AppContext): Promise<string> {
  try {
    await readBytesAsLatin1(ctx, async () => {});
  } catch (thrown) {
    // A gzip/deflate/br body that does not decompress is the client's fault, not a 500.
    if (ctx.get('content-encoding') !== '' && isZlibError(thrown)) throw validationFailed('body', 'could not be decoded as its Content-Encoding says');
    throw thrown;
  }
  const latin1: unknown = ctx.request.body;
  if (typeof latin1 !== 'string') throw new Error('readJsonBody: the body reader returned no text for an application/json body');
  return strictUtf8(Buffer.from(latin1, 'latin1'));
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as UTF-8, refusing any byte sequence that is not (RFC 8259 requires UTF-8). */
export function strictUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw validationFailed('body', 'must be valid UTF-8');
  }
}

/**
 * The body as a JSON object; an empty body is `{}`. JSON.parse defines every key as an own
 * data property, so "__proto__", "constructor" and "prototype" stay ordinary keys that the
 * validator refuses as unknown fields. Every object also gets a null prototype: nothing
 * inherited (a `constructor`, a polluted Object.prototype) can pass for a field the client sent.
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text === '') return Object.create(null) as Record<string, unknown>;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, withoutPrototype);
  } catch (error) {
    if (error instanceof LoneSurrogate) throw validationFailed('body', 'must not contain unpaired surrogates (\\ud800 to \\udfff alone)');
    throw validationFailed('body', 'must be a JSON object');
  }
  if (!isPlainObject(parsed)) throw validationFailed('body', 'must be a JSON object');
  if (Object.getPrototypeOf(parsed) !== null) throw new Error('parseJsonObject: a parsed object kept its prototype');
  return parsed;
}

/** A lone surrogate (`"\\ud800"`) is valid JSON but no character: stored, it would come back as another. */
const LONE_SURROGATE = /\p{Cs}/u;

class LoneSurrogate extends Error {}

/** JSON.parse reviver: hands the validator objects that inherit nothing, and text that is real Unicode. */
function withoutPrototype(key: string, value: unknown): unknown {
  if (LONE_SURROGATE.test(key) || (typeof value === 'string' && LONE_SURROGATE.test(value))) throw new LoneSurrogate();
  return isPlainObject(value) ? Object.setPrototypeOf(value, null) : value;
}

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
