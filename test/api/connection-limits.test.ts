import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { CONNECTION_LIMITS, type ConnectionLimits } from '../../src/http/connections.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { type ApiTenant, buildApiTenant, countRows, expectError, parseResponse } from '../support/api.js';

/**
 * Slow and abusive clients (slowloris): a connection that sends nothing, headers or a body a
 * few bytes at a time, an idle kept-alive connection, a client that stops reading, and more
 * connections than the cap. Each is answered where an answer is possible and cut when its
 * time is up, and the other clients are served meanwhile. The limits are shortened here so
 * the test sees them act; the real ones are in CONNECTION_LIMITS (docs/reliability.md).
 */
const LIMITS: ConnectionLimits = {
  headersTimeoutMs: 600,
  requestTimeoutMs: 1_200,
  keepAliveTimeoutMs: 1_000, // the Keep-Alive header states it in whole seconds
  idleTimeoutMs: 1_600,
  maxConnections: 6,
  checkEveryMs: 100,
};

/** A bare socket to the server and everything it said, until it closed. */
interface Probe {
  socket: Socket;
  received(): Buffer;
  /** Resolves when the server closes the connection (or resets it). */
  closed: Promise<void>;
  isClosed(): boolean;
}

/**
 * A bare connection; `onConnect` writes what the client sends. With `halfOpen` the client keeps
 * its side open when the server ends its own, as a client bent on holding the connection would.
 */
function openProbe(baseUrl: string, onConnect: (socket: Socket) => void = () => {}, halfOpen = false): Promise<Probe> {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: halfOpen });
  const chunks: Buffer[] = [];
  let isClosed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // A reset is one way for the server to cut a connection; the test looks at what arrived.
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      isClosed = true;
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.on('connect', () => {
      onConnect(socket);
      resolve({ socket, received: () => Buffer.concat(chunks), closed, isClosed: () => isClosed });
    });
  });
}

/** Writes `piece` every 50 ms until the connection is gone: a slowloris client. */
function trickle(socket: Socket, piece: string): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer);
    else socket.write(piece);
  }, 50);
  socket.on('close', () => clearInterval(timer));
}

/** The one response a cut connection carried. */
function answerOf(probe: Probe): TestResponse {
  const response = parseResponse(probe.received(), true);
  if (!response) throw new Error(`no response on the connection; received ${JSON.stringify(probe.received().toString('latin1'))}`);
  return response;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('Slow and abusive clients are cut off by the connection limits', function () {
  this.timeout(20_000);
  let app: TestApp;
  let tenant: ApiTenant;
  before(async () => {
    app = await startTestApp(undefined, { connectionLimits: LIMITS });
    tenant = buildApiTenant(app);
    // The first /api/v1 answer also fetches and compiles the published document for its checks.
    expect((await app.get('/api/v1/businesses', tenant.key)).status).to.equal(200);
  });
  after(async () => {
    await app.close();
  });

  it('keeps the real limits in the order they need (keep-alive < headers < request < idle) and a cap over a few hundred', () => {
    expect(CONNECTION_LIMITS.headersTimeoutMs).to.be.below(CONNECTION_LIMITS.requestTimeoutMs);
    expect(CONNECTION_LIMITS.keepAliveTimeoutMs).to.be.below(CONNECTION_LIMITS.headersTimeoutMs);
    // A silent client is answered by the request limit before the idle limit cuts it without a word.
    expect(CONNECTION_LIMITS.requestTimeoutMs).to.be.below(CONNECTION_LIMITS.idleTimeoutMs);
    expect(CONNECTION_LIMITS.maxConnections).to.be.at.least(256);
    expect(CONNECTION_LIMITS.checkEveryMs).to.be.at.most(CONNECTION_LIMITS.headersTimeoutMs);
  });

  it('answers a connection that sends nothing with 422 validation_failed "request:" once the header time is up, and closes it', async () => {
    const probe = await openProbe(app.url);
    await probe.closed;
    const answer = answerOf(probe);
    expectError(answer, 422, 'validation_failed', 'request: was not received in time');
    expect(answer.headers.connection).to.equal('close');
  });

  it('cuts a client sending its headers a line at a time (slowloris) with the same answer, while another client is served', async () => {
    const slow = await openProbe(app.url, (socket) => {
      socket.write('GET /api/v1/businesses HTTP/1.1\r\nhost: x\r\n');
      trickle(socket, 'x-slow: 1\r\n');
    });
    const served = await app.get('/api/v1/businesses', tenant.key);
    expect(served.status).to.equal(200);
    expect(slow.isClosed(), 'the slow client still holds its connection while the other is served').to.equal(false);
    await slow.closed;
    expectError(answerOf(slow), 422, 'validation_failed', 'request: was not received in time');
  });

  it('cuts a request whose body trickles in with 422 once the request time is up, and writes nothing', async () => {
    const customersBefore = countRows(app.db, 'SELECT count(*) FROM customers');
    const slow = await openProbe(app.url, (socket) => {
      socket.write(
        'POST /api/v1/customers HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n' +
          `authorization: Bearer ${tenant.key}\r\ncontent-length: 1000\r\n\r\n{"name":"Slow Body"`,
      );
      trickle(socket, ' ');
    });
    await slow.closed;
    expectError(answerOf(slow), 422, 'validation_failed', 'request: was not received in time');
    expect(countRows(app.db, 'SELECT count(*) FROM customers')).to.equal(customersBefore);
  });

  it('runs nothing for a request refused as late, even when the rest of its body arrives after the answer', async () => {
    const customersBefore = countRows(app.db, 'SELECT count(*) FROM customers');
    const json = '{"name":"Late Body"}';
    const slow = await openProbe(
      app.url,
      (socket) =>
        socket.write(
          'POST /api/v1/customers HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n' +
            `authorization: Bearer ${tenant.key}\r\ncontent-length: ${json.length}\r\n\r\n${json.slice(0, 5)}`,
        ),
      true,
    );
    for (let waited = 0; slow.received().length === 0 && !slow.isClosed() && waited < 10_000; waited += 20) await sleep(20);
    slow.socket.end(json.slice(5)); // the body is whole now, after its refusal
    await slow.closed;
    expectError(answerOf(slow), 422, 'validation_failed', 'request: was not received in time');
    expect(countRows(app.db, 'SELECT count(*) FROM customers'), 'customers written').to.equal(customersBefore);
  });

  it('cuts a refused client that keeps its side open and goes on sending', async () => {
    const stubborn = await openProbe(
      app.url,
      (socket) => {
        socket.write('GET /api/v1/businesses HTTP/1.1\r\nhost: x\r\n');
        trickle(socket, 'x-slow: 1\r\n');
      },
      true,
    );
    await stubborn.closed;
    expectError(answerOf(stubborn), 422, 'validation_failed', 'request: was not received in time');
  });

  it('gives a request answered before its body arrived no second answer when its time is up', async () => {
    const early = await openProbe(app.url, (socket) =>
      socket.write('POST /api/v1/customers HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer not-a-key\r\ncontent-length: 100\r\n\r\n{'),
    );
    await early.closed;
    const text = early.received().toString('latin1');
    expect(text.match(/HTTP\/1\.1 [0-9]{3} /g), text).to.deep.equal(['HTTP/1.1 401 ']);
  });

  it('closes a kept-alive connection left idle after its answer, having said how long it would wait', async () => {
    const probe = await openProbe(app.url, (socket) => socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n'));
    await probe.closed;
    const answer = answerOf(probe);
    expect(answer.status).to.equal(200);
    expect(answer.headers['keep-alive']).to.equal(`timeout=${LIMITS.keepAliveTimeoutMs / 1000}`);
  });

  it('cuts a client that stops reading its answers once nothing has moved for the idle time', async () => {
    // Many pipelined requests, never read: the answers fill the socket buffers, then nothing moves.
    const document = await app.get('/openapi/v1.json');
    const pipelined = 400;
    const probe = await openProbe(app.url, (socket) => {
      socket.pause();
      socket.write('GET /openapi/v1.json HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(pipelined));
    });
    // A paused socket notices the cut only once it reads again.
    await sleep(LIMITS.idleTimeoutMs * 3);
    probe.socket.resume();
    await probe.closed;
    const everything = pipelined * Buffer.byteLength(document.text);
    expect(probe.received().length, 'bytes received before the cut').to.be.above(0).and.below(everything);
  });

  it('closes connections past the cap before reading them, and serves new ones once the slow clients are cut', async () => {
    const holders = await Promise.all(Array.from({ length: LIMITS.maxConnections }, () => openProbe(app.url)));
    await sleep(50); // the server counts a connection once it has accepted it
    const overCap = await openProbe(app.url, (socket) => socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n'));
    await overCap.closed;
    expect(overCap.received().length, 'a connection past the cap gets no answer').to.equal(0);
    expect(holders.filter((holder) => holder.isClosed()).length, 'the holders were still open').to.equal(0);
    await Promise.all(holders.map((holder) => holder.closed));
    const served = await app.get('/api/v1/businesses', tenant.key);
    expect(served.status).to.equal(200);
  });
});
