import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { gzipSync } from 'node:zlib';
import { defineCommand } from '../../src/door/door.js';
import { defineWrite } from '../../src/http/operation.js';
import { Strict, Uuid } from '../../src/api/schemas/common.js';
import { auditProbe } from '../support/probes.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import {
  buildApiTenant,
  useTenantApp,
  chunked,
  countRows,
  expectError,
  expectInvalid,
  expectNoRateLimitHeaders,
  paddedJsonObject,
  rateLimitHeaders,
  sendRaw,
  setTenant,
  type ApiTenant,
  withoutRequestId,
} from '../support/api.js';

const MAX_BODY_BYTES = 1_048_576;

describe('Rules that apply to every request', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useTenantApp((started) => ({ app, tenant } = started));

  const customers = (): number => countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ?', tenant.id);

  describe('Request id (x-request-id on every response)', () => {
    it('sends x-request-id on a 200', async () => {
      const res = await app.get('/api/v1/businesses', tenant.key);
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(res.headers['x-request-id']).to.be.a('string').and.match(/^[0-9a-f-]{36}$/);
    });

    it('sends x-request-id equal to error.requestId on a 401, 404, 422 and 429', async () => {
      const unauthorized = await app.get('/api/v1/businesses', null);
      expectError(unauthorized, 401, 'invalid_key');

      const missing = await app.get('/api/v1/nothing-here', tenant.key);
      expectError(missing, 404, 'not_found');

      const invalid = await app.get('/api/v1/businesses?bogus=1', tenant.key);
      expectError(invalid, 422, 'validation_failed');

      // A throwaway account with a one-read budget gives a 429 without spending many requests.
      const limited = buildApiTenant(app);
      setTenant(app, limited.id, { rateLimit: { mode: 'custom', readsPerWindow: 1, writesPerWindow: 1 } });
      expect((await app.get('/api/v1/businesses', limited.key)).status).to.equal(200);
      const tooMany = await app.get('/api/v1/businesses', limited.key);
      expectError(tooMany, 429, 'rate_limited');
    });

    it('sends x-request-id outside /api/v1 too (GET /healthz)', async () => {
      const res = await app.get('/healthz');
      expect(res.status).to.equal(200);
      expect(res.headers['x-request-id']).to.be.a('string').and.not.equal('');
    });

    it('gives every request its own id', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(String((await app.get('/api/v1/businesses', tenant.key)).headers['x-request-id']));
        ids.push(String((await app.get('/api/v1/businesses', null)).headers['x-request-id']));
      }
      expect(new Set(ids).size).to.equal(ids.length);
    });
  });

  describe('Errors (body shape)', () => {
    it('answers every failure as exactly {error: {code, message, requestId}} with a code from the closed list', async () => {
      const failures: TestResponse[] = [
        await app.get('/api/v1/businesses', null),
        await app.get('/api/v1/unknown', tenant.key),
        await app.post('/api/v1/customers', tenant.key, { name: 'x', surprise: true }),
      ];
      expectError(failures[0]!, 401, 'invalid_key');
      expectError(failures[1]!, 404, 'not_found');
      expectError(failures[2]!, 422, 'validation_failed');
      for (const res of failures) {
        expect(res.body).to.have.all.keys('error');
        expect(res.body.error).to.have.all.keys('code', 'message', 'requestId');
      }
    });
  });

  describe('Rule 1 and 5: unknown fields are refused, bodies must be JSON objects', () => {
    it('refuses an unknown body field, naming it (422 validation_failed)', async () => {
      const before = customers();
      const res = await app.post('/api/v1/customers', tenant.key, { name: 'Unknown Field Co', nickname: 'UF' });
      expectInvalid(res, 'nickname');
      expect(customers()).to.equal(before);
    });

    it('lists several unknown body fields together (422 validation_failed)', async () => {
      const res = await app.post('/api/v1/customers', tenant.key, { name: 'Several Co', nickname: 'S', fax: '123', vip: true });
      expectError(res, 422, 'validation_failed');
      const [names] = String(res.body.error.message).split(':');
      expect(names!.split(', ').sort()).to.deep.equal(['fax', 'nickname', 'vip']);
    });

    it('refuses snake_case spellings of defined fields (422 validation_failed)', async () => {
      const res = await app.post('/api/v1/customers', tenant.key, { name: 'Snake Co', payment_terms_days: 30 });
      expectInvalid(res, 'payment_terms_days');
    });

    it('refuses an unknown query parameter on a GET, naming it (422 validation_failed)', async () => {
      expectInvalid(await app.get('/api/v1/businesses?verbose=true', tenant.key), 'verbose');
      expectInvalid(await app.get('/api/v1/accounts?sort=code', tenant.key), 'sort');
    });

    it('lists several unknown query parameters together (422 validation_failed)', async () => {
      const res = await app.get('/api/v1/accounts?sort=code&page=2&type=asset', tenant.key);
      expectError(res, 422, 'validation_failed');
      const [names] = String(res.body.error.message).split(':');
      expect(names!.split(', ').sort()).to.deep.equal(['page', 'sort']);
    });

    it('refuses an unknown query parameter on a POST, and writes nothing (422 validation_failed)', async () => {
      const before = customers();
      expectInvalid(await app.post('/api/v1/customers?dryRun=true', tenant.key, { name: 'Query Co' }), 'dryRun');
      expect(customers()).to.equal(before);
    });

    it('refuses query parameters named like object internals (__proto__, constructor), naming them (422 validation_failed)', async () => {
      expectInvalid(await app.get('/api/v1/accounts?__proto__=1', tenant.key), '__proto__');
      expectInvalid(await app.get('/api/v1/businesses?__proto__[x]=1', tenant.key), '__proto__[x]');
      expectInvalid(await app.get('/api/v1/businesses?constructor=1', tenant.key), 'constructor');
      const before = customers();
      expectInvalid(await app.post('/api/v1/customers?__proto__=1', tenant.key, { name: 'Proto Query Co' }), '__proto__');
      expect(customers()).to.equal(before);
    });

    it('refuses body fields named like object internals (__proto__ anywhere, constructor) (422 validation_failed)', async () => {
      const before = customers();
      for (const raw of ['{"name":"Proto Co","__proto__":{"admin":true}}', '{"name":"Proto Co","__proto__":null}']) {
        const res = await app.request('POST', '/api/v1/customers', { key: tenant.key, rawBody: raw, headers: { 'content-type': 'application/json' } });
        expectInvalid(res, '__proto__');
      }
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'Proto Co', constructor: 'x' }), 'constructor');
      expect(customers()).to.equal(before);
    });

    it('refuses a query parameter given twice (422 validation_failed)', async () => {
      expectInvalid(await app.get('/api/v1/accounts?type=asset&type=revenue', tenant.key), 'type');
    });

    it('refuses an unknown field in a GET body too (422 validation_failed)', async () => {
      const res = await app.request('GET', '/api/v1/businesses', { key: tenant.key, body: { verbose: true } });
      expectInvalid(res, 'verbose');
    });

    for (const [label, raw] of [
      ['a JSON array', '[{"name":"Array Co"}]'],
      ['a JSON string', '"Array Co"'],
      ['a JSON number', '42'],
      ['JSON null', 'null'],
      ['invalid JSON', '{"name": "Broken Co"'],
      ['JSON with trailing garbage', '{"name": "Trailing Co"} x'],
    ] as const) {
      it(`refuses a body that is ${label} (422 validation_failed)`, async () => {
        const before = customers();
        const res = await app.request('POST', '/api/v1/customers', {
          key: tenant.key,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        expectInvalid(res, 'body');
        expect(customers()).to.equal(before);
      });
    }

    it('names the nested path of a failing field (name too long -> "name:")', async () => {
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'n'.repeat(201) }), 'name');
    });

    it('refuses paymentTermsDays out of range ("paymentTermsDays:")', async () => {
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'Terms Co', paymentTermsDays: 400 }), 'paymentTermsDays');
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'Terms Co', paymentTermsDays: -1 }), 'paymentTermsDays');
    });

    it('never coerces numbers from strings (paymentTermsDays "30" is 422)', async () => {
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'Coerce Co', paymentTermsDays: '30' }), 'paymentTermsDays');
    });

    it('never coerces booleans from strings (remindersEnabled "true" is 422)', async () => {
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'Coerce Co', remindersEnabled: 'true' }), 'remindersEnabled');
    });

    it('refuses a malformed email ("email:")', async () => {
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'Mail Co', email: 'not-an-email' }), 'email');
    });
  });

  describe('Rule 2: a request body over 1,048,576 bytes is refused', () => {
    const auth = (): Record<string, string> => ({ authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' });

    it('refuses a declared Content-Length over the limit (422 validation_failed)', async () => {
      const before = customers();
      const body = paddedJsonObject({ name: 'Too Big Declared' }, MAX_BODY_BYTES + 1);
      const res = await sendRaw(app.url, {
        method: 'POST',
        path: '/api/v1/customers',
        headers: { ...auth(), 'content-length': String(body.length) },
        body,
      });
      expectInvalid(res, 'body');
      expect(customers()).to.equal(before);
    });

    it('refuses a chunked body that grows over the limit (422 validation_failed)', async () => {
      const before = customers();
      const body = paddedJsonObject({ name: 'Too Big Chunked' }, MAX_BODY_BYTES + 1);
      const res = await sendRaw(app.url, {
        method: 'POST',
        path: '/api/v1/customers',
        headers: { ...auth(), 'transfer-encoding': 'chunked' },
        body: chunked(body),
      });
      expectInvalid(res, 'body');
      expect(customers()).to.equal(before);
    });

    it('accepts a body of exactly 1,048,576 bytes (201)', async () => {
      const body = paddedJsonObject({ name: 'Exactly At The Limit' }, MAX_BODY_BYTES);
      const res = await sendRaw(app.url, {
        method: 'POST',
        path: '/api/v1/customers',
        headers: { ...auth(), 'content-length': String(body.length) },
        body,
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.created).to.equal(true);
    });

    it('accepts a chunked body of exactly 1,048,576 bytes (201)', async () => {
      const body = paddedJsonObject({ name: 'Exactly At The Limit, Chunked' }, MAX_BODY_BYTES);
      const res = await sendRaw(app.url, {
        method: 'POST',
        path: '/api/v1/customers',
        headers: { ...auth(), 'transfer-encoding': 'chunked' },
        body: chunked(body),
      });
      expect(res.status, res.text).to.equal(201);
    });
  });

  describe('Requests Node itself cannot parse', () => {
    for (const [label, headers] of [
      ['a malformed Content-Length', { 'content-length': 'abc' }],
      ['both Content-Length and Transfer-Encoding', { 'content-length': '2', 'transfer-encoding': 'chunked' }],
    ] as const) {
      it(`answers ${label} with the error body and a request id (422 validation_failed)`, async () => {
        const res = await sendRaw(app.url, {
          method: 'POST',
          path: '/api/v1/customers',
          headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', ...headers },
          body: Buffer.from('{}'),
        });
        expectInvalid(res, 'request');
      });
    }
  });

  describe('Compressed request bodies (Content-Encoding)', () => {
    const encoded = (body: Buffer, encoding: string) =>
      app.request('POST', '/api/v1/customers', {
        key: tenant.key,
        rawBody: body,
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });

    it('accepts a gzip-encoded JSON body (201)', async () => {
      const res = await encoded(gzipSync(JSON.stringify({ name: 'Gzip Co' })), 'gzip');
      expect(res.status, res.text).to.equal(201);
    });

    it('refuses a body whose content does not decode as its Content-Encoding says (422 validation_failed, not 500)', async () => {
      const before = customers();
      const plain = Buffer.from(JSON.stringify({ name: 'Not Really Gzip Co' }));
      expectInvalid(await encoded(plain, 'gzip'), 'body');
      expectInvalid(await encoded(plain, 'deflate'), 'body');
      expectInvalid(await encoded(plain, 'br'), 'body');
      expectInvalid(await encoded(gzipSync(plain).subarray(0, 15), 'gzip'), 'body');
      expect(customers()).to.equal(before);
    });

    it('refuses an unsupported Content-Encoding (422 validation_failed)', async () => {
      expectInvalid(await encoded(Buffer.from('{"name":"Zip Co"}'), 'x-zip'), 'body');
    });

    it('applies the 1,048,576-byte limit to the decoded body (422 validation_failed)', async () => {
      const before = customers();
      const inflated = paddedJsonObject({ name: 'Gzip Bomb Co' }, MAX_BODY_BYTES + 1);
      const compressed = gzipSync(inflated);
      expect(compressed.length).to.be.lessThan(10_000);
      expectInvalid(await encoded(compressed, 'gzip'), 'body');
      expect(customers()).to.equal(before);
    });
  });

  describe('Rule 3: a body needs Content-Type application/json', () => {
    it('refuses a JSON body sent as text/plain (422 validation_failed)', async () => {
      const before = customers();
      const res = await app.request('POST', '/api/v1/customers', {
        key: tenant.key,
        rawBody: JSON.stringify({ name: 'Plain Text Co' }),
        headers: { 'content-type': 'text/plain' },
      });
      expectInvalid(res, 'Content-Type');
      expect(customers()).to.equal(before);
    });

    it('refuses a JSON body sent without any Content-Type (422 validation_failed)', async () => {
      const before = customers();
      const res = await app.request('POST', '/api/v1/customers', { key: tenant.key, rawBody: JSON.stringify({ name: 'No Type Co' }) });
      expectInvalid(res, 'Content-Type');
      expect(customers()).to.equal(before);
    });

    it('refuses a form-encoded body (422 validation_failed)', async () => {
      const res = await app.request('POST', '/api/v1/customers', {
        key: tenant.key,
        rawBody: 'name=Form+Co',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectInvalid(res, 'Content-Type');
    });

    it('accepts application/json with a charset parameter (201)', async () => {
      const res = await app.request('POST', '/api/v1/customers', {
        key: tenant.key,
        rawBody: JSON.stringify({ name: 'Charset Co' }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status, res.text).to.equal(201);
    });

    it('treats a POST with no body and no content type as {} (only "name: is required" fails)', async () => {
      // A bare socket: no Content-Length, no Transfer-Encoding, no Content-Type at all.
      const res = await sendRaw(app.url, { method: 'POST', path: '/api/v1/customers', headers: { authorization: `Bearer ${tenant.key}` } });
      expectInvalid(res, 'name');
      expect(res.body.error.message).to.equal('name: is required');
    });

    it('treats a POST with Content-Length: 0 and no content type as {} (only "name: is required" fails)', async () => {
      const res = await app.request('POST', '/api/v1/customers', { key: tenant.key, headers: { 'content-length': '0' } });
      expect(res.body.error.message).to.equal('name: is required');
      expectInvalid(res, 'name');
    });
  });

  describe('Rule 4: a path parameter repeated in the query or body is refused', () => {
    // No published endpoint with a path parameter is served yet, so a probe operation with one
    // runs through the real pipeline on its own app.
    const probe = defineWrite({
      id: 'invoices.send',
      method: 'POST',
      path: '/probe/:id',
      permission: 'invoices:write',
      summary: 'probe',
      params: Strict({ id: Uuid }),
      query: Strict({}),
      body: Strict({ note: Type.Optional(Type.String()) }),
      responses: { 200: { description: 'echo', schema: Strict({ id: Uuid }) } },
      errors: [],
      command: defineCommand({
        name: 'probe.echoId',
        scope: (input: { tenantId: string; id: string }) => ({ account: input.tenantId }),
        run: (context, input) => {
          auditProbe(context);
          return input.id;
        },
      }),
      input: ({ principal, params }) => ({ tenantId: principal.tenant.id, id: params.id }),
      reply: (id) => ({ status: 200, body: { id } }),
    });
    const id = '7b0c2a52-3f7e-4c3b-9d62-2f1f0e0d9a11';
    let probeApp: TestApp;
    let probeTenant: ApiTenant;
    before(async () => {
      probeApp = await startTestApp(undefined, { operations: [probe] });
      probeTenant = buildApiTenant(probeApp);
    });
    after(async () => {
      await probeApp.close();
    });

    it('serves the path parameter alone (200)', async () => {
      const res = await probeApp.post(`/api/v1/probe/${id.toUpperCase()}`, probeTenant.key, { note: 'x' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ id });
    });

    it('refuses a path parameter repeated in the query (422 validation_failed)', async () => {
      expectInvalid(await probeApp.post(`/api/v1/probe/${id}?id=${id}`, probeTenant.key, {}), 'id');
    });

    it('refuses a path parameter repeated in the body, even with the same value (422 validation_failed)', async () => {
      const res = await probeApp.post(`/api/v1/probe/${id}`, probeTenant.key, { id });
      expectInvalid(res, 'id');
      expect(res.body.error.message).to.contain('path parameter');
    });

    it('refuses a malformed path parameter (422 validation_failed naming it)', async () => {
      expectInvalid(await probeApp.post('/api/v1/probe/not-a-uuid', probeTenant.key, {}), 'id');
    });
  });

  describe('Rule 6: an Idempotency-Key header on a GET is ignored', () => {
    it('answers a GET with a well-formed Idempotency-Key normally, twice, without replay', async () => {
      for (let i = 0; i < 2; i++) {
        const res = await app.get('/api/v1/businesses', tenant.key, { 'idempotency-key': 'same-key-on-a-get' });
        expect(res.status).to.equal(200);
        expect(res.headers['idempotent-replayed']).to.equal(undefined);
      }
      expect(countRows(app.db, 'SELECT count(*) FROM idempotency_records WHERE idempotency_key = ?', 'same-key-on-a-get')).to.equal(0);
    });

    it('ignores even a malformed Idempotency-Key on a GET (300 characters, 200)', async () => {
      const res = await app.get('/api/v1/businesses', tenant.key, { 'idempotency-key': 'k'.repeat(300) });
      expect(res.status, res.text).to.equal(200);
      const withTab = await app.get('/api/v1/accounts', tenant.key, { 'idempotency-key': 'tab\there' });
      expect(withTab.status, withTab.text).to.equal(200);
    });
  });

  describe('Rule 7: only GET and POST are served; everything else is the JSON 404', () => {
    let unknownPath: TestResponse;
    before(async () => {
      unknownPath = await app.get('/api/v1/no-such-endpoint', tenant.key);
    });

    it('answers an unknown path with 404 not_found and no ratelimit-* headers', () => {
      expectError(unknownPath, 404, 'not_found');
      expectNoRateLimitHeaders(unknownPath);
    });

    for (const [method, path] of [
      ['PUT', '/api/v1/customers'],
      ['PATCH', '/api/v1/customers'],
      ['DELETE', '/api/v1/customers'],
      ['PUT', '/api/v1/businesses'],
      ['PATCH', '/api/v1/businesses'],
      ['DELETE', '/api/v1/businesses'],
      ['POST', '/api/v1/businesses'],
      ['POST', '/api/v1/accounts'],
      ['GET', '/api/v1/customers/'],
      ['OPTIONS', '/api/v1/customers'],
    ] as const) {
      it(`answers ${method} ${path} exactly like an unknown path (404 not_found)`, async () => {
        const before = customers();
        const res = await app.request(method, path, { key: tenant.key, body: { name: `${method} Co` } });
        expectError(res, 404, 'not_found');
        expect(withoutRequestId(res)).to.equal(withoutRequestId(unknownPath));
        expectNoRateLimitHeaders(res);
        expect(customers()).to.equal(before);
      });
    }

    it('answers HEAD with 404 and no ratelimit-* headers (a HEAD answer has no body)', async () => {
      const res = await app.request('HEAD', '/api/v1/businesses', { key: tenant.key });
      expect(res.status).to.equal(404);
      expect(res.text).to.equal('');
      expect(res.headers['content-length']).to.equal(unknownPath.headers['content-length']);
      expect(res.headers['x-request-id']).to.be.a('string').and.not.equal('');
      expectNoRateLimitHeaders(res);
    });

    it('does not count a 404 for an unknown method against the rate budget', async () => {
      const first = rateLimitHeaders(await app.get('/api/v1/businesses', tenant.key));
      await app.request('DELETE', '/api/v1/businesses', { key: tenant.key });
      await app.get('/api/v1/nowhere', tenant.key);
      const second = rateLimitHeaders(await app.get('/api/v1/businesses', tenant.key));
      expect(second.remaining).to.equal(first.remaining - 1);
    });
  });

  describe('Rule 10: no CORS, no cookies', () => {
    const origin = { origin: 'https://evil.example' };

    it('sends no Access-Control-Allow-Origin on a 200, a 401, a 404 or a 422, even when the request sends Origin', async () => {
      const responses = [
        await app.get('/api/v1/businesses', tenant.key, origin),
        await app.get('/api/v1/businesses', null, origin),
        await app.get('/api/v1/nowhere', tenant.key, origin),
        await app.post('/api/v1/customers', tenant.key, { bogus: 1 }, origin),
        await app.post('/api/v1/customers', tenant.key, { name: 'Cors Co' }, origin),
      ];
      expect(responses.map((r) => r.status)).to.deep.equal([200, 401, 404, 422, 201]);
      for (const res of responses) {
        expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
      }
    });

    it('answers an OPTIONS preflight with the JSON 404 and no access-control-* headers', async () => {
      const preflight = {
        ...origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      };
      // Authentication comes before route matching: with a working key the preflight is the
      // JSON 404, without one it is the identical 401.
      for (const [key, status] of [[tenant.key, 404], [null, 401]] as const) {
        const res = await app.request('OPTIONS', '/api/v1/customers', { key, headers: preflight });
        expect(res.status).to.equal(status);
        expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
      }
    });

    it('never treats a Cookie header as authentication (401 invalid_key)', async () => {
      const res = await app.get('/api/v1/businesses', null, { cookie: `session=${tenant.key}; token=${tenant.key}; authorization=Bearer ${tenant.key}` });
      expectError(res, 401, 'invalid_key');
      expect(res.headers['set-cookie']).to.equal(undefined);
    });

    it('sets no cookie on a successful response', async () => {
      const res = await app.get('/api/v1/businesses', tenant.key, { cookie: 'session=abc' });
      expect(res.status).to.equal(200);
      expect(res.headers['set-cookie']).to.equal(undefined);
    });
  });
});
