import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { buildApp, type DaybookApp } from './app.js';
import { startJobPool } from '../jobs/pool.js';
import { booksRecorder, scheduledJobs } from '../jobs/registry.js';
import type { Operation } from './http/operation.js';
import type { ReplyObserver, ReplyViolation } from './http/reply-check.js';
import { type Clock, systemClock } from './clock.js';
import { type Config, ConfigError } from './config.js';
import { type Db, openDb } from './db/connection.js';
import { migrateLatest } from './db/migrate.js';
import { ensureWritableBooksFolder } from './db/books-folder.js';
import { acquireServerLock } from './db/server-lock.js';
import { errorBody } from './errors.js';
import { releaseAbandonedClaims } from './books/idempotency.js';
import { ensureServerSecrets } from './books/secrets.js';
import { createLogger, type Logger } from './log.js';

export interface RunningServer {
  /** Base address, e.g. http://127.0.0.1:3000 (the real port when 0 was asked for). */
  url: string;
  port: number;
  host: string;
  db: Db;
  /** Runs one of the pool's jobs now (tests; an operator uses `daybook jobs run`). */
  runJob(name: string): Promise<void>;
  /** Stops taking connections, lets requests in flight and running jobs finish (each within a bound), closes the books. */
  close(): Promise<void>;
}

/** How long close() lets requests in flight finish before it closes their connections. */
export const REQUEST_DRAIN_MS = 10_000;

/**
 * How long a connection may take over each part of its life, and how many may be open at
 * once. A slow or idle client (slowloris) holds one of the connections and nothing else: it
 * is answered and cut when its time is up, while every other client is served as usual.
 */
export interface ConnectionLimits {
  /** From the connection's opening (on a kept-alive connection, the next request's first byte) to the end of the request's headers. */
  headersTimeoutMs: number;
  /** From the first byte to the last byte of the request, body included. */
  requestTimeoutMs: number;
  /** How long a kept-alive connection may wait idle for its next request. */
  keepAliveTimeoutMs: number;
  /** How long a connection may go with no byte moving either way (a client that stops reading its answer). */
  idleTimeoutMs: number;
  /** Connections open at once; past it, a new connection is closed before anything is read. */
  maxConnections: number;
  /** How often the header and request timeouts are checked. */
  checkEveryMs: number;
}

export const CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  maxConnections: 1_000,
  checkEveryMs: 1_000,
});

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
  /** Tests may serve their own operations through the real pipeline. */
  operations?: readonly Operation[];
  /** Tests check every reply against its operation's declared responses. */
  onReplyViolation?: (violation: ReplyViolation) => void;
  /** Tests count the operations and statuses they saw answered. */
  onReply?: ReplyObserver;
  /** The books file's server lock, when the caller took it already (demo holds it while it seeds); released on close. */
  heldLock?: () => void;
  /** Tests shorten the connection limits to see them act. */
  connectionLimits?: Partial<ConnectionLimits>;
}

/** Migrates the database, then serves the API until close() (or a signal, see the CLI). */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  ensureWritableBooksFolder(config.db);
  const releaseLock = options.heldLock ?? acquireServerLock(config.db);
  try {
    return await serve(config, options, clock, log, releaseLock);
  } catch (error) {
    releaseLock();
    throw error;
  }
}

async function serve(config: Config, options: StartOptions, clock: Clock, log: Logger, releaseLock: () => void): Promise<RunningServer> {
  await migrateLatest(config.db);
  const db = openDb(config.db, { synchronous: config.sqliteSynchronous });
  let app: DaybookApp | undefined;
  let server: Server;
  try {
    const released = releaseAbandonedClaims(db);
    if (released > 0) log.warn({ released }, 'freed idempotency keys of writes that never committed');
    ensureServerSecrets(db, clock);
    app = buildApp({
      db,
      clock,
      config,
      log,
      ...(options.operations ? { operations: options.operations } : {}),
      ...(options.onReplyViolation ? { onReplyViolation: options.onReplyViolation } : {}),
      ...(options.onReply ? { onReply: options.onReply } : {}),
    });
    server = await listen(app, config, { ...CONNECTION_LIMITS, ...options.connectionLimits });
  } catch (error) {
    app?.close();
    db.close();
    throw error;
  }
  const recorder = booksRecorder(db, clock, config);
  try {
    recorder.plannedOff();
  } catch (error) {
    log.error({ err: error }, 'jobs that are off not recorded');
  }
  const pool = startJobPool(scheduledJobs(app.services), log, { recorder });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${hostForUrl}:${port}`;
  log.info({ url }, 'daybook listening');
  let closed = false;
  const started = app;
  return {
    url,
    port,
    host: config.host,
    db,
    runJob: (name) => pool.runNow(name),
    async close() {
      if (closed) return;
      closed = true;
      await drainRequests(server, log);
      await pool.stop();
      started.close();
      db.close();
      releaseLock();
      log.info('daybook stopped');
    },
  };
}

/**
 * Stops accepting connections and waits for the requests in flight to be answered; a
 * connection still busy after REQUEST_DRAIN_MS (a client that never reads its answer) is cut.
 */
async function drainRequests(server: Server, log: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      log.warn({ waitedMs: REQUEST_DRAIN_MS }, 'requests still open at stop; closing their connections');
      server.closeAllConnections();
    }, REQUEST_DRAIN_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function listen(app: DaybookApp, config: Config, limits: ConnectionLimits): Promise<Server> {
  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkEveryMs,
      // The app refuses a missing Host itself, with the spec's error body (src/app.ts).
      requireHostHeader: false,
    },
    app.callback(),
  );
  server.maxConnections = limits.maxConnections;
  server.setTimeout(limits.idleTimeoutMs);
  answerClientErrors(server, limits);
  answerHalfClosedClients(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenProblem(error, config)));
    server.listen(config.port, config.host, () => resolve());
  });
  return server;
}

/** A port or address the server cannot listen on is a setting to change: one line naming it (exit 2). */
function listenProblem(error: NodeJS.ErrnoException, config: Config): Error {
  const where = `${config.port} on ${config.host}`;
  if (error.code === 'EADDRINUSE') return new ConfigError(`PORT: ${where} is already in use by another program: stop it, or choose another port (--port or PORT)`);
  if (error.code === 'EACCES') return new ConfigError(`PORT: ${where} needs privileges this process does not have: choose a port above 1023 (--port or PORT)`);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') return new ConfigError(`HOST: ${config.host} is not an address of this machine (--host or HOST)`);
  return error;
}

/**
 * A client may send its request and then half-close (FIN) its side; per RFC 9112 that does
 * not mean it wants no answer. Node's http server by default ends its own side as soon as
 * the FIN arrives, so an answer still being worked on (a body being decompressed, a slow
 * handler) is written after the end and lost. With httpAllowHalfOpen the server instead
 * closes the connection after the answer in flight, and at once when there is none.
 * The property is Node's own but undocumented, hence the check that it is still there.
 */
function answerHalfClosedClients(server: Server): void {
  const settings = server as Server & { httpAllowHalfOpen?: unknown };
  if (typeof settings.httpAllowHalfOpen !== 'boolean') throw new Error('node:http Server has no httpAllowHalfOpen: half-closed clients would lose their answers');
  settings.httpAllowHalfOpen = true;
}

/**
 * A request Node cannot parse, or did not receive in time, gets the spec's error body
 * (answerMalformedRequest): once per connection, after the answer to a complete request ahead
 * of it on the same connection, and never as a second answer to a request that has one.
 */
function answerClientErrors(server: Server, limits: ConnectionLimits): void {
  const lastRequest = trackLastRequest(server);
  const refused = new WeakSet<Duplex>();
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    // Bytes behind the bad request may fail to parse too: one answer is enough.
    if (refused.has(socket)) return;
    refused.add(socket);
    const last = lastRequest.get(socket);
    if (last && !last.request.complete && last.response.headersSent) {
      // The request still arriving was answered already (a 401 before its body): just close.
      closeConnection(socket);
    } else if (last?.request.complete && !last.response.writableFinished) {
      // Before Node's own handling of the finished answer, which may end the connection.
      last.response.prependOnceListener('finish', () => answerMalformedRequest(error, socket, limits));
    } else {
      answerMalformedRequest(error, socket, limits);
    }
  });
}

/**
 * The last request of each connection, with its answer. A client may send a request and,
 * without waiting, another behind it (pipelining); when the one behind cannot be parsed, its
 * error answer must wait for the answer ahead, or the client would lose the answer to a write
 * that was made.
 */
function trackLastRequest(server: Server): WeakMap<Duplex, { request: IncomingMessage; response: ServerResponse }> {
  const lastRequest = new WeakMap<Duplex, { request: IncomingMessage; response: ServerResponse }>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    lastRequest.set(request.socket, { request, response });
  });
  return lastRequest;
}

/** How long a connection refused at the socket may take to read its answer before it is cut. */
const REFUSED_CONNECTION_GRACE_MS = 2_000;

/**
 * Ends the server's side of a refused connection (after `lastBytes`, if any), and cuts it
 * after REFUSED_CONNECTION_GRACE_MS: a client that ignores the end and goes on sending would
 * otherwise keep it, since Node checks a connection's timeouts only once.
 */
function closeConnection(socket: Duplex, lastBytes?: string): void {
  if (lastBytes === undefined) socket.end();
  else socket.end(lastBytes);
  setTimeout(() => socket.destroy(), REFUSED_CONNECTION_GRACE_MS).unref();
}

/**
 * A request Node cannot even parse (a bad Content-Length, both Content-Length and
 * Transfer-Encoding, oversized headers), or one not received in time, still gets the spec's
 * error body and a request id, not Node's bare 400 or 408.
 */
function answerMalformedRequest(error: Error & { code?: string }, socket: Duplex, limits: ConnectionLimits): void {
  if (!socket.writable || (error.code === 'ECONNRESET')) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const problem =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? `was not received in time (headers within ${limits.headersTimeoutMs / 1000} s, the whole request within ${limits.requestTimeoutMs / 1000} s)`
      : 'is not a well-formed HTTP/1.1 request';
  const body = JSON.stringify(errorBody('validation_failed', `request: ${problem}`, requestId));
  closeConnection(
    socket,
    'HTTP/1.1 422 Unprocessable Entity\r\n' +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}
