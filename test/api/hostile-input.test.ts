import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { defineCommand } from '../../src/door/door.js';
import { parseJsonObject } from '../../src/http/body.js';
import { defineWrite } from '../../src/http/operation.js';
import { Strict } from '../../src/api/schemas/common.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { auditProbe } from '../support/probes.js';
import { buildApiTenant, countRows, expectError, expectInvalid, paddedJsonObject, parseAnswer, parseResponse, sendRaw, useTenantApp, type ApiTenant } from '../support/api.js';

const MAX_BODY_BYTES = 1_048_576;

describe('Hostile input', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useTenantApp((started) => ({ app, tenant } = started));

  const customers = (): number => countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ?', tenant.id);
  const postText = (text: string): Promise<TestResponse> =>
    app.request('POST', '/api/v1/customers', { key: tenant.key, rawBody: text, headers: { 'content-type': 'application/json' } });

  describe('A request without a Host header', () => {
    it('refuses an HTTP/1.1 request without one with the spec\'s body (422 validation_failed "host:"), not Node\'s bare 400', async () => {
      const res = await sendRaw(app.url, { method: 'GET', path: '/api/v1/businesses', headers: { authorization: `Bearer ${tenant.key}` }, withoutHost: true });
      expectInvalid(res, 'host');
    });

    it('serves an HTTP/1.0 request without one (HTTP/1.0 has no Host to require)', async () => {
      const res = await sendRaw(app.url, { method: 'GET', path: '/api/v1/businesses', headers: { authorization: `Bearer ${tenant.key}` }, withoutHost: true, version: '1.0' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.businesses).to.have.lengthOf(1);
    });
  });

  describe('Rule 5: a field named __proto__, constructor or prototype is refused like any other unknown field', () => {
    afterEach(() => {
      // Nothing a body says may reach the prototype every object in the process shares.
      expect(Object.prototype).to.not.have.property('polluted');
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    });

    it('refuses a top-level "__proto__" field as unrecognized (422 validation_failed "__proto__:")', async () => {
      const before = customers();
      const res = await postText('{"name":"p","__proto__":{}}');
      expectInvalid(res, '__proto__');
      expect(res.body.error.message).to.equal('__proto__: is not a recognized field');
      expect(customers()).to.equal(before);
    });

    it('refuses a top-level "__proto__" whatever it holds, polluting nothing (422 validation_failed "__proto__:")', async () => {
      for (const value of ['{"polluted":true,"name":"other"}', 'null', '[]', '"x"']) {
        expectInvalid(await postText(`{"name":"p","__proto__":${value}}`), '__proto__');
      }
    });

    for (const name of ['constructor', 'prototype']) {
      it(`refuses a top-level "${name}" field as unrecognized (422 validation_failed "${name}:")`, async () => {
        const res = await postText(`{"name":"p","${name}":{"prototype":{"polluted":true}}}`);
        expectInvalid(res, name);
        expect(res.body.error.message).to.equal(`${name}: is not a recognized field`);
      });
    }

    it('lists "__proto__" beside other unknown fields (422 validation_failed)', async () => {
      const res = await postText('{"name":"p","__proto__":{},"bogus":1}');
      expectInvalid(res, '__proto__, bogus');
      expect(res.body.error.message).to.equal('__proto__, bogus: are not recognized fields');
    });

    it('refuses a "__proto__" field in a gzip-encoded body too (422 validation_failed "__proto__:")', async () => {
      const res = await app.request('POST', '/api/v1/customers', {
        key: tenant.key,
        rawBody: gzipSync('{"name":"p","__proto__":{}}'),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectInvalid(res, '__proto__');
    });

    it('parses a body into objects that inherit nothing, keeping "__proto__" as an own key', () => {
      const body = parseJsonObject('{"name":"p","__proto__":{"polluted":true},"address":{"__proto__":{"polluted":true}}}');
      expect(Object.getPrototypeOf(body)).to.equal(null);
      expect(Object.keys(body)).to.deep.equal(['name', '__proto__', 'address']);
      expect(body.polluted).to.equal(undefined);
      const address = body.address as Record<string, unknown>;
      expect(Object.getPrototypeOf(address)).to.equal(null);
      expect(Object.keys(address)).to.deep.equal(['__proto__']);
      expect(address.polluted).to.equal(undefined);
    });

    describe('inside a nested object', () => {
      // No published body has a nested object yet, so a probe operation with one runs
      // through the real pipeline on its own app.
      const probe = defineWrite({
        id: 'invoices.create',
        method: 'POST',
        path: '/probe',
        permission: 'invoices:write',
        summary: 'probe',
        params: Strict({}),
        query: Strict({}),
        body: Strict({ address: Type.Optional(Strict({ line1: Type.Optional(Type.String()) })) }),
        responses: { 200: { description: 'the keys of address', schema: Strict({ keys: Type.Array(Type.String()) }) } },
        errors: [],
        command: defineCommand({
          name: 'probe.address',
          scope: (input: { tenantId: string; address: Record<string, unknown> | undefined }) => ({ account: input.tenantId }),
          run: (context, input) => {
            auditProbe(context);
            return Object.keys(input.address ?? {});
          },
        }),
        input: ({ principal, body }) => ({ tenantId: principal.tenant.id, address: body.address }),
        reply: (keys) => ({ status: 200, body: { keys } }),
      });
      let probeApp: TestApp;
      let probeTenant: ApiTenant;
      before(async () => {
        probeApp = await startTestApp(undefined, { operations: [probe] });
        probeTenant = buildApiTenant(probeApp);
      });
      after(async () => {
        await probeApp.close();
      });
      const postProbe = (text: string): Promise<TestResponse> =>
        probeApp.request('POST', '/api/v1/probe', { key: probeTenant.key, rawBody: text, headers: { 'content-type': 'application/json' } });

      it('serves the nested object without the hostile key (200)', async () => {
        const res = await postProbe('{"address":{"line1":"1 Main St"}}');
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({ keys: ['line1'] });
      });

      for (const name of ['__proto__', 'constructor', 'prototype']) {
        it(`refuses a nested "${name}" field, naming its path (422 validation_failed "address.${name}:")`, async () => {
          const res = await postProbe(`{"address":{"line1":"x","${name}":{"polluted":true}}}`);
          expectInvalid(res, `address.${name}`);
          expect(res.body.error.message).to.equal(`address.${name}: is not a recognized field`);
        });
      }
    });
  });

  describe('A client that half-closes its side of the connection still gets its answer', () => {
    const head = (headers: Record<string, string>): Record<string, string> => ({
      authorization: `Bearer ${tenant.key}`,
      'content-type': 'application/json',
      ...headers,
    });

    it('answers a body that does not decode as its Content-Encoding says (422 validation_failed "body:")', async () => {
      const before = customers();
      const body = Buffer.from(JSON.stringify({ name: 'Half Closed Not Gzip Co' }));
      const res = await sendThenHalfClose(app.url, '/api/v1/customers', head({ 'content-encoding': 'gzip', 'content-length': String(body.length) }), body);
      expectInvalid(res, 'body');
      expect(res.body.error.message).to.equal('body: could not be decoded as its Content-Encoding says');
      expect(customers()).to.equal(before);
    });

    it('answers a truncated gzip body (422 validation_failed "body:")', async () => {
      const body = gzipSync(JSON.stringify({ name: 'Half Closed Truncated Co' })).subarray(0, 15);
      const res = await sendThenHalfClose(app.url, '/api/v1/customers', head({ 'content-encoding': 'gzip', 'content-length': String(body.length) }), body);
      expectInvalid(res, 'body');
    });

    it('answers a valid JSON body (201)', async () => {
      const body = Buffer.from(JSON.stringify({ name: 'Half Closed Plain Co' }));
      const res = await sendThenHalfClose(app.url, '/api/v1/customers', head({ 'content-length': String(body.length) }), body);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.created).to.equal(true);
    });

    it('answers a valid gzip-encoded JSON body (201)', async () => {
      const body = gzipSync(JSON.stringify({ name: 'Half Closed Gzip Co' }));
      const res = await sendThenHalfClose(app.url, '/api/v1/customers', head({ 'content-encoding': 'gzip', 'content-length': String(body.length) }), body);
      expect(res.status, res.text).to.equal(201);
    });

    it('answers a declared Content-Length over the limit (422 validation_failed "body:")', async () => {
      const body = paddedJsonObject({ name: 'Half Closed Too Big Co' }, MAX_BODY_BYTES + 1);
      const res = await sendThenHalfClose(app.url, '/api/v1/customers', head({ 'content-length': String(body.length) }), body);
      expectInvalid(res, 'body');
    });

    it('answers a body that is not JSON (422 validation_failed "body:")', async () => {
      const body = Buffer.from('{"name":');
      const res = await sendThenHalfClose(app.url, '/api/v1/customers', head({ 'content-length': String(body.length) }), body);
      expectInvalid(res, 'body');
    });

    describe('when the answer takes a while', () => {
      // The client's FIN arrives long before this write finishes: the answer must still go out.
      const slow = defineWrite({
        id: 'invoices.send',
        method: 'POST',
        path: '/slow',
        permission: 'invoices:write',
        summary: 'probe',
        params: Strict({}),
        query: Strict({}),
        body: Strict({ note: Type.Optional(Type.String()) }),
        responses: { 200: { description: 'done', schema: Strict({ done: Type.Boolean() }) } },
        errors: [],
        command: defineCommand({
          name: 'probe.slow',
          scope: (input: { tenantId: string }) => ({ account: input.tenantId }),
          prepare: () => new Promise<void>((resolve) => setTimeout(resolve, 100)),
          run: (context) => {
            auditProbe(context);
            return true;
          },
        }),
        input: ({ principal }) => ({ tenantId: principal.tenant.id }),
        reply: (done) => ({ status: 200, body: { done } }),
      });
      let slowApp: TestApp;
      let slowTenant: ApiTenant;
      before(async () => {
        slowApp = await startTestApp(undefined, { operations: [slow] });
        slowTenant = buildApiTenant(slowApp);
      });
      after(async () => {
        await slowApp.close();
      });

      it('answers a valid JSON body whose write takes a while (200)', async () => {
        const body = Buffer.from('{"note":"x"}');
        const headers = { authorization: `Bearer ${slowTenant.key}`, 'content-type': 'application/json', 'content-length': String(body.length) };
        const res = await sendThenHalfClose(slowApp.url, '/api/v1/slow', headers, body);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({ done: true });
      });

      it('answers a write first, then the unparsable request sent right behind it on the same connection (200, then 422 "request:")', async () => {
        const body = Buffer.from('{"note":"x"}');
        const url = new URL(slowApp.url);
        const write =
          `POST /api/v1/slow HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${slowTenant.key}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.toString()}`;
        const received = await exchange(slowApp.url, Buffer.from(`${write}[] not a request\r\n\r\n`, 'latin1'));
        const first = parseAnswer(received, false, true);
        const second = first && parseAnswer(received.subarray(first.length), false, true);
        const text = received.toString('latin1');
        expect([first?.response.status, second?.response.status], text).to.deep.equal([200, 422]);
        expect(first!.response.body).to.deep.equal({ done: true });
        expectError(second!.response, 422, 'validation_failed', 'request: is not a well-formed HTTP/1.1 request');
        expect(first!.length + second!.length, 'nothing after the two answers').to.equal(received.length);
      });
    });
  });
});

/**
 * Writes one request over a bare socket, half-closes (socket.end(), without waiting for
 * anything), then reads until the server closes and parses what arrived. A server that
 * sends nothing fails the test rather than hanging it.
 */
async function sendThenHalfClose(baseUrl: string, path: string, headers: Record<string, string>, body: Buffer): Promise<TestResponse> {
  const url = new URL(baseUrl);
  const headText = `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
  const received = await exchange(baseUrl, Buffer.concat([Buffer.from(headText, 'latin1'), body]));
  const response = parseResponse(received, true);
  if (!response) throw new Error(`connection closed without a complete response; received: ${JSON.stringify(received.toString('latin1'))}`);
  return response;
}

/** Writes `bytes` over a bare socket, half-closes, and returns every byte the server sent until it closed (5 s at most). */
function exchange(baseUrl: string, bytes: Buffer): Promise<Buffer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const received: Buffer[] = [];
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`the server did not close within 5 s; received: ${JSON.stringify(Buffer.concat(received).toString('latin1'))}`));
    });
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    // A reset after the answer arrived is fine: what counts is the bytes the server sent.
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(received)));
    socket.on('connect', () => {
      socket.write(bytes);
      socket.end();
    });
  });
}
