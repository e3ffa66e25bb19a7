import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { errorBody } from '../errors.js';
import { plainAddress } from './client-address.js';
import { TLS_MIN_VERSION, type TlsFiles } from './tls.js';

/**
 * The HTTP server's handling of connections, below the app: how long each part of a
 * connection may take and how many may be open, and an answer in the spec's shape for what
 * never reaches the app (a request that does not parse or does not arrive in time).
 */

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

/**
 * A node:http server for `listener` (node:https with `tls`) with the connection limits set,
 * half-closed clients answered, and requests Node refuses itself answered with the spec's
 * error body.
 */
/** A request answered below the app (it did not parse, or did not arrive in time), for the access log. */
export interface RefusedRequest {
  requestId: string;
  /** The socket's peer: no header of a request that did not parse is believed. */
  client: string;
  scheme: 'http' | 'https';
  reason: string;
}

export function createHttpServer(listener: RequestListener, limits: ConnectionLimits, tls: TlsFiles | null = null, onRefused: (refused: RefusedRequest) => void = () => {}): Server {
  const options: ServerOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkEveryMs,
    // The app refuses a missing Host itself, with the spec's error body (src/app.ts).
    requireHostHeader: false,
  };
  const server = tls ? createHttpsServer({ ...options, ...tlsOptions(tls, limits) }, listener) : createServer(options, listener);
  server.maxConnections = limits.maxConnections;
  server.setTimeout(limits.idleTimeoutMs);
  answerClientErrors(server, limits, onRefused);
  answerHalfClosedClients(server);
  return server;
}

/**
 * Under TLS the same limits hold: a connection that never finishes its handshake is cut like
 * one that never finishes its headers (Node's default would hold it for two minutes, a
 * connection counted against the limit), and a half-closed client keeps its answer (without
 * allowHalfOpen on the TLS socket, httpAllowHalfOpen has no effect).
 */
function tlsOptions(tls: TlsFiles, limits: ConnectionLimits) {
  return { ...tls, minVersion: TLS_MIN_VERSION, handshakeTimeout: limits.headersTimeoutMs, allowHalfOpen: true } as const;
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
function answerClientErrors(server: Server, limits: ConnectionLimits, onRefused: (refused: RefusedRequest) => void): void {
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
      last.response.prependOnceListener('finish', () => answerMalformedRequest(error, socket, limits, onRefused));
    } else {
      answerMalformedRequest(error, socket, limits, onRefused);
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
function answerMalformedRequest(error: Error & { code?: string }, socket: Duplex, limits: ConnectionLimits, onRefused: (refused: RefusedRequest) => void): void {
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
  const peer = socket as Duplex & { remoteAddress?: string; encrypted?: boolean };
  onRefused({ requestId, client: plainAddress(peer.remoteAddress ?? 'unknown'), scheme: peer.encrypted ? 'https' : 'http', reason: `request ${problem}` });
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
