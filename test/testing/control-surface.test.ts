import { expect } from 'chai';
import { request } from 'node:http';
import { isLoopbackHost, isLoopbackOrigin } from '../../src/http/control.js';
import { type RunningDaybook, startDaybook } from '../../src/testing/index.js';

/**
 * The control surface (/__daybook, `serve --ephemeral --control`) against a browser on the same
 * machine: a page elsewhere can send a simple POST without a preflight, and a host name rebound
 * to 127.0.0.1 lets it read answers as its own. The surface answers only loopback Hosts and
 * Origins and JSON POSTs, and bounds every number it takes.
 */

interface Answer {
  status: number;
  body: any;
}

/** A request with exactly these headers (fetch would set Host itself). */
function send(daybook: RunningDaybook, method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer> {
  const url = new URL(`/__daybook${path}`, daybook.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path: url.pathname, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => void (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text === '' ? undefined : JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('daybook/testing: the control surface (/__daybook)', () => {
  let daybook: RunningDaybook;
  let host: string;
  before(async () => {
    daybook = await startDaybook({ at: '2027-01-04', control: true });
    host = new URL(daybook.url).host;
  });
  after(() => daybook.close());

  describe('Host', () => {
    for (const foreign of ['evil.example', 'evil.example:80', 'rebound.attacker.test', '127.0.0.1.evil.example', 'localhost.evil.example:3000', '0.0.0.0', '10.0.0.1']) {
      it(`answers Host ${foreign} like an unknown path (404 not_found), running nothing`, async () => {
        const before = daybook.clock.now().toISOString();
        const answer = await send(daybook, 'POST', '/clock', { ...JSON_TYPE, host: foreign }, JSON.stringify({ advanceDays: 1 }));
        expect(answer.status).to.equal(404);
        expect(answer.body.error).to.include({ code: 'not_found', message: 'No such endpoint.' });
        expect(daybook.clock.now().toISOString()).to.equal(before);
      });
    }

    it('refuses a foreign Host reading the outbox (DNS rebinding)', async () => {
      const answer = await send(daybook, 'GET', '/outbox', { host: 'rebound.attacker.test' });
      expect(answer.status).to.equal(404);
      expect(answer.body.error.code).to.equal('not_found');
    });

    it('serves the loopback names, with the port or without', async () => {
      const port = new URL(daybook.url).port;
      for (const loopback of [host, '127.0.0.1', 'localhost', `localhost:${port}`, 'LOCALHOST', '[::1]', `[::1]:${port}`, '127.1.2.3:9']) {
        const answer = await send(daybook, 'GET', '/outbox', { host: loopback });
        expect(answer, loopback).to.deep.equal({ status: 200, body: { messages: [] } });
      }
    });

    it('tells a loopback Host from the rest', () => {
      expect(['localhost', '127.0.0.1:1', '127.255.255.255', '[::1]:65535'].map(isLoopbackHost)).to.deep.equal([true, true, true, true]);
      expect(['', '127.0.0.256', '128.0.0.1', '127.0.0.1:', '127.0.0.1:x', 'localhost:80:80', '[::2]', 'localhost.'].map(isLoopbackHost)).to.deep.equal([false, false, false, false, false, false, false, false]);
    });
  });

  describe('Content-Type on POST', () => {
    for (const [what, headers, body] of [
      ['text/plain (a fetch a page elsewhere sends without a preflight)', { 'content-type': 'text/plain;charset=UTF-8' }, '{"advanceDays": 1}'],
      ['an HTML form', { 'content-type': 'application/x-www-form-urlencoded' }, ''],
      ['a multipart form', { 'content-type': 'multipart/form-data; boundary=x' }, ''],
      ['no Content-Type and no body', {}, ''],
    ] as const) {
      it(`refuses ${what} with 422 naming Content-Type, running nothing`, async () => {
        const before = daybook.clock.now().toISOString();
        const answer = await send(daybook, 'POST', body === '' ? '/jobs/overdue' : '/clock', { host, ...headers }, body);
        expect(answer.status).to.equal(422);
        expect(answer.body.error).to.include({ code: 'validation_failed', message: 'Content-Type: must be application/json on every POST to the control surface, with a body or without' });
        expect(daybook.clock.now().toISOString()).to.equal(before);
      });
    }

    it('runs a job on an empty POST that says application/json', async () => {
      expect(await send(daybook, 'POST', '/jobs/overdue', { host, 'content-type': 'application/json; charset=utf-8' })).to.deep.equal({ status: 200, body: { ran: 'overdue' } });
    });
  });

  describe('Origin', () => {
    for (const origin of ['https://evil.example', 'http://rebound.attacker.test:41234', 'null', 'http://127.0.0.1.evil.example', 'file://']) {
      it(`refuses Origin ${origin} like an unknown path (404 not_found)`, async () => {
        const before = daybook.clock.now().toISOString();
        const answer = await send(daybook, 'POST', '/clock', { host, origin, ...JSON_TYPE }, JSON.stringify({ advanceDays: 1 }));
        expect(answer.status).to.equal(404);
        expect(answer.body.error.code).to.equal('not_found');
        expect(daybook.clock.now().toISOString()).to.equal(before);
      });
    }

    it('accepts a loopback Origin (a test page served on this machine)', async () => {
      for (const origin of ['http://localhost:5173', 'http://127.0.0.1', 'https://[::1]:8443', daybook.url]) {
        const answer = await send(daybook, 'POST', '/clock', { host, origin, ...JSON_TYPE }, JSON.stringify({ at: '2027-01-04' }));
        expect(answer, origin).to.deep.equal({ status: 200, body: { now: '2027-01-04T00:00:00.000Z' } });
      }
      expect(isLoopbackOrigin('http://localhost')).to.equal(true);
      expect(isLoopbackOrigin('ws://localhost')).to.equal(false);
    });
  });

  describe('bounds: 422 validation_failed naming the field, nothing done', () => {
    const post = (path: string, body: unknown) => send(daybook, 'POST', path, { host, ...JSON_TYPE }, JSON.stringify(body));

    for (const [body, message] of [
      [{ count: 1e9, failure: { status: 500 } }, 'count: must be a whole number from 1 to 1000 (got 1000000000)'],
      [{ count: 1001, failure: { status: 500 } }, 'count: must be a whole number from 1 to 1000 (got 1001)'],
      [{ count: 0, failure: { status: 500 } }, 'count: must be a whole number from 1 to 1000 (got 0)'],
      [{ count: '2', failure: { status: 500 } }, 'count: must be a whole number from 1 to 1000 (got "2")'],
      [{ count: 1, failure: { stallMs: 1e11 } }, 'failure.stallMs: must be a whole number from 0 to 60000 (got 100000000000)'],
      [{ count: 1, failure: { stallMs: 60001 } }, 'failure.stallMs: must be a whole number from 0 to 60000 (got 60001)'],
      [{ count: 1, failure: { status: 429, retryAfterSeconds: 86401 } }, 'failure.retryAfterSeconds: must be a whole number from 1 to 86400 (got 86401)'],
      [{ count: 1, failure: { status: 503 } }, 'failure: must be {status: 429, retryAfterSeconds}, {status: 500} or {stallMs} (got {"status":503})'],
    ] as const) {
      it(`fail-next ${JSON.stringify(body)}: ${message}`, async () => {
        const answer = await post('/fail-next', body);
        expect(answer.status).to.equal(422);
        expect(answer.body.error).to.include({ code: 'validation_failed', message });
        expect((await fetch(`${daybook.url}/api/v1/businesses`, { headers: { authorization: `Bearer ${daybook.keys[0]!.key}` } })).status, 'no failure queued').to.equal(200);
      });
    }

    it('takes the largest failure asked for, and gives it that many times', async () => {
      expect(await post('/fail-next', { count: 1000, failure: { status: 429, retryAfterSeconds: 86400 } })).to.deep.equal({ status: 200, body: { ok: true } });
      const list = () => fetch(`${daybook.url}/api/v1/businesses`, { headers: { authorization: `Bearer ${daybook.keys[0]!.key}` } });
      const statuses = new Set<number>();
      for (let i = 0; i < 1000; i++) statuses.add((await list()).status);
      expect([...statuses]).to.deep.equal([429]);
      expect((await list()).status, 'the 1001st runs').to.equal(200);
    });

    for (const [advanceDays, message] of [
      [1e308, 'advanceDays: must be from -36500 to 36500 days (got 1e+308)'],
      [36501, 'advanceDays: must be from -36500 to 36500 days (got 36501)'],
      [-36501, 'advanceDays: must be from -36500 to 36500 days (got -36501)'],
      [1.5, 'advanceDays: must be a whole number of days (got 1.5)'],
      ['3', 'advanceDays: must be a whole number of days (got "3")'],
    ] as const) {
      it(`clock {advanceDays: ${JSON.stringify(advanceDays)}}: ${message}`, async () => {
        const before = daybook.clock.now().toISOString();
        const answer = await post('/clock', { advanceDays });
        expect(answer.status).to.equal(422);
        expect(answer.body.error).to.include({ code: 'validation_failed', message });
        expect(daybook.clock.now().toISOString()).to.equal(before);
      });
    }

    it('moves the clock a century either way, but never past the year 9999', async () => {
      expect(await post('/clock', { advanceDays: 36500 })).to.deep.equal({ status: 200, body: { now: '2126-12-11T00:00:00.000Z' } });
      expect(await post('/clock', { advanceDays: -36500 })).to.deep.equal({ status: 200, body: { now: '2027-01-04T00:00:00.000Z' } });
      expect(await post('/clock', { at: '9999-12-01' })).to.deep.equal({ status: 200, body: { now: '9999-12-01T00:00:00.000Z' } });
      const past = await post('/clock', { advanceDays: 31 });
      expect(past.status).to.equal(422);
      expect(past.body.error.message).to.equal('advanceDays: would take the clock from 9999-12-01T00:00:00.000Z outside the years 0000 to 9999');
      expect((await post('/clock', { at: '9999-12-31T23:00:00-05:00' })).body.error.message).to.equal('at: "9999-12-31T23:00:00-05:00" is outside the years 0000 to 9999 (UTC)');
      expect(await post('/clock', { at: '2027-01-04' })).to.deep.equal({ status: 200, body: { now: '2027-01-04T00:00:00.000Z' } });
    });
  });
});
