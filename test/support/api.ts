import { expect } from 'chai';
import { connect } from 'node:net';
import type { Tenant, UpdateTenantInput } from '../../src/books/tenants.js';
import { updateTenant } from '../../src/books/tenants.js';
import type { Business } from '../../src/books/businesses.js';
import type { CreatedKey, CreateKeyInput } from '../../src/books/keys.js';
import type { Plan } from '../../src/books/plans.js';
import type { Db } from '../../src/db/connection.js';
import { startTestApp, type TestApp, type TestResponse } from './app.js';
import { buildBusiness, buildKey, buildTenant, TEST_ACTOR } from './factories.js';

/** Helpers for the HTTP-level API tests in test/api/. */

/** The spec's closed list of error codes (spec, Errors), written out here rather than imported. */
export const SPEC_ERROR_CODES = [
  'invalid_key',
  'insufficient_scope',
  'entity_not_allowed',
  'period_locked',
  'read_only_billing_state',
  'rate_limited',
  'validation_failed',
  'not_found',
  'conflict',
  'internal_error',
] as const;

export type SpecErrorCode = (typeof SPEC_ERROR_CODES)[number];

/** The spec's table of codes and statuses (spec, Errors), written out rather than imported. */
export const SPEC_ERROR_STATUS: Readonly<Record<SpecErrorCode, number>> = {
  invalid_key: 401,
  insufficient_scope: 403,
  entity_not_allowed: 403,
  period_locked: 409,
  read_only_billing_state: 402,
  rate_limited: 429,
  validation_failed: 422,
  not_found: 404,
  conflict: 409,
  internal_error: 500,
};

const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Every UUID in a text, lower-cased, each once. */
export function uuidsIn(text: string): string[] {
  return [...new Set([...text.matchAll(UUID_ANYWHERE)].map((match) => match[0].toLowerCase()))];
}

/** One tenant (an account, in the spec's words) with its businesses and keys, ready to call the API. */
export interface ApiTenant {
  /** The tenant's id. */
  id: string;
  record: Tenant;
  businesses: Business[];
  keys: CreatedKey[];
  /** The first key's value. */
  key: string;
  business: Business;
}

export interface TenantOptions {
  plan?: Plan;
  /** How many businesses to create (default 1). */
  businesses?: number;
  /** One entry per key to create (default: one unlimited read-write key). */
  keys?: Array<Partial<Omit<CreateKeyInput, 'tenantId'>>>;
  name?: string;
}

/**
 * Registers the suite's before/after hooks: a fresh app over its own SQLite file with one
 * tenant (large plan unless told otherwise), handed to `receive` once started.
 */
export function useTenantApp(receive: (started: { app: TestApp; tenant: ApiTenant }) => void, options: TenantOptions = { plan: 'large' }): void {
  let app: TestApp | undefined;
  before(async () => {
    const started = await startTestApp();
    app = started;
    receive({ app: started, tenant: buildApiTenant(started, options) });
  });
  after(async () => {
    await app?.close();
  });
}

/**
 * Registers the suite's hooks: one app started at `at`, handed to `receive`, and the clock put
 * back at `at` before each test (a test that moves it leaves the next one unmoved).
 */
export function useAppAt(at: string, receive: (app: TestApp) => void): void {
  let app: TestApp | undefined;
  before(async () => {
    app = await startTestApp(at);
    receive(app);
  });
  after(async () => {
    await app?.close();
  });
  beforeEach(() => {
    app!.clock.set(at);
  });
}

/**
 * Registers hooks for a suite where state must not leak between tests: one app for the suite,
 * and before each test the clock back at `at` and a fresh tenant (its own names, budgets,
 * locks and billing state), handed to `receive`.
 */
export function useFreshTenantPerTest(
  receive: (started: { app: TestApp; tenant: ApiTenant }) => void,
  options: { at?: string; tenant?: TenantOptions } = {},
): void {
  const at = options.at ?? '2026-03-15T12:00:00.000Z';
  let app: TestApp | undefined;
  before(async () => {
    app = await startTestApp(at);
  });
  after(async () => {
    await app?.close();
  });
  beforeEach(() => {
    app!.clock.set(at);
    receive({ app: app!, tenant: buildApiTenant(app!, options.tenant ?? {}) });
  });
}

export function buildApiTenant(app: TestApp, options: TenantOptions = {}): ApiTenant {
  const tenant = buildTenant(app.db, app.clock, {
    plan: options.plan ?? 'small',
    ...(options.name ? { name: options.name } : {}),
  });
  const businesses = Array.from({ length: options.businesses ?? 1 }, () => buildBusiness(app.db, app.clock, { tenantId: tenant.id }));
  const keys = (options.keys ?? [{}]).map((overrides) => buildKey(app.db, app.clock, { ...overrides, tenantId: tenant.id }));
  return { id: tenant.id, record: tenant, businesses, keys, key: keys[0]!.key, business: businesses[0]! };
}

export function setTenant(app: TestApp, tenantId: string, input: UpdateTenantInput): Tenant {
  return updateTenant(app.db, app.clock, TEST_ACTOR, tenantId, input);
}

/** Asserts the spec's error body exactly: {error: {code, message, requestId}}, status from the code table. */
export function expectError(res: TestResponse, status: number, code: SpecErrorCode, messagePrefix?: string): void {
  expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  expect(Object.keys(res.body ?? {})).to.deep.equal(['error']);
  expect(Object.keys(res.body.error).sort()).to.deep.equal(['code', 'message', 'requestId']);
  expect(SPEC_ERROR_CODES).to.include(res.body.error.code);
  expect(res.body.error.code).to.equal(code);
  expect(res.body.error.message).to.be.a('string').and.not.equal('');
  expect(res.body.error.requestId).to.be.a('string').and.equal(res.headers['x-request-id']);
  if (messagePrefix !== undefined) expect(res.body.error.message.startsWith(messagePrefix), `message "${res.body.error.message}"`).to.equal(true);
}

/** A validation_failed answer whose message starts with `fieldPath:`. */
export function expectInvalid(res: TestResponse, fieldPath: string): void {
  expectError(res, 422, 'validation_failed', `${fieldPath}:`);
}

/** Names of the ratelimit-* headers present on a response. */
export function rateLimitHeaderNames(res: TestResponse): string[] {
  return Object.keys(res.headers).filter((name) => name.toLowerCase().startsWith('ratelimit-'));
}

export function expectNoRateLimitHeaders(res: TestResponse): void {
  expect(rateLimitHeaderNames(res), 'ratelimit-* headers').to.deep.equal([]);
}

export interface RateLimitHeaders {
  limit: number;
  remaining: number;
  reset: number;
}

export function rateLimitHeaders(res: TestResponse): RateLimitHeaders {
  expect(rateLimitHeaderNames(res).sort(), `ratelimit-* headers on a ${res.status}`).to.deep.equal([
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
  ]);
  const read = (name: string): number => {
    const value = String(res.headers[name]);
    expect(value, name).to.match(/^[0-9]+$/);
    return Number(value);
  };
  return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining'), reset: read('ratelimit-reset') };
}

/** The response text with its request id blanked, for comparing bodies byte for byte. */
export function withoutRequestId(res: TestResponse): string {
  const id = String(res.headers['x-request-id']);
  expect(id.length).to.be.greaterThan(0);
  return res.text.split(id).join('<request-id>');
}

/** A small count from the books connection (which hands back bigints). */
export function countRows(db: Db, sql: string, ...params: unknown[]): number {
  const row = db.prepare(sql).get(...params) as Record<string, bigint | number> | undefined;
  expect(row, sql).to.not.equal(undefined);
  return Number(Object.values(row!)[0]);
}

export function unixSeconds(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

/** Sends `count` requests one after another and returns the last response. */
export async function repeat(count: number, send: () => Promise<TestResponse>): Promise<TestResponse> {
  let last: TestResponse | undefined;
  for (let i = 0; i < count; i++) {
    last = await send();
  }
  if (!last) throw new Error('repeat: count must be at least 1');
  return last;
}

export interface RawRequest {
  method: string;
  path: string;
  /** Header lines exactly as sent (name -> value); nothing is added except Host (unless withoutHost) and Connection: close. */
  headers?: Record<string, string>;
  /** Body bytes, written as-is (already chunk-encoded if a transfer-encoding header says so). */
  body?: Buffer;
  /** Leave out the Host header. */
  withoutHost?: boolean;
  /** HTTP/1.1 unless told. */
  version?: '1.0' | '1.1';
}

/**
 * One HTTP/1.1 request over a bare socket, for requests node:http will not send as asked (no
 * Content-Length on a POST, huge bodies the server may refuse early). Writing stops as soon
 * as the answer starts arriving, and a reset or broken pipe after that is tolerated: what
 * counts is the response the server sent.
 */
export function sendRaw(baseUrl: string, request: RawRequest): Promise<TestResponse> {
  const url = new URL(baseUrl);
  const head =
    `${request.method} ${request.path} HTTP/${request.version ?? '1.1'}\r\n` +
    (request.withoutHost ? '' : `host: ${url.host}\r\n`) +
    `connection: close\r\n` +
    Object.entries(request.headers ?? {})
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const received: Buffer[] = [];
    let answered = false;
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      // At the end of the connection a response without a length ends where the bytes end.
      const parsed = parseResponse(Buffer.concat(received), socket.destroyed || error !== undefined);
      if (parsed) {
        settled = true;
        resolve(parsed);
      } else if (error || !answered) {
        settled = true;
        reject(error ?? new Error('sendRaw: connection closed without a complete response'));
      }
    };
    socket.setTimeout(15_000, () => {
      socket.destroy();
      finish(new Error('sendRaw: timed out'));
    });
    socket.on('data', (chunk: Buffer) => {
      answered = true;
      received.push(chunk);
      const parsed = parseResponse(Buffer.concat(received));
      if (parsed) {
        finish();
        socket.destroy();
      }
    });
    socket.on('error', (error) => finish(error));
    socket.on('close', () => finish(new Error('sendRaw: connection closed before a complete response')));
    socket.on('connect', () => {
      void writeAll(socket, Buffer.concat([Buffer.from(head, 'latin1'), request.body ?? Buffer.alloc(0)]), () => answered);
    });
  });
}

async function writeAll(socket: ReturnType<typeof connect>, data: Buffer, stop: () => boolean): Promise<void> {
  const pieceBytes = 16 * 1024;
  for (let at = 0; at < data.length; at += pieceBytes) {
    if (stop() || socket.destroyed) return;
    const flushed = socket.write(data.subarray(at, at + pieceBytes));
    if (!flushed) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }
}

/** A complete HTTP/1.1 response from the bytes so far, or null while more are needed. */
export function parseResponse(bytes: Buffer, connectionEnded = false): TestResponse | null {
  return parseAnswer(bytes, false, connectionEnded)?.response ?? null;
}

/** One whole HTTP/1.1 answer at the start of `bytes` (interim 1xx ones skipped), and how many bytes it took; null while more are needed. */
export function parseAnswer(bytes: Buffer, head: boolean, ended: boolean): { response: TestResponse; length: number } | null {
  let at = 0;
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0) return null;
    const [statusLine, ...lines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(statusLine ?? '')?.[1] ?? 0);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const start = headEnd + 4;
    if (status >= 100 && status < 200) {
      at = start;
      continue;
    }
    let end: number;
    let body: Buffer;
    if (head || status === 204 || status === 304) {
      end = start;
      body = Buffer.alloc(0);
    } else if (headers['content-length'] !== undefined) {
      end = start + Number(headers['content-length']);
      if (bytes.length < end) return null;
      body = bytes.subarray(start, end);
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const decoded = decodeChunked(bytes, start);
      if (!decoded) return null;
      ({ end, body } = decoded);
    } else if (ended) {
      end = bytes.length;
      body = bytes.subarray(start);
    } else {
      return null;
    }
    const text = body.toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { response: { status, headers, body: json, text }, length: end };
  }
}

/** A chunked body starting at `from`: its bytes and where the message ends (after the trailer), or null while more are needed. */
export function decodeChunked(bytes: Buffer, from = 0): { end: number; body: Buffer } | null {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    const start = lineEnd + 2;
    if (size === 0) {
      const trailerEnd = bytes.indexOf('\r\n', start);
      return trailerEnd < 0 ? null : { end: trailerEnd + 2, body: Buffer.concat(parts) };
    }
    if (bytes.length < start + size + 2) return null;
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}

/** Encodes a body as HTTP/1.1 chunks of `chunkBytes` each, with the closing zero chunk. */
export function chunked(body: Buffer, chunkBytes = 64 * 1024): Buffer {
  const pieces: Buffer[] = [];
  for (let at = 0; at < body.length; at += chunkBytes) {
    const piece = body.subarray(at, at + chunkBytes);
    pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n', 'latin1'));
  }
  pieces.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return Buffer.concat(pieces);
}

/** A JSON object body of exactly `totalBytes` bytes: `{"name":"..."}` padded with spaces. */
export function paddedJsonObject(fields: Record<string, unknown>, totalBytes: number): Buffer {
  const json = JSON.stringify(fields);
  const padding = totalBytes - Buffer.byteLength(json);
  if (padding < 0) throw new Error('paddedJsonObject: fields alone exceed the size');
  const body = Buffer.from(`${json.slice(0, -1)}${' '.repeat(padding)}}`, 'utf8');
  expect(body.length).to.equal(totalBytes);
  return body;
}
