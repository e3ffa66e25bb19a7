import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/clock.js';
import type { FxProvider } from '../../src/config.js';
import type { Db } from '../../src/db/connection.js';
import type { QuotedRates } from '../../src/rates/provider.js';
import { type StoredQuote, storeQuotedRates } from '../../src/rates/store.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { type ApiTenant, buildApiTenant } from './api.js';
import { startTestApp, type TestApp } from './app.js';

/**
 * A fake exchange-rate provider: a real HTTP server on loopback that records every request and
 * answers whatever `reply` says (or returns for the request's path, for answers that depend on
 * the day asked); `frankfurterBody` and `ecbBody` write the providers' answers for it.
 */

/** What the fake provider answers next. */
export interface ProviderReply {
  /** 200 unless told. */
  status?: number;
  body?: string;
  /** application/json unless told. */
  contentType?: string;
  /** Never answer ('before-headers'), or send the headers and the body's first 10 characters only ('mid-body'). */
  hang?: 'before-headers' | 'mid-body';
  /** Drop the connection without answering. */
  reset?: boolean;
}

export interface FakeProvider {
  /** http://127.0.0.1:PORT */
  url: string;
  /** `METHOD /path?query` of every request received; empty it (`requests.length = 0`) between tests. */
  requests: string[];
  /** Set it before the request; it stays until set again. A function is called with each request's `/path?query`. */
  reply: ProviderReply | ((path: string) => ProviderReply);
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const fake = { requests: [] as string[], reply: {} as FakeProvider['reply'] };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    fake.requests.push(`${request.method} ${request.url}`);
    const reply = typeof fake.reply === 'function' ? fake.reply(request.url ?? '') : fake.reply;
    if (reply.reset) {
      request.socket.destroy();
      return;
    }
    if (reply.hang === 'before-headers') return; // never answers
    response.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
    if (reply.hang === 'mid-body') {
      response.write((reply.body ?? '').slice(0, 10)); // the rest never comes
      return;
    }
    response.end(reply.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** Frankfurter's answer for one day (per 1 EUR), built as text so each rate keeps exactly the digits written; `extra` goes in after "rates". */
export function frankfurterBody(date: string, rates: Record<string, string>, extra = ''): string {
  const pairs = Object.entries(rates).map(([code, rate]) => `"${code}":${rate}`);
  return `{"amount":1.0,"base":"EUR","date":"${date}","rates":{${pairs.join(',')}}${extra}}`;
}

/** The ECB's daily file as it is published: single quotes, a gesmes envelope, one dated Cube (per 1 EUR). */
export function ecbBody(time: string, rates: Record<string, string>): string {
  const cubes = Object.entries(rates).map(([code, rate]) => `\t\t\t<Cube currency='${code}' rate='${rate}'/>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
\t\t<Cube time='${time}'>
${cubes.join('\n')}
\t\t</Cube>
\t</Cube>
</gesmes:Envelope>
`;
}

/** A loopback URL nothing listens on: a port the system handed out, then closed again. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * A Frankfurter-shaped rate provider that holds every request until `releaseAll`: a send of a
 * foreign invoice awaits it before it can post, so the send is caught in flight, past its
 * authentication. Each held request is answered with a quote for the day it asked.
 */
export interface HeldRateProvider {
  url: string;
  /** How many requests wait for their answer. */
  held(): number;
  /** Resolves once `count` requests are held (rejects after `timeoutMs`). */
  waitUntilHeld(count: number, timeoutMs?: number): Promise<void>;
  releaseAll(): void;
  close(): Promise<void>;
}

const USD_PER_EUR_QUOTES: Record<string, string> = { USD: '1.08', CAD: '1.47', GBP: '0.84', MXN: '19.6' };

export async function startHeldRateProvider(): Promise<HeldRateProvider> {
  const waiting: Array<() => void> = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://provider');
    const date = url.pathname.slice(1);
    const codes = (url.searchParams.get('to') ?? '').split(',').filter((code) => code !== '');
    const rates = Object.fromEntries(codes.map((code) => [code, USD_PER_EUR_QUOTES[code] ?? '1.5']));
    waiting.push(() => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(frankfurterBody(date, rates));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => waiting.length,
    async waitUntilHeld(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (waiting.length < count) {
        if (Date.now() > deadline) throw new Error(`the rate provider holds ${waiting.length} requests, not ${count}, after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    releaseAll() {
      for (const answer of waiting.splice(0)) answer();
    },
    async close() {
      for (const answer of waiting.splice(0)) answer();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface AppWithProvider {
  app: TestApp;
  tenant: ApiTenant;
  provider: FakeProvider;
}

/**
 * A suite's test app whose every rate look-up goes to a fake provider on loopback (no test
 * reaches a real one). Each test starts at `at`, with no stored rate (rates are installation-
 * wide), a fresh tenant, no recorded request, and a provider answering 500 until it says
 * otherwise. `take` receives them before each test.
 */
export function useAppWithFakeProvider(at: string, take: (suite: AppWithProvider) => void): void {
  let app: TestApp;
  let provider: FakeProvider;
  before(async () => {
    provider = await startFakeProvider();
    app = await startTestApp(at, { config: { fxProviderUrl: provider.url } });
  });
  after(async () => {
    await app?.close();
    await provider?.close();
  });
  beforeEach(() => {
    app.clock.set(at);
    provider.requests.length = 0;
    provider.reply = { status: 500, body: '{"message":"not set by this test"}' };
    app.db.prepare('DELETE FROM exchange_rates').run();
    take({ app, tenant: buildApiTenant(app, { plan: 'large' }), provider });
  });
}

/** How lookUpRate stores what it fetched, in tests that call it directly: as the admin CLI would. */
export function storingAs(db: Db, clock: Clock): (source: FxProvider, quoted: QuotedRates) => StoredQuote {
  return (source, quoted) => storeQuotedRates(db, clock, CLI_ACTOR, source, quoted);
}
