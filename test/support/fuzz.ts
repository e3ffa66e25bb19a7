import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { connect, type Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Db } from '../../src/db/connection.js';
import { MAX_BODY_BYTES, parseJsonObject, strictUtf8 } from '../../src/http/body.js';
import type { Operation } from '../../src/http/operation.js';
import { coerceQuery, schemaProblem } from '../../src/http/validate.js';
import type { TestResponse } from './app.js';
import { chunked, parseAnswer, sendRaw, SPEC_ERROR_CODES, SPEC_ERROR_STATUS, type SpecErrorCode } from './api.js';

/**
 * Machinery for the request fuzzer (test/api/fuzz.test.ts): arbitraries read from an
 * operation's TypeBox schemas, hostile values, JSON written exactly as asked (duplicate keys,
 * numbers JSON.stringify cannot write, deep nesting), two ways to put bytes on the wire, the
 * row counts of every table, and the checks every answer must pass.
 */

// ---------------------------------------------------------------------------------------------
// Values

/** A uuid-format field: which record it names is decided when the request is sent (IdRef.choice picks own, foreign or unknown). */
export class IdRef {
  constructor(
    /** The field's name (`accountId`, `id`, ...). */
    readonly field: string,
    /** 0 to 99: own and fitting, own but unreachable, another tenant's, or unknown. */
    readonly choice: number,
    readonly index: number,
  ) {}
}

/** A cursor field: a nextCursor some list answered, or text, decided when the request is sent. */
export class CursorRef {
  constructor(
    readonly index: number,
    readonly fallback: string,
  ) {}
}

/** JSON text written as-is where a value goes (`1e400`, `-0`, 10,000 nested arrays). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object written with these entries in this order, a key possibly more than once. */
export class JsonEntries {
  constructor(readonly entries: ReadonlyArray<readonly [string, unknown]>) {}
}

/** JSON text for `value`: RawJson written as-is, JsonEntries with their duplicates, strings as JSON.stringify writes them (lone surrogates escaped). */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonEntries) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(',')}}`;
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? 'null';
}

/** Replaces every IdRef and CursorRef in `value` (deeply) by what `resolve` gives. */
export function resolveRefs(value: unknown, resolve: (ref: IdRef | CursorRef, path: string[]) => string, path: string[] = []): unknown {
  if (value instanceof IdRef || value instanceof CursorRef) return resolve(value, path);
  if (value instanceof RawJson) return value;
  if (value instanceof JsonEntries) return new JsonEntries(value.entries.map(([k, v]) => [k, resolveRefs(v, resolve, [...path, k])] as const));
  if (Array.isArray(value)) return value.map((item, i) => resolveRefs(item, resolve, [...path, String(i)]));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, resolve, [...path, k])]));
  }
  return value;
}

const DAY_MS = 86_400_000;

/** Dates around `today` (most), and the odd real calendar dates at the ends of the format. */
export function dateArb(today: string): fc.Arbitrary<string> {
  const base = Date.parse(`${today}T00:00:00Z`);
  return fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: -500, max: 60 }).map((days) => new Date(base + days * DAY_MS).toISOString().slice(0, 10)) },
    { weight: 1, arbitrary: fc.constantFrom('0001-01-01', '0000-01-01', '1970-01-01', '2024-02-29', '2000-02-29', '9999-12-31', '9999-12-30', '2025-12-31', '2026-01-01') },
  );
}

/** A pattern's strings: fast-check's stringMatching where it can read the pattern, else text filtered by it. */
function patternArb(pattern: string, minLength: number, maxLength: number): fc.Arbitrary<string> {
  const re = new RegExp(pattern, 'u');
  const fits = (s: string) => re.test(s) && [...s].length >= minLength && [...s].length <= maxLength;
  try {
    return fc.stringMatching(re).filter(fits);
  } catch {
    // Lookarounds and \p{...} classes are beyond stringMatching: drop lookaheads, or fall back to text.
  }
  const withoutLookahead = pattern.replace(/\(\?[=!][^)]*\)/g, '');
  if (withoutLookahead !== pattern) {
    try {
      return fc.stringMatching(new RegExp(withoutLookahead, 'u')).filter(fits);
    } catch {
      // fall through
    }
  }
  return fc
    .oneof(fc.string({ unit: textUnit, minLength: Math.max(minLength, 1), maxLength: Math.min(maxLength, 40) }), fc.string({ minLength: Math.max(minLength, 1), maxLength: Math.min(maxLength, 40) }))
    .filter(fits);
}

/**
 * Characters that are valid text but trip careless code: NUL and other controls, direction
 * marks and isolates, a BOM, line and paragraph separators, zero-width joiners, astral and
 * combining characters, SQL LIKE wildcards, quotes and backslashes.
 */
export const EDGE_CHARACTERS: readonly string[] = [
  '\u0000', '\u0001', '\u001b', '\u007f', '\u0085', '\t', '\n', '\r', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069', '\ufeff', '\u2028', '\u2029',
  '\u200b', '\u200d', '\u00a0', '\u3000', '😀', '👩‍👩‍👧', '𝄞', '\u{10ffff}', 'e\u0301', 'ß', 'İ', 'ς', 'Σ', '\ufffd', '%', '_', '\\', "'", '"', '`', '<', '&',
];

/** One character of valid-ish text: any grapheme mostly, now and then one of EDGE_CHARACTERS. */
const textUnit = fc.oneof({ weight: 5, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) }, { weight: 1, arbitrary: fc.constantFrom(...EDGE_CHARACTERS) });

/** Text within the field's bounds: short unicode mostly, sometimes exactly at the longest. */
function textArb(minLength: number, maxLength: number): fc.Arbitrary<string> {
  const short = Math.min(maxLength, 40);
  const arbs: Array<fc.WeightedArbitrary<string>> = [
    { weight: 6, arbitrary: fc.string({ unit: textUnit, minLength, maxLength: short }) },
    { weight: 3, arbitrary: fc.string({ minLength, maxLength: short }) },
  ];
  if (maxLength > short) {
    arbs.push({ weight: 1, arbitrary: fc.constantFrom('é', '𝄞', 'a', '%', '_').map((c) => c.repeat(maxLength)) });
  }
  return fc.oneof(...arbs);
}

export interface ValueContext {
  today: string;
}

/**
 * Values the schema accepts as far as its form goes (uuids become IdRefs, cursors CursorRefs):
 * read from the TypeBox schema itself, so a field added to an operation is generated too.
 * Optional properties are left out about half the time.
 */
export function validValueArb(schema: TSchema, context: ValueContext, field = ''): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as TSchema[]).map((branch) => validValueArb(branch, context, field)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, TSchema>;
      const required = (schema.required ?? []) as string[];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = validValueArb(property, context, name);
      return fc.record(record, { requiredKeys: required });
    }
    case 'array': {
      const items = schema.items as TSchema;
      const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxLength = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 4, Math.max(minLength, 4));
      return fc.array(validValueArb(items, context, field), { minLength, maxLength });
    }
    case 'string': {
      const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
      const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : 60;
      if (schema.format === 'uuid') return fc.tuple(fc.nat(99), fc.nat()).map(([choice, index]) => new IdRef(field, choice, index));
      if (schema.format === 'date') return dateArb(context.today);
      if (schema.format === 'email') {
        return fc.oneof(
          fc.nat(9999).map((n) => `billing${n}@customer.example`),
          fc.emailAddress().filter((email) => email.length <= maxLength),
        );
      }
      if (field === 'cursor') return fc.tuple(fc.nat(), textArb(Math.max(minLength, 1), 60)).map(([index, text]) => new CursorRef(index, text));
      if (typeof schema.pattern === 'string') return patternArb(schema.pattern, minLength, maxLength);
      return textArb(minLength, maxLength);
    }
    case 'integer': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -1_000_000;
      const max = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000;
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min, max }) }, { weight: 1, arbitrary: fc.constantFrom(min, max) });
    }
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -1e6;
      const max = typeof schema.maximum === 'number' ? schema.maximum : 1e6;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Every field path a schema declares, arrays as `N` (`lines.N.quantity`), with its schema. */
export function schemaFields(schema: TSchema, prefix: string[] = []): Array<{ path: string[]; schema: TSchema }> {
  const found: Array<{ path: string[]; schema: TSchema }> = [];
  if (Array.isArray(schema.anyOf)) {
    for (const branch of schema.anyOf as TSchema[]) found.push(...schemaFields(branch, prefix));
    return found;
  }
  if (schema.type === 'object') {
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
      found.push({ path: [...prefix, name], schema: property });
      found.push(...schemaFields(property, [...prefix, name]));
    }
  } else if (schema.type === 'array' && schema.items) {
    found.push(...schemaFields(schema.items as TSchema, [...prefix, 'N']));
  }
  return found;
}

const deep = (depth: number, open: string, close: string, inner = '1') => new RawJson(open.repeat(depth) + inner + close.repeat(depth));

/** Text no well-behaved client sends: lone surrogates, NUL, direction marks, astral characters, injections, lengths past every limit. */
export const hostileStringArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\ud800',
    'a\udfffb',
    '\udc00\ud800',
    '\u0000',
    'nul\u0000inside',
    '\u202eevil\u202c',
    '\u2066isolate\u2069',
    '\u200f\u200e',
    '\ufeff',
    '\u2028\u2029',
    '😀',
    '𝕏'.repeat(200),
    '😀'.repeat(201),
    'e\u0301'.repeat(150),
    ' ',
    '',
    '\t\n\r',
    '%',
    '_',
    '%_%',
    "' OR 1=1 --",
    '"; DROP TABLE customers; --',
    '\\',
    '${{7*7}}',
    '<script>alert(1)</script>',
    '../../etc/passwd',
    '__proto__',
    'constructor',
    'NaN',
    'Infinity',
    '-1',
    '0',
    '00000000000000000000000000000001',
    '1'.repeat(31),
    '1.5',
    '1e3',
    ' 12',
    '12 ',
    '+12',
    '0x1F',
    '١٢٣',
    '２０２６-０３-１５',
    '2026-02-30',
    '2026-13-01',
    '2026-03-15T00:00:00Z',
    '20260315',
    '+002026-03-15',
    'C0FFEE00-AAAA-4BBB-8CCC-0123456789AB',
    '{c0ffee00-aaaa-4bbb-8ccc-0123456789ab}',
    'c0ffee00-aaaa-4bbb-8ccc-0123456789ab\n',
    '00000000-0000-0000-0000-000000000000',
    'USD ',
    'usd',
  ),
  // Any code points, lone surrogates included (fast-check's 'binary' unit costs a second to set up).
  fc.string({ unit: fc.integer({ min: 0, max: 0x10ffff }).map((code) => String.fromCodePoint(code)), maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
);

/** Hostile text, now and then past every length limit (long ones are kept rare: they cost the most to send). */
const hostileOrLongStringArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: hostileStringArb },
  { weight: 1, arbitrary: fc.constantFrom(201, 321, 2001, 4097, 30_000).chain((length) => fc.constantFrom('a', 'é', '😀', '\u0000').map((c) => c.repeat(length))) },
);

/** Values of every JSON type and none: huge and odd numbers, deep nesting, containers where scalars belong. */
export const hostileValueArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: hostileOrLongStringArb },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.integer(),
      fc.double(),
      fc.constantFrom(0, -1, 1.5, 2 ** 53, -(2 ** 53) - 2, Number.MAX_VALUE, Number.MIN_VALUE, 123456789012345),
      fc.constantFrom('1e400', '-1e400', '-0', '0.0', '1E2', '123456789012345678901234567890', '1.0000000000000000000001', '0.1e-400').map((t) => new RawJson(t)),
    ),
  },
  { weight: 4, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 4, arbitrary: fc.oneof(fc.constant([]), fc.constant({}), fc.jsonValue({ maxDepth: 3 })) },
  { weight: 1, arbitrary: fc.constantFrom(20, 200, 2_000, 20, 200, 20_000).chain((depth) => fc.constantFrom(deep(depth, '[', ']'), deep(depth, '{"a":', '}'))) },
);

/** A value whose JSON type differs from the schema's: refused whatever it holds. */
export function wrongTypeArb(schema: TSchema): fc.Arbitrary<unknown> {
  const type = schema.type;
  const notString = fc.oneof(
    fc.integer(),
    fc.constantFrom(1.5, -0, 1e21, 123456789012345678901234567890),
    fc.constantFrom('1e400', '-0', '123456789012345678901234567890').map((t) => new RawJson(t)),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
    hostileStringArb.map((s) => [s]),
    hostileStringArb.map((s) => ({ value: s })),
  );
  if (type === 'string') return notString;
  if (type === 'integer' || type === 'number') {
    return fc.oneof(fc.constantFrom('5', '1', '', 'NaN'), fc.boolean(), fc.constant(null), fc.constant([1]), fc.constant({}), ...(type === 'integer' ? [fc.constantFrom(1.5, 0.1)] : []));
  }
  if (type === 'boolean') return fc.oneof(fc.constantFrom('true', 'false', 1, 0, 'yes'), fc.constant(null), fc.constant([true]), fc.constant({}));
  if (type === 'array') return fc.oneof(fc.constant({}), fc.constant('[]'), fc.integer(), fc.constant(null), fc.constant({ 0: {} }));
  if (type === 'object') return fc.oneof(fc.constant([]), fc.constant('{}'), fc.integer(), fc.constant(null));
  return fc.oneof(fc.constant([[[]]]), fc.constant({ '': {} }));
}

/** Byte sequences no UTF-8 decoder may accept. */
export const BAD_UTF8: readonly number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc3, 0x28],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0x80],
];

/** Text that is not one JSON object: refused as `body:` whatever the operation. */
export const BAD_JSON: readonly string[] = [
  '{',
  '}',
  '{"name":',
  '{"name":"x",}',
  "{'name':'x'}",
  '{name:"x"}',
  '{"name":"x"} {"name":"y"}',
  '{"name":"x"}garbage',
  '{"name":NaN}',
  '{"name":Infinity}',
  '{"name":undefined}',
  '{"name":"x" /* comment */}',
  '{"name":"line\nbreak"}',
  '{"name":"tab\tinside"}',
  '{"name":"\u0000"}',
  '{"name":"\\x41"}',
  '{"name":"\\u12"}',
  '{"name":01}',
  '{"name":.5}',
  '{"name":+1}',
  '[',
  '"unterminated',
  'nul\u0000',
  '\u0000',
  'true false',
  'null',
  '[]',
  '[{}]',
  '"a string"',
  '42',
  'true',
  '   ',
  '\ufeff\ufeff{}',
];

// ---------------------------------------------------------------------------------------------
// Requests on the wire

/** One request exactly as it goes on the wire. */
export interface WireRequest {
  method: string;
  /** The request target, as sent (already percent-encoded where it should be). */
  target: string;
  /** Header lines in order, text sent as UTF-8; a name may repeat. Nothing is added (sendRaw writes its own Host and Connection: close). */
  headers: Array<[string, string]>;
  /** The payload; null for none. */
  body: Buffer | null;
  /** Sent in chunks (Transfer-Encoding: chunked) rather than with a Content-Length. */
  chunked: boolean;
  /** Over a fresh socket (sendRaw) rather than a kept-alive one: framings that leave a connection unusable, line breaks that could split a request. */
  raw: boolean;
  /** Why the HTTP layer itself must refuse it (a broken Content-Length, say), when it was built to be. */
  malformed?: string;
  /** Bytes written after the request (past its Content-Length, or with none): to the server, the start of a next request. Raw sockets only. */
  trailing?: Buffer;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const PATH = /^[\x21-\xff]*$/;

/** Whether the request has bytes node:http's own client would refuse to send (text beyond latin1, control characters): the model does not guess where they lead. */
function hasOddBytes(request: Pick<WireRequest, 'method' | 'target' | 'headers'>): boolean {
  if (!TOKEN.test(request.method) || !PATH.test(request.target)) return true;
  return request.headers.some(([name, value]) => !TOKEN.test(name) || !HEADER_VALUE.test(value));
}

/** A short, exact description of a request, to paste into a reproduction. */
export function describeRequest(request: WireRequest): string {
  const how = [request.raw ? 'fresh raw socket' : 'kept-alive socket', ...(request.chunked ? ['chunked'] : []), ...(request.malformed ? [request.malformed] : [])];
  const lines = [`${JSON.stringify(request.method)} ${JSON.stringify(request.target)} (${how.join(', ')})`];
  for (const [name, value] of request.headers) lines.push(`  ${JSON.stringify(name)}: ${JSON.stringify(value.length > 300 ? `${value.slice(0, 300)}...(${value.length} chars)` : value)}`);
  if (request.body === null) {
    lines.push('  (no body)');
  } else {
    const text = request.body.toString('utf8');
    const exact = Buffer.from(text, 'utf8').equals(request.body);
    const shown = text.length > 2000 ? `${text.slice(0, 2000)}...` : text;
    lines.push(`  body (${request.body.length} bytes${exact ? '' : ', not valid UTF-8'}): ${JSON.stringify(shown)}`);
    if (!exact) lines.push(`  body bytes (hex, first 400): ${request.body.subarray(0, 400).toString('hex')}`);
  }
  if (request.trailing) lines.push(`  then, past the declared body, ${request.trailing.length} bytes: ${JSON.stringify(request.trailing.toString('utf8').slice(0, 300))}`);
  return lines.join('\n');
}

/**
 * Sends requests over kept-alive sockets (one request at a time on each, several sockets), or
 * over a fresh raw socket (sendRaw) for what must not share a connection. node:http's own client
 * would double the CPU each request costs here (client and server share one process), and it
 * adds headers and upper-cases methods on its own.
 */
export class WireSender {
  readonly #url: URL;
  readonly #idle: KeptAlive[] = [];
  readonly #all = new Set<KeptAlive>();

  constructor(
    baseUrl: string,
    private readonly timeoutMs = 20_000,
  ) {
    this.#url = new URL(baseUrl);
  }

  get host(): string {
    return this.#url.host;
  }

  send(request: WireRequest): Promise<TestResponse> {
    return request.raw ? this.#sendRaw(request) : this.#sendKeptAlive(request, true);
  }

  destroy(): void {
    for (const connection of this.#all) connection.socket.destroy();
    this.#all.clear();
    this.#idle.length = 0;
  }

  /** The request's bytes exactly as listed, text as UTF-8: nothing is added (no Host, no Connection). */
  static bytesOf(request: WireRequest): Buffer {
    const head = `${request.method} ${request.target} HTTP/1.1\r\n${request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
    const body = request.body && request.chunked ? chunked(request.body, 16 + (request.body.length % 4093)) : request.body;
    return Buffer.concat([Buffer.from(head, 'utf8'), ...(body ? [body] : []), ...(request.trailing ? [request.trailing] : [])]);
  }

  async #sendKeptAlive(request: WireRequest, retry: boolean): Promise<TestResponse> {
    const connection = this.#idle.pop() ?? this.#open();
    const reused = connection.used;
    connection.used = true;
    try {
      const res = await connection.exchange(WireSender.bytesOf(request), request.method === 'HEAD', this.timeoutMs);
      if (connection.reusable) this.#idle.push(connection);
      else this.#close(connection);
      return res;
    } catch (error) {
      this.#close(connection);
      // A kept-alive socket the server closed just as the request went out: once more on a new one (as node:http does).
      if (retry && reused && (error as { beforeAnyByte?: boolean }).beforeAnyByte) return this.#sendKeptAlive(request, false);
      throw error;
    }
  }

  #open(): KeptAlive {
    const connection = new KeptAlive(connect({ host: this.#url.hostname, port: Number(this.#url.port), noDelay: true }));
    this.#all.add(connection);
    return connection;
  }

  #close(connection: KeptAlive): void {
    connection.socket.destroy();
    this.#all.delete(connection);
  }

  /** Over a fresh socket through sendRaw: text beyond latin1 goes as its UTF-8 bytes; a repeated header is repeated with another letter case. */
  #sendRaw(request: WireRequest): Promise<TestResponse> {
    const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    const headers: Record<string, string> = {};
    for (const [name, value] of request.headers) {
      if (name.toLowerCase() === 'host') continue;
      let spelled = bytes(name);
      for (const variant of [spelled, spelled.toLowerCase(), spelled.toUpperCase(), titleCase(spelled), `${spelled} `]) {
        if (!(variant in headers)) {
          spelled = variant;
          break;
        }
      }
      headers[spelled] = bytes(value);
    }
    const framed = request.body && request.chunked ? chunked(request.body, 16 + (request.body.length % 4093)) : request.body;
    const body = request.trailing ? Buffer.concat([framed ?? Buffer.alloc(0), request.trailing]) : framed;
    return sendRaw(`http://${this.#url.host}`, { method: bytes(request.method), path: bytes(request.target), headers, ...(body ? { body } : {}) });
  }
}

function titleCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

/**
 * One kept-alive connection: a request written, its answer read (1xx skipped; Content-Length,
 * chunked, or to the close), with parseAnswer (api.ts), which says where each answer ends.
 */
class KeptAlive {
  used = false;
  /** False once an answer said Connection: close, or the request was still being written when it came. */
  reusable = true;
  #buffer: Buffer = Buffer.alloc(0);
  #closed = false;
  #waiting: ((error?: Error) => void) | null = null;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#waiting?.();
    });
    socket.on('error', (error) => this.#waiting?.(error));
    socket.on('close', () => {
      this.#closed = true;
      this.#waiting?.();
    });
  }

  exchange(bytes: Buffer, head: boolean, timeoutMs: number): Promise<TestResponse> {
    if (this.#closed || this.#buffer.length > 0) return Promise.reject(Object.assign(new Error('the kept-alive connection was closed'), { beforeAnyByte: true }));
    return new Promise((resolve, reject) => {
      let written = false;
      const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      const finish = (error?: Error) => {
        if (error) {
          clearTimeout(timer);
          this.#waiting = null;
          reject(Object.assign(error, { beforeAnyByte: this.#buffer.length === 0 }));
          return;
        }
        const parsed = parseAnswer(this.#buffer, head, this.#closed);
        if (!parsed) {
          if (this.#closed) finish(new Error(`connection closed ${this.#buffer.length === 0 ? 'without an answer' : 'before the whole answer'}`));
          return;
        }
        clearTimeout(timer);
        this.#waiting = null;
        this.#buffer = this.#buffer.subarray(parsed.length);
        this.reusable = written && !this.#closed && !/close/i.test(String(parsed.response.headers.connection ?? '')) && this.#buffer.length === 0;
        resolve(parsed.response);
      };
      this.#waiting = finish;
      this.socket.write(bytes, () => {
        written = true;
      });
    });
  }
}

/** Runs `work` over `items` with at most `limit` in flight; results in order. */
export async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

// ---------------------------------------------------------------------------------------------
// The books

/** Row counts of every table in the books, in one statement. */
export function tableCounter(db: Db): () => Record<string, number> {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map(
    (row) => row.name,
  );
  const statement = db.prepare(`SELECT ${tables.map((name, i) => `(SELECT count(*) FROM "${name}") AS t${i}`).join(', ')}`);
  return () => {
    const row = statement.get() as Record<string, bigint | number>;
    return Object.fromEntries(tables.map((name, i) => [name, Number(row[`t${i}`])]));
  };
}

/** Every change this connection made so far (INSERT, UPDATE, DELETE, rolled back or not): the server shares it. */
export function totalChanges(db: Db): number {
  return Number((db.prepare('SELECT total_changes() AS n').get() as { n: bigint | number }).n);
}

/** The tables whose counts differ, as `name before->after`. */
export function countDifferences(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys({ ...before, ...after })
    .filter((name) => before[name] !== after[name])
    .map((name) => `${name} ${before[name]}->${after[name]}`);
}

// ---------------------------------------------------------------------------------------------
// Answers

export interface AnswerExpectations {
  /** Under /api/v1 (or refused by the HTTP layer): the answer must be JSON. */
  api: boolean;
  head: boolean;
  /** Field paths a validation_failed message may start with: declared ones and names the request sent. */
  fieldPaths: { has(path: string): boolean };
}

/** `lines.3.quantity` and `lines.N.quantity` compare equal. */
export function normalizePath(path: string): string {
  return path.replace(/(^|\.)[0-9]+(?=\.|$)/g, '$1N');
}

const UNKNOWN_ONE = ': is not a recognized field';
const UNKNOWN_MANY = ': are not recognized fields';

/** What is wrong with a validation_failed message, or null: it must start with a field path (spec, Errors rule 2). */
export function validationMessageProblem(message: string, fieldPaths: { has(path: string): boolean }): string | null {
  const known = (path: string) => fieldPaths.has(path) || fieldPaths.has(normalizePath(path));
  for (const suffix of [UNKNOWN_ONE, UNKNOWN_MANY]) {
    if (message.endsWith(suffix)) {
      const listed = message.slice(0, -suffix.length);
      if (known(listed) || listed.split(', ').every(known)) return null;
      return `lists ${JSON.stringify(listed)}, which is not what the request sent`;
    }
  }
  const colon = message.indexOf(': ');
  if (colon < 0) return 'does not start with a field path and ": "';
  for (let at = colon; at >= 0; at = message.indexOf(': ', at + 1)) {
    if (known(message.slice(0, at))) return null;
  }
  return `starts with ${JSON.stringify(message.slice(0, colon))}, not a field the operation declares or the request sent`;
}

/** Everything wrong with one answer by the spec's rules for every answer, or [] (status, error body, request id, headers). */
export function answerProblems(res: TestResponse, expect: AnswerExpectations): string[] {
  const problems: string[] = [];
  if (res.status >= 500 || res.status < 200) problems.push(`answered ${res.status}`);
  const requestId = res.headers['x-request-id'];
  if (typeof requestId !== 'string' || requestId === '') problems.push('no x-request-id header');
  if (Object.keys(res.headers).some((name) => name.toLowerCase().startsWith('access-control-'))) problems.push('carries an access-control-* header');
  if (expect.head) {
    if (![401, 404, 422, 429].includes(res.status)) problems.push(`HEAD answered ${res.status}, not 404 (or 401, 422, 429 before it)`);
    return problems;
  }
  const json = /^application\/json(;|$)/.test(String(res.headers['content-type'] ?? ''));
  if (expect.api && !json) problems.push(`content-type ${String(res.headers['content-type'])} is not JSON`);
  if (res.status < 400) {
    if (expect.api && (res.body === undefined || res.body === null || typeof res.body !== 'object')) problems.push('a success without a JSON object body');
    return problems;
  }
  if (!expect.api && !json) return problems;
  const body = res.body as { error?: Record<string, unknown> } | undefined;
  if (!body || typeof body !== 'object' || Object.keys(body).join() !== 'error' || typeof body.error !== 'object' || body.error === null) {
    problems.push(`the body is not {error: {...}}: ${res.text.slice(0, 200)}`);
    return problems;
  }
  const error = body.error;
  if (Object.keys(error).sort().join() !== 'code,message,requestId') problems.push(`error has the fields ${Object.keys(error).sort().join()}, not code,message,requestId`);
  const code = error.code as SpecErrorCode;
  if (!(SPEC_ERROR_CODES as readonly string[]).includes(String(code))) {
    problems.push(`error code ${String(code)} is not in the spec's closed list`);
  } else if (SPEC_ERROR_STATUS[code] !== res.status) {
    problems.push(`error code ${code} came with status ${res.status}, not ${SPEC_ERROR_STATUS[code]}`);
  }
  if (typeof error.message !== 'string' || error.message === '') problems.push('error.message is not a non-empty string');
  if (error.requestId !== requestId) problems.push(`error.requestId ${String(error.requestId)} differs from x-request-id ${String(requestId)}`);
  if (code === 'validation_failed' && typeof error.message === 'string') {
    const problem = validationMessageProblem(error.message, expect.fieldPaths);
    if (problem) problems.push(`validation_failed message ${JSON.stringify(error.message)} ${problem}`);
  }
  const rateHeaders = Object.keys(res.headers).filter((name) => name.toLowerCase().startsWith('ratelimit-'));
  if (code === 'rate_limited') {
    if (!/^[1-9][0-9]*$/.test(String(res.headers['retry-after'] ?? ''))) problems.push(`rate_limited without a retry-after of whole seconds (${String(res.headers['retry-after'])})`);
    if (rateHeaders.length > 0) problems.push(`rate_limited carries ${rateHeaders.join(', ')}`);
  }
  if ((code === 'invalid_key' || code === 'insufficient_scope') && rateHeaders.length > 0) problems.push(`${code} carries ${rateHeaders.join(', ')}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// What the server must do with a request

/** What a working key can do, for the model and the checks. */
export interface KeyScope {
  label: string;
  tenant: string;
  /** The businesses the key reaches. */
  reach: readonly string[];
  writes: boolean;
}

export interface Prediction {
  /** Why the server must refuse the request whatever the books hold, or null when it may accept it. */
  refusal: string | null;
  /** The operation the request reaches, when the model could tell. */
  operation: Operation | null;
  /** The key that authenticates it, when one does. */
  key: KeyScope | null;
  /** Names and field paths the request itself sent (query names, body keys at every depth). */
  sentPaths: Set<string>;
  /** The body as the server parses it, when it does. */
  body: Record<string, unknown> | null;
  params: Record<string, string> | null;
  query: Record<string, string> | null;
}

const API_PREFIX = '/api/v1';
/** Characters parseurl takes as they are; with anything else the path may be rewritten (legacy url.parse), so the model does not guess. */
const PLAIN_TARGET = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*$/;
/** Headers node:http keeps only the first of (the rest it drops); others it joins with ", ". */
const FIRST_WINS = new Set(['authorization', 'content-type', 'content-length', 'host', 'user-agent', 'referer', 'from', 'location', 'max-forwards', 'retry-after', 'etag', 'last-modified', 'server', 'age', 'expires', 'proxy-authorization', 'if-modified-since', 'if-unmodified-since']);
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON']);
const NOT_JSON_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/vnd.api+json', 'json', 'text/json', 'application/xml']);
const PRINTABLE_KEY = /^[\x20-\x7e]{1,200}$/;

/** Header values as node:http hands them to the app: names lower-cased, values trimmed, repeats dropped or joined. */
export function receivedHeaders(request: WireRequest): Record<string, string> {
  const seen: Record<string, string> = {};
  for (const [name, rawValue] of request.headers) {
    const key = name.toLowerCase();
    const value = rawValue.replace(/^[ \t]+|[ \t]+$/g, '');
    if (!(key in seen)) seen[key] = value;
    else if (!FIRST_WINS.has(key)) seen[key] = key === 'cookie' ? `${seen[key]}; ${value}` : `${seen[key]}, ${value}`;
  }
  return seen;
}

/**
 * A model of the request pipeline (src/app.ts, src/http/operation.ts, src/http/body.ts) that
 * says when a request must be refused whatever the books hold: bad framing, no Host, a path
 * no route serves, a key that does not work or cannot write, a body or query the operation's
 * schemas refuse. It reuses the server's own parsers and validator (strictUtf8,
 * parseJsonObject, coerceQuery, schemaProblem), so it predicts the pipeline, not the spec; where
 * it cannot be sure (odd characters in the path, an encoding it does not model) it says null.
 */
export function predict(request: WireRequest, operations: readonly Operation[], keys: ReadonlyMap<string, KeyScope>): Prediction {
  const prediction: Prediction = { refusal: null, operation: null, key: null, sentPaths: new Set(), body: null, params: null, query: null };
  const refuse = (why: string): Prediction => ({ ...prediction, refusal: why });
  const headers = receivedHeaders(request);
  for (const path of sentPaths(request, headers)) prediction.sentPaths.add(path);
  const token = /^bearer ([!-~]{1,200})$/i.exec(headers.authorization ?? '')?.[1];
  const key = token === undefined ? undefined : keys.get(token);
  prediction.key = key ?? null;
  if (request.malformed) return refuse(`http: ${request.malformed}`);
  if (request.headers.filter(([name]) => name.toLowerCase() === 'content-length').length > 1) return refuse('http: Content-Length twice');
  if (headers['content-length'] !== undefined && headers['transfer-encoding'] !== undefined) return refuse('http: Content-Length and Transfer-Encoding');
  if (headers.host === undefined) return refuse('http: no Host');
  if (hasOddBytes(request)) return prediction;
  if (!PLAIN_TARGET.test(request.target)) return prediction;
  const question = request.target.indexOf('?');
  const pathname = question < 0 ? request.target : request.target.slice(0, question);
  const querystring = question < 0 ? '' : request.target.slice(question + 1);
  if (pathname !== API_PREFIX && !pathname.startsWith(`${API_PREFIX}/`)) return request.method === 'GET' ? prediction : refuse('path: outside /api/v1 and not a GET');

  if (!key) return refuse('auth: no working key');
  if (request.method !== 'GET' && request.method !== 'POST') return refuse(`method: ${request.method}`);
  const route = matchRoute(operations, request.method, pathname);
  if (!route) return refuse('path: no route');
  prediction.operation = route.operation;
  if (route.operation.method === 'POST' && !key.writes) return refuse('scope: a read-only key on a write');

  // Body rules (readJsonBody), in the server's order.
  const length = headers['content-length'];
  if (length !== undefined && !/^[0-9]+$/.test(length)) return refuse('body: Content-Length not a number');
  const hasBody = headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
  let body: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (hasBody) {
    const type = headers['content-type'];
    if (type === undefined || NOT_JSON_TYPES.has(type)) return refuse('body: not application/json');
    if (!JSON_TYPES.has(type)) return prediction;
    if (Number(length ?? '0') > MAX_BODY_BYTES) return refuse('body: declared over the limit');
    let bytes = request.body ?? Buffer.alloc(0);
    const encoding = headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      if (encoding !== 'gzip' && encoding !== 'deflate' && encoding !== 'br') return prediction;
      try {
        bytes = decompress(encoding, bytes);
      } catch {
        return refuse('body: does not decode');
      }
    }
    if (bytes.length > MAX_BODY_BYTES) return refuse('body: over the limit');
    try {
      body = parseJsonObject(strictUtf8(bytes));
    } catch {
      return refuse('body: not a JSON object of valid UTF-8');
    }
  }
  prediction.body = body;

  let query: Record<string, string>;
  try {
    query = parseQueryLikeTheServer(querystring);
  } catch (error) {
    return refuse(`query: ${(error as Error).message}`);
  }
  prediction.query = query;
  const params = Object.fromEntries(Object.entries(route.params).map(([name, value]) => [name, safeDecode(value)]));
  prediction.params = params;
  for (const name of Object.keys(route.operation.params.properties)) {
    if (name in query || Object.hasOwn(body, name)) return refuse(`inputs: path parameter ${name} repeated`);
  }
  const problem =
    schemaProblem(route.operation.params, { ...params }) ?? schemaProblem(route.operation.query, coerceQuery(route.operation.query, query)) ?? schemaProblem(route.operation.body, body);
  if (problem) return refuse(`inputs: ${problem}`);
  if (route.operation.method === 'POST' && headers['idempotency-key'] !== undefined && !PRINTABLE_KEY.test(headers['idempotency-key'])) {
    return refuse('inputs: Idempotency-Key not printable ASCII');
  }
  return prediction;
}

/**
 * Names the request itself sent, whatever becomes of it: query names (decoded as the server
 * decodes them, undecodable ones as sent) and the body's key paths (when it parses at all).
 */
function sentPaths(request: WireRequest, headers: Record<string, string>): string[] {
  const paths: string[] = [];
  const question = request.target.indexOf('?');
  if (question >= 0) {
    for (const pair of request.target.slice(question + 1).split('#')[0]!.split('&')) {
      if (pair === '') continue;
      const equals = pair.indexOf('=');
      paths.push(safeDecode((equals < 0 ? pair : pair.slice(0, equals)).replace(/\+/g, ' ')));
    }
  }
  if (request.body !== null && request.body.length > 0) {
    try {
      const encoding = headers['content-encoding'];
      const bytes = encoding === undefined || encoding === 'identity' ? request.body : decompress(encoding, request.body);
      paths.push(...keyPaths(parseJsonObject(strictUtf8(bytes))));
    } catch {
      // Not a JSON object: no names to speak of.
    }
  }
  return paths;
}

/** The query as singleValuedQuery (src/http/operation.ts) reads it: each name once, valid percent-encoded UTF-8. */
function parseQueryLikeTheServer(querystring: string): Record<string, string> {
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  if (querystring === '') return query;
  for (const pair of querystring.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decodeURIComponent((equals < 0 ? pair : pair.slice(0, equals)).replace(/\+/g, ' '));
    const value = decodeURIComponent((equals < 0 ? '' : pair.slice(equals + 1)).replace(/\+/g, ' '));
    if (Object.hasOwn(query, name)) throw new Error(`${name} twice`);
    query[name] = value;
  }
  return query;
}

/** A body as the server inflates it (gzip, deflate or br); throws when it does not decode or the encoding is another. */
function decompress(encoding: string, bytes: Buffer): Buffer {
  const limit = { maxOutputLength: MAX_BODY_BYTES * 2 };
  if (encoding === 'gzip') return gunzipSync(bytes, limit);
  if (encoding === 'deflate') return inflateSync(bytes, limit);
  if (encoding === 'br') return brotliDecompressSync(bytes, limit);
  throw new Error(`no model of Content-Encoding ${encoding}`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const routeCache = new WeakMap<readonly Operation[], Array<{ operation: Operation; pattern: RegExp; names: string[] }>>();

/** The operation the router gives `method pathname` (strict, case-sensitive, a parameter is one segment). */
export function matchRoute(operations: readonly Operation[], method: string, pathname: string): { operation: Operation; params: Record<string, string> } | null {
  let routes = routeCache.get(operations);
  if (!routes) {
    routes = operations.map((operation) => ({
      operation,
      names: [...operation.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!),
      pattern: new RegExp(`^${API_PREFIX}${operation.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '([^/]+)')}$`),
    }));
    routeCache.set(operations, routes);
  }
  for (const route of routes) {
    if (route.operation.method !== method) continue;
    const match = route.pattern.exec(pathname);
    if (match) return { operation: route.operation, params: Object.fromEntries(route.names.map((name, i) => [name, match[i + 1]!])) };
  }
  return null;
}

/** Every key path of a parsed body, array indices included (`lines.0.quantity`), down to `depth` levels (deeper ones are never named in a message). */
export function keyPaths(value: unknown, prefix = '', depth = 16, paths: string[] = []): string[] {
  if (value === null || typeof value !== 'object' || depth === 0) return paths;
  for (const [key, child] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    paths.push(path);
    keyPaths(child, path, depth - 1, paths);
  }
  return paths;
}
