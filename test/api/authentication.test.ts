import { expect } from 'chai';
import { generateKeyValue, revokeKey } from '../../src/books/keys.js';
import type { TestApp, TestResponse } from '../support/app.js';
import {
  buildApiTenant,
  useTenantApp,
  countRows,
  expectError,
  expectNoRateLimitHeaders,
  rateLimitHeaders,
  repeat,
  setTenant,
  type ApiTenant,
  withoutRequestId,
} from '../support/api.js';
import { buildKey, TEST_ACTOR } from '../support/factories.js';

/** The same key with one character of its body changed: the checksum no longer matches. */
function flipOneChar(key: string): string {
  const at = 10;
  const replacement = key[at] === 'A' ? 'B' : 'A';
  return key.slice(0, at) + replacement + key.slice(at + 1);
}

describe('Authentication', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useTenantApp((started) => ({ app, tenant } = started));

  describe('rule 8: every kind of bad key answers the identical 401 invalid_key', () => {
    let reference: TestResponse;
    before(async () => {
      reference = await app.get('/api/v1/businesses', null);
      expectError(reference, 401, 'invalid_key');
    });

    const expectSameRefusal = (res: TestResponse): void => {
      expectError(res, 401, 'invalid_key');
      expect(withoutRequestId(res)).to.equal(withoutRequestId(reference));
      expect(Object.keys(res.headers).sort()).to.deep.equal(Object.keys(reference.headers).sort());
      expectNoRateLimitHeaders(res);
      expect(res.headers['www-authenticate']).to.equal(undefined);
    };

    it('refuses a request without an Authorization header (401 invalid_key)', () => {
      expectNoRateLimitHeaders(reference);
    });

    it('refuses Basic authentication, even carrying a real key (401 invalid_key)', async () => {
      const basic = Buffer.from(`user:${tenant.key}`).toString('base64');
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: `Basic ${basic}` }));
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: `Basic ${tenant.key}` }));
    });

    it('takes the auth scheme case-insensitively (RFC 9110) but never the key', async () => {
      expect((await app.get('/api/v1/businesses', null, { authorization: `bearer ${tenant.key}` })).status).to.equal(200);
      expect((await app.get('/api/v1/businesses', null, { authorization: `BEARER ${tenant.key}` })).status).to.equal(200);
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: `Bearer ${tenant.key.toUpperCase()}` }));
    });

    it('refuses Bearer with garbage, an empty Bearer, an overlong value or trailing text (401 invalid_key)', async () => {
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: 'Bearer not-a-key' }));
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: 'Bearer' }));
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: `Bearer ${'x'.repeat(500)}` }));
      expectSameRefusal(await app.get('/api/v1/businesses', null, { authorization: `Bearer ${tenant.key} extra` }));
    });

    it('refuses a real key with one character changed (checksum fails, 401 invalid_key)', async () => {
      const flipped = flipOneChar(tenant.key);
      expect(flipped).to.not.equal(tenant.key);
      expectSameRefusal(await app.get('/api/v1/businesses', flipped));
    });

    it('refuses a well-formed key that was never stored (401 invalid_key)', async () => {
      expectSameRefusal(await app.get('/api/v1/businesses', generateKeyValue()));
    });

    it('refuses a revoked key from the next request on (401 invalid_key)', async () => {
      const key = buildKey(app.db, app.clock, { tenantId: tenant.id });
      expect((await app.get('/api/v1/businesses', key.key)).status).to.equal(200);
      revokeKey(app.db, app.clock, TEST_ACTOR, key.id);
      expectSameRefusal(await app.get('/api/v1/businesses', key.key));
      expectSameRefusal(await app.post('/api/v1/customers', key.key, { name: 'Revoked Co' }));
    });

    it('keeps a key working through the last second of its expiry day (UTC), then refuses it (401 invalid_key)', async () => {
      const key = buildKey(app.db, app.clock, { tenantId: tenant.id, expiresOn: '2026-03-15' });
      try {
        app.clock.set('2026-03-15T23:59:59.999Z');
        expect((await app.get('/api/v1/businesses', key.key)).status).to.equal(200);
        app.clock.set('2026-03-16T00:00:00.000Z');
        expectSameRefusal(await app.get('/api/v1/businesses', key.key));
        expectSameRefusal(await app.post('/api/v1/customers', key.key, { name: 'Expired Co' }));
      } finally {
        app.clock.set('2026-03-15T12:00:00.000Z');
      }
    });

    it('refuses every key of an account without API access (401 invalid_key), and accepts it again once restored', async () => {
      const other = buildApiTenant(app);
      expect((await app.get('/api/v1/businesses', other.key)).status).to.equal(200);
      setTenant(app, other.id, { apiAccess: false });
      expectSameRefusal(await app.get('/api/v1/businesses', other.key));
      expectSameRefusal(await app.post('/api/v1/customers', other.key, { name: 'No Access Co' }));
      setTenant(app, other.id, { apiAccess: true });
      expect((await app.get('/api/v1/businesses', other.key)).status).to.equal(200);
    });

    it('refuses a bad key on an unknown path and an unknown method alike (401 before route match)', async () => {
      expectSameRefusal(await app.get('/api/v1/no-such-endpoint', null));
      expectSameRefusal(await app.request('DELETE', '/api/v1/customers', { key: generateKeyValue() }));
    });

    it('writes nothing for a refused key', async () => {
      const before = countRows(app.db, 'SELECT count(*) FROM customers');
      await app.post('/api/v1/customers', flipOneChar(tenant.key), { name: 'Never Written Co' });
      await app.post('/api/v1/customers', generateKeyValue(), { name: 'Never Written Co' });
      expect(countRows(app.db, 'SELECT count(*) FROM customers')).to.equal(before);
    });
  });

  describe('rule 3: access level (scopes)', () => {
    it('refuses a write with a Read only key (403 insufficient_scope), without ratelimit-* headers and without writing', async () => {
      const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
      const before = countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ?', tenant.id);
      const res = await app.post('/api/v1/customers', readOnly.key, { name: 'Scope Co' });
      expectError(res, 403, 'insufficient_scope');
      expectNoRateLimitHeaders(res);
      expect(countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ?', tenant.id)).to.equal(before);
      expect(countRows(app.db, "SELECT count(*) FROM audit_log WHERE actor_id = ? AND action = 'customer.create'", readOnly.id)).to.equal(0);
    });

    it('lets a Read only key read (200)', async () => {
      const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
      expect((await app.get('/api/v1/businesses', readOnly.key)).status).to.equal(200);
      expect((await app.get('/api/v1/accounts', readOnly.key)).status).to.equal(200);
    });

    it('lets a Read and write key write (201)', async () => {
      const res = await app.post('/api/v1/customers', tenant.key, { name: 'Read Write Co' });
      expect(res.status, res.text).to.equal(201);
      expect(countRows(app.db, 'SELECT count(*) FROM customers WHERE id = ?', res.body.id)).to.equal(1);
    });
  });

  describe('rule 9: every write is recorded in the audit log under the key\'s name', () => {
    it('records the write with actor_type api_key, the key id and the key name', async () => {
      const named = buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'ledger-sync' });
      const res = await app.post('/api/v1/customers', named.key, { name: 'Audited Co' });
      expect(res.status).to.equal(201);
      const row = app.db
        .prepare("SELECT actor_type, actor_id, actor_name, action, subject_id FROM audit_log WHERE action = 'customer.create' AND subject_id = ?")
        .get(res.body.id);
      expect(row).to.deep.equal({ actor_type: 'api_key', actor_id: named.id, actor_name: 'ledger-sync', action: 'customer.create', subject_id: res.body.id });
    });
  });

  describe('rule 10: rotation (create the new key, switch, verify, revoke the old)', () => {
    it('serves both keys side by side until the old one is revoked, then only the new one', async () => {
      const rotating = buildApiTenant(app, { plan: 'small' });
      const replacement = buildKey(app.db, app.clock, { tenantId: rotating.id, name: 'replacement' });
      expect((await app.get('/api/v1/businesses', rotating.key)).status).to.equal(200);
      expect((await app.get('/api/v1/businesses', replacement.key)).status).to.equal(200);
      revokeKey(app.db, app.clock, TEST_ACTOR, rotating.keys[0]!.id);
      expectError(await app.get('/api/v1/businesses', rotating.key), 401, 'invalid_key');
      expect((await app.get('/api/v1/businesses', replacement.key)).status).to.equal(200);
    });
  });
});

describe('Limits: failed authentication counted per source address', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  // A fresh app: every other suite's refused keys would count against the same address.
  useTenantApp((started) => ({ app, tenant } = started));

  it('answers 300 failures with 401, never counts working keys, answers the 301st with 429, and forgets after the window', async () => {
    const windowStartMs = app.clock.now().getTime();
    const bad = (): Promise<TestResponse> => app.get('/api/v1/businesses', generateKeyValue());

    const last299 = await repeat(299, bad);
    expectError(last299, 401, 'invalid_key');

    // Working keys in between are neither refused nor counted.
    for (let i = 0; i < 5; i++) expect((await app.get('/api/v1/businesses', tenant.key)).status).to.equal(200);

    app.clock.advanceMs(100_000);
    const the300th = await bad();
    expectError(the300th, 401, 'invalid_key');

    const the301st = await app.get('/api/v1/businesses', null);
    expectError(the301st, 429, 'rate_limited');
    expect(the301st.headers['retry-after']).to.equal('500');
    expectNoRateLimitHeaders(the301st);

    // Every kind of failure is limited now, on any path.
    expectError(await app.post('/api/v1/customers', 'Bearer nonsense', { name: 'x' }), 429, 'rate_limited');
    expectError(await app.request('DELETE', '/api/v1/nowhere'), 429, 'rate_limited');
    // The source address is the socket's: a forwarded-for header does not reset the count.
    expectError(await app.get('/api/v1/businesses', null, { 'x-forwarded-for': '203.0.113.9' }), 429, 'rate_limited');

    // A working key from the same address still works.
    const working = await app.get('/api/v1/businesses', tenant.key);
    expect(working.status).to.equal(200);
    rateLimitHeaders(working);
    expect((await app.post('/api/v1/customers', tenant.key, { name: 'Still Works Co' })).status).to.equal(201);

    app.clock.set(new Date(windowStartMs + 599_000));
    const nearEnd = await bad();
    expectError(nearEnd, 429, 'rate_limited');
    expect(nearEnd.headers['retry-after']).to.equal('1');

    app.clock.set(new Date(windowStartMs + 600_000));
    expectError(await bad(), 401, 'invalid_key');
  });
});
