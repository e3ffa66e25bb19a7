import { type Agent, request as httpRequest } from 'node:http';
import { type FixedClock, fixedClock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import { type Db, openDb } from '../../src/db/connection.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { ConnectionLimits } from '../../src/http/connections.js';
import { startServer } from '../../src/server.js';
import { JOBS_OFF, throwawayBooks, throwawayConfig } from '../../src/db/throwaway-books.js';
import type { Operation } from '../../src/http/operation.js';
import type { ReplyViolation } from '../../src/http/reply-check.js';
import { documentCheckFor } from './document-check.js';
import { checkReply, recordReply, recordViolation } from './replies.js';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: any;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** The address to send from (any 127.x.y.z is this machine), to be a client other than 127.0.0.1. */
  localAddress?: string;
  /** Connections to reuse (test/support/burst.ts); by default each request opens its own. */
  agent?: Agent;
}

export interface TestApp {
  url: string;
  /**
   * The test's own connection to the books the server serves: it reads them, and writes test
   * data straight into them, around the write door. The server's connection is guarded, as in
   * production, so a write the server makes outside the door still fails.
   */
  db: Db;
  /** The server's own connection (guarded), for what only it can show (its pragmas, its caches). */
  serverDb: Db;
  clock: FixedClock;
  dbPath: string;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  get(path: string, key?: string | null, headers?: Record<string, string>): Promise<TestResponse>;
  post(path: string, key: string | null, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** Reads the TLS files again (what SIGHUP does under `daybook serve`). */
  reloadTls(): boolean;
  /** Runs one of the server's jobs now, as `daybook jobs run` would (every job is off by default here). */
  runJob(name: string): Promise<void>;
  /** Runs `work`, whose requests provoke a 500 on purpose (the test asserts it). */
  allowingFaults<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Starts the real app on a free loopback port over a fresh SQLite file, with a fixed clock.
 * Requests go over real HTTP (node:http, so tests control every header and byte).
 */
export interface TestAppOptions {
  operations?: readonly Operation[];
  /** Where reply violations go; by default the suite-wide record that request() checks. */
  onReplyViolation?: (violation: ReplyViolation) => void;
  /** Serve an existing books file (the caller owns it and removes it) instead of a fresh one. */
  dbPath?: string;
  /** Settings to use instead of the defaults (an SMTP server, a rate provider, the site URL). */
  config?: Partial<Config>;
  /** Where the server's log lines go (default: nowhere). */
  log?: Logger;
  /** Shorter connection limits, to see them act. */
  connectionLimits?: Partial<ConnectionLimits>;
}

export async function startTestApp(at = '2026-03-15T12:00:00.000Z', options: TestAppOptions = {}): Promise<TestApp> {
  const books = options.dbPath ? null : await throwawayBooks('daybook-api-');
  const dbPath = options.dbPath ?? books!.path;
  const clock = fixedClock(at);
  // No job runs on its schedule unless a test asks for it: a job landing in the middle of a
  // test (the outbox every wall-clock minute) would write to the books the test is reading.
  const config = throwawayConfig(dbPath, { ...JOBS_OFF, ...options.config });
  const server = await startServer(config, {
    clock,
    log: options.log ?? createLogger('silent'),
    onReplyViolation: options.onReplyViolation ?? recordViolation,
    onReply: recordReply,
    ...(options.operations ? { operations: options.operations } : {}),
    ...(options.connectionLimits ? { connectionLimits: options.connectionLimits } : {}),
  });
  const testDb = openDb(dbPath, { synchronous: 'normal' });
  const expectations = { allowFault: false };
  // The published document, fetched once the first /api/v1 answer needs checking against it.
  let published: Promise<TestResponse> | undefined;
  const request = async (method: string, path: string, options: RequestOptions = {}) => {
    const res = await sendRequest(server.url, method, path, options);
    checkReply(method, path, res, expectations);
    if (path.startsWith('/api/v1/')) {
      published ??= sendRequest(server.url, 'GET', '/openapi/v1.json');
      const problem = documentCheckFor((await published).body).problem(method, path, res);
      if (problem) throw new Error(`the reply broke the published OpenAPI document: ${problem}`);
    }
    return res;
  };
  return {
    url: server.url,
    db: testDb,
    serverDb: server.db,
    clock,
    dbPath,
    request,
    get: (path, key, headers) => request('GET', path, { key, headers }),
    post: (path, key, body, headers) => request('POST', path, { key, body, headers }),
    reloadTls: () => server.reloadTls(),
    runJob: (name) => server.runJob(name),
    async allowingFaults(work) {
      expectations.allowFault = true;
      try {
        return await work();
      } finally {
        expectations.allowFault = false;
      }
    },
    async close() {
      testDb.close();
      await server.close();
      books?.remove();
    },
  };
}

export function sendRequest(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload: string | Buffer | undefined = options.rawBody;
  if (payload === undefined && options.body !== undefined) {
    payload = JSON.stringify(options.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length' || h.toLowerCase() === 'transfer-encoding')) {
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method, headers, agent: options.agent ?? false, ...(options.localAddress ? { localAddress: options.localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
