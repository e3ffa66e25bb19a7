import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import {
  buildApiTenant,
  expectError,
  expectNoRateLimitHeaders,
  rateLimitHeaders,
  repeat,
  setTenant,
  type ApiTenant,
  unixSeconds,
} from '../support/api.js';
import { buildKey } from '../support/factories.js';

const START = '2026-03-15T12:00:00.000Z';
const WINDOW_MS = 600_000;

describe('Limits: request rates per key', () => {
  let app: TestApp;
  let names = 0;

  before(async () => {
    app = await startTestApp(START);
  });
  after(async () => {
    await app.close();
  });
  // Every test starts at the same instant; windows of earlier tests belong to other keys.
  beforeEach(() => {
    app.clock.set(START);
  });

  const read = (key: string): Promise<TestResponse> => app.get('/api/v1/businesses', key);
  const write = (key: string): Promise<TestResponse> => app.post('/api/v1/customers', key, { name: `Rate Co ${++names}` });

  function customBudgets(reads: number, writes: number, options: { keys?: number } = {}): ApiTenant {
    const tenant = buildApiTenant(app, { keys: Array.from({ length: options.keys ?? 1 }, () => ({})) });
    setTenant(app, tenant.id, { rateLimit: { mode: 'custom', readsPerWindow: reads, writesPerWindow: writes } });
    return tenant;
  }

  describe('small plan: 600 reads and 60 writes per 10-minute window', () => {
    let tenant: ApiTenant;
    const windowEnd = unixSeconds(START) + WINDOW_MS / 1000;

    before(() => {
      tenant = buildApiTenant(app, { plan: 'small' });
    });

    it('counts the first read: ratelimit-limit 600, -remaining 599, -reset at the window end in Unix seconds', async () => {
      const res = await read(tenant.key);
      expect(res.status).to.equal(200);
      expect(rateLimitHeaders(res)).to.deep.equal({ limit: 600, remaining: 599, reset: windowEnd });
    });

    it('keeps ratelimit-reset at the window end as the clock moves within the window', async () => {
      app.clock.advanceMs(123_000);
      const res = await read(tenant.key);
      expect(rateLimitHeaders(res)).to.deep.equal({ limit: 600, remaining: 598, reset: windowEnd });
    });

    it('sends the headers on a counted 422 and 404 too', async () => {
      const invalid = await app.get('/api/v1/accounts?type=nonsense', tenant.key);
      expectError(invalid, 422, 'validation_failed');
      expect(rateLimitHeaders(invalid)).to.deep.equal({ limit: 600, remaining: 597, reset: windowEnd });
      const missing = await app.get(`/api/v1/accounts?entityId=${randomUUID()}`, tenant.key);
      expectError(missing, 404, 'not_found');
      expect(rateLimitHeaders(missing)).to.deep.equal({ limit: 600, remaining: 596, reset: windowEnd });
    });

    it('counts writes separately: ratelimit-limit 60 on a POST', async () => {
      const res = await write(tenant.key);
      expect(res.status).to.equal(201);
      expect(rateLimitHeaders(res)).to.deep.equal({ limit: 60, remaining: 59, reset: windowEnd });
      const invalid = await app.post('/api/v1/customers', tenant.key, { nope: true });
      expectError(invalid, 422, 'validation_failed');
      expect(rateLimitHeaders(invalid)).to.deep.equal({ limit: 60, remaining: 58, reset: windowEnd });
    });

    it('answers the 601st read with 429 rate_limited, retry-after to the window end and no ratelimit-* headers; writes still work', async () => {
      // 4 reads were counted above; 596 more reach the budget exactly.
      const the600th = await repeat(596, () => read(tenant.key));
      expect(the600th.status).to.equal(200);
      expect(rateLimitHeaders(the600th)).to.deep.equal({ limit: 600, remaining: 0, reset: windowEnd });

      app.clock.advanceMs(200_000);
      const the601st = await read(tenant.key);
      expectError(the601st, 429, 'rate_limited');
      expect(the601st.headers['retry-after']).to.equal('400');
      expectNoRateLimitHeaders(the601st);
      expectError(await app.get('/api/v1/accounts', tenant.key), 429, 'rate_limited');

      const writing = await write(tenant.key);
      expect(writing.status).to.equal(201);
      expect(rateLimitHeaders(writing).remaining).to.equal(57);
    });

    it('answers the 61st write with 429 rate_limited and writes nothing more', async () => {
      // 3 writes were counted above; 57 more reach the budget exactly.
      const the60th = await repeat(57, () => write(tenant.key));
      expect(the60th.status).to.equal(201);
      expect(rateLimitHeaders(the60th).remaining).to.equal(0);
      const before = Number((app.db.prepare('SELECT count(*) AS n FROM customers WHERE tenant_id = ?').get(tenant.id) as { n: bigint }).n);

      const the61st = await app.post('/api/v1/customers', tenant.key, { name: 'One Too Many Co' });
      expectError(the61st, 429, 'rate_limited');
      expect(the61st.headers['retry-after']).to.equal('600');
      expectNoRateLimitHeaders(the61st);
      const after = Number((app.db.prepare('SELECT count(*) AS n FROM customers WHERE tenant_id = ?').get(tenant.id) as { n: bigint }).n);
      expect(after).to.equal(before);
    });

    it('serves reads and writes again once the window has passed, with a fresh budget', async () => {
      app.clock.set(new Date(Date.parse(START) + WINDOW_MS));
      const reading = await read(tenant.key);
      expect(reading.status).to.equal(200);
      expect(rateLimitHeaders(reading)).to.deep.equal({ limit: 600, remaining: 599, reset: windowEnd + WINDOW_MS / 1000 });
      const writing = await write(tenant.key);
      expect(writing.status).to.equal(201);
      expect(rateLimitHeaders(writing).remaining).to.equal(59);
    });
  });

  it('exhausting writes leaves reads working, and exhausting reads leaves writes working', async () => {
    const writesFirst = customBudgets(3, 2);
    expect((await write(writesFirst.key)).status).to.equal(201);
    expect((await write(writesFirst.key)).status).to.equal(201);
    expectError(await write(writesFirst.key), 429, 'rate_limited');
    const stillReads = await read(writesFirst.key);
    expect(stillReads.status).to.equal(200);
    expect(rateLimitHeaders(stillReads)).to.include({ limit: 3, remaining: 2 });

    const readsFirst = customBudgets(2, 3);
    await repeat(2, () => read(readsFirst.key));
    expectError(await read(readsFirst.key), 429, 'rate_limited');
    const stillWrites = await write(readsFirst.key);
    expect(stillWrites.status).to.equal(201);
    expect(rateLimitHeaders(stillWrites)).to.include({ limit: 3, remaining: 2 });
  });

  it('counts per key, not per account: a second key of the same account keeps its own budget', async () => {
    const tenant = customBudgets(3, 1, { keys: 2 });
    const [first, second] = tenant.keys;
    await repeat(3, () => read(first!.key));
    expectError(await read(first!.key), 429, 'rate_limited');
    const other = await read(second!.key);
    expect(other.status).to.equal(200);
    expect(rateLimitHeaders(other)).to.include({ limit: 3, remaining: 2 });
    expect((await write(first!.key)).status).to.equal(201);
    expect((await write(second!.key)).status).to.equal(201);
  });

  it('sends the headers on a counted 403 entity_not_allowed', async () => {
    const tenant = buildApiTenant(app, { businesses: 2, keys: [{}] });
    const limited = buildKey(app.db, app.clock, { tenantId: tenant.id, businessIds: [tenant.businesses[0]!.id] });
    const res = await app.get(`/api/v1/accounts?entityId=${tenant.businesses[1]!.id}`, limited.key);
    expectError(res, 403, 'entity_not_allowed');
    expect(rateLimitHeaders(res)).to.deep.equal({ limit: 600, remaining: 599, reset: unixSeconds(START) + 600 });
  });

  it('never names a reset second before the window really ends (window opened at a fractional second)', async () => {
    const tenant = buildApiTenant(app);
    app.clock.set('2026-03-15T12:00:00.700Z');
    const first = await read(tenant.key);
    // The window ends at 12:10:00.700, so it has reset only from the Unix second 12:10:01 on.
    const windowEndSeconds = Math.ceil(Date.parse('2026-03-15T12:10:00.700Z') / 1000);
    expect(rateLimitHeaders(first).reset).to.equal(windowEndSeconds);
    app.clock.set('2026-03-15T12:04:59.200Z');
    expect(rateLimitHeaders(await read(tenant.key)).reset).to.equal(windowEndSeconds);
  });

  it('uses the middle plan budgets: 1200 reads and 120 writes', async () => {
    const tenant = buildApiTenant(app);
    setTenant(app, tenant.id, { plan: 'middle' });
    expect(rateLimitHeaders(await read(tenant.key)).limit).to.equal(1200);
    expect(rateLimitHeaders(await write(tenant.key)).limit).to.equal(120);
  });

  it('uses the large plan budgets: 3000 reads and 300 writes', async () => {
    const tenant = buildApiTenant(app, { plan: 'large' });
    expect(rateLimitHeaders(await read(tenant.key)).limit).to.equal(3000);
    expect(rateLimitHeaders(await write(tenant.key)).limit).to.equal(300);
  });

  it('applies a plan change to the next request', async () => {
    const tenant = buildApiTenant(app);
    expect(rateLimitHeaders(await read(tenant.key))).to.include({ limit: 600, remaining: 599 });
    setTenant(app, tenant.id, { plan: 'large' });
    expect(rateLimitHeaders(await read(tenant.key))).to.include({ limit: 3000, remaining: 2998 });
  });

  it('enforces an operator override of 5 reads and 2 writes and shows it in the headers', async () => {
    const tenant = customBudgets(5, 2);
    for (let i = 1; i <= 5; i++) {
      const res = await read(tenant.key);
      expect(res.status).to.equal(200);
      expect(rateLimitHeaders(res)).to.include({ limit: 5, remaining: 5 - i });
    }
    const sixth = await read(tenant.key);
    expectError(sixth, 429, 'rate_limited');
    expectNoRateLimitHeaders(sixth);
    for (let i = 1; i <= 2; i++) {
      const res = await write(tenant.key);
      expect(res.status).to.equal(201);
      expect(rateLimitHeaders(res)).to.include({ limit: 2, remaining: 2 - i });
    }
    expectError(await write(tenant.key), 429, 'rate_limited');
  });

  it('sends no ratelimit-* headers and enforces no limit when the operator turned limits off', async () => {
    const tenant = customBudgets(2, 1);
    await repeat(2, () => read(tenant.key));
    expectError(await read(tenant.key), 429, 'rate_limited');
    await write(tenant.key);
    expectError(await write(tenant.key), 429, 'rate_limited');

    setTenant(app, tenant.id, { rateLimit: { mode: 'off' } });
    for (let i = 0; i < 10; i++) {
      const res = await read(tenant.key);
      expect(res.status).to.equal(200);
      expectNoRateLimitHeaders(res);
    }
    for (let i = 0; i < 3; i++) {
      const res = await write(tenant.key);
      expect(res.status).to.equal(201);
      expectNoRateLimitHeaders(res);
    }

    setTenant(app, tenant.id, { rateLimit: { mode: 'plan' } });
    const restored = await read(tenant.key);
    expect(restored.status).to.equal(200);
    expect(rateLimitHeaders(restored).limit).to.equal(600);
  });
});
