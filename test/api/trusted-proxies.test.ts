import { expect } from 'chai';
import { AUTH_FAILURES_PER_WINDOW } from '../../src/http/auth.js';
import { sendRequest, startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';

/**
 * DAYBOOK_TRUST_PROXY over real sockets: requests sent from 127.0.0.1 (the proxy) and from
 * other loopback addresses (127.0.0.2 and up, each a client), and over IPv6 from ::1. The
 * client a request counts as shows in the access log and in the failed-authentication budget.
 */
describe('trusted proxies (DAYBOOK_TRUST_PROXY)', () => {
  const BAD_KEY = 'Bearer dbk_this_is_not_a_key';

  async function started(trustProxy: string[], host = '127.0.0.1'): Promise<{ app: TestApp; logged: CapturedLog }> {
    const logged = captureLog('info');
    const app = await startTestApp(undefined, { config: { trustProxy, host }, log: logged.log });
    return { app, logged };
  }

  async function clientOf(setup: { app: TestApp; logged: CapturedLog }, from: string, headers: Record<string, string> = {}): Promise<{ client: unknown; scheme: unknown }> {
    const res = await setup.app.request('GET', '/healthz', { headers, localAddress: from });
    const line = await setup.logged.accessLine(res.headers['x-request-id'] as string);
    return { client: line.client, scheme: line.scheme };
  }

  describe('off (the default)', () => {
    let setup: { app: TestApp; logged: CapturedLog };
    before(async () => (setup = await started([])));
    after(() => setup.app.close());

    it('counts the socket\'s peer and ignores both headers', async () => {
      expect(await clientOf(setup, '127.0.0.3', { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https' })).to.deep.equal({ client: '127.0.0.3', scheme: 'http' });
    });
  });

  describe('trusting 127.0.0.1 only', () => {
    let setup: { app: TestApp; logged: CapturedLog };
    before(async () => (setup = await started(['127.0.0.1'])));
    after(() => setup.app.close());

    it('takes the client and scheme from the trusted proxy\'s headers', async () => {
      expect(await clientOf(setup, '127.0.0.1', { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https' })).to.deep.equal({ client: '198.51.100.7', scheme: 'https' });
    });

    it('takes the right-most untrusted hop, not what the client wrote before it', async () => {
      expect((await clientOf(setup, '127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 198.51.100.7' })).client).to.equal('198.51.100.7');
    });

    it('ignores the headers from a peer it does not trust (a spoofed header)', async () => {
      expect(await clientOf(setup, '127.0.0.4', { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https' })).to.deep.equal({ client: '127.0.0.4', scheme: 'http' });
    });

    it('is the proxy itself when it forwards nothing', async () => {
      expect((await clientOf(setup, '127.0.0.1')).client).to.equal('127.0.0.1');
    });
  });

  describe('the failed-authentication budget counts the client, not the proxy', () => {
    let setup: { app: TestApp; logged: CapturedLog };
    before(async () => (setup = await started(['127.0.0.1'])));
    after(() => setup.app.close());

    const failOnce = (from: string, forwardedFor?: string): Promise<TestResponse> =>
      setup.app.request('GET', '/api/v1/businesses', { localAddress: from, headers: { authorization: BAD_KEY, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) } });

    async function failTimes(count: number, send: () => Promise<TestResponse>): Promise<number[]> {
      const statuses: number[] = [];
      for (let i = 0; i < count; i++) statuses.push((await send()).status);
      return statuses;
    }

    it('one client behind the proxy spending its budget does not lock out another behind the same proxy', async () => {
      const first = await failTimes(AUTH_FAILURES_PER_WINDOW + 1, () => failOnce('127.0.0.1', '198.51.100.10'));
      expect(first.slice(0, AUTH_FAILURES_PER_WINDOW).every((status) => status === 401)).to.equal(true);
      expect(first.at(-1)).to.equal(429);
      expect((await failOnce('127.0.0.1', '198.51.100.11')).status).to.equal(401);
    });

    it('an IPv6 client behind the proxy is counted by its /64: a new address in it each time does not reset the budget', async () => {
      let n = 0;
      const statuses = await failTimes(AUTH_FAILURES_PER_WINDOW + 1, () => failOnce('127.0.0.1', `2001:db8:77:1::${(++n).toString(16)}`));
      expect(statuses.at(-1)).to.equal(429);
      expect((await failOnce('127.0.0.1', '2001:db8:77:2::1')).status, 'the next /64').to.equal(401);
    });

    it('a client that invents a new X-Forwarded-For each time is still counted as itself', async () => {
      let n = 0;
      const statuses = await failTimes(AUTH_FAILURES_PER_WINDOW + 1, () => failOnce('127.0.0.5', `203.0.113.${++n % 250}`));
      expect(statuses.at(-1)).to.equal(429);
    });
  });

  describe('over IPv6, trusting loopback', () => {
    let setup: { app: TestApp; logged: CapturedLog };
    before(async () => (setup = await started(['loopback'], '::1')));
    after(() => setup.app.close());

    it('serves on [::1] and trusts ::1 as the proxy', async () => {
      expect(setup.app.url).to.match(/^http:\/\/\[::1\]:[0-9]+$/);
      expect(await clientOf(setup, '::1', { 'x-forwarded-for': '2001:db8::7', 'x-forwarded-proto': 'https' })).to.deep.equal({ client: '2001:db8::7', scheme: 'https' });
    });
  });

  describe('on a dual-stack listener (::), trusting 127.0.0.1', () => {
    let setup: { app: TestApp; logged: CapturedLog };
    before(async () => (setup = await started(['127.0.0.1'], '::')));
    after(() => setup.app.close());

    it('sees an IPv4 proxy (::ffff:127.0.0.1 on the socket) as 127.0.0.1, and trusts it', async () => {
      const port = new URL(setup.app.url).port;
      const res = await sendRequest(`http://127.0.0.1:${port}`, 'GET', '/healthz', { headers: { 'x-forwarded-for': '198.51.100.7' } });
      expect((await setup.logged.accessLine(res.headers['x-request-id'] as string)).client).to.equal('198.51.100.7');
    });
  });

  describe('over IPv6, trusting an IPv4 range only', () => {
    let setup: { app: TestApp; logged: CapturedLog };
    before(async () => (setup = await started(['127.0.0.0/8'], '::1')));
    after(() => setup.app.close());

    it('does not trust the IPv6 peer ::1', async () => {
      expect((await clientOf(setup, '::1', { 'x-forwarded-for': '2001:db8::7' })).client).to.equal('::1');
    });
  });
});
