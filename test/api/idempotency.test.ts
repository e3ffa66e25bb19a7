import { expect } from 'chai';
import type { TestApp } from '../support/app.js';
import { requestFingerprint } from '../../src/store/idempotency.js';
import { buildApiTenant, countRows, expectError, expectInvalid, rateLimitHeaders, type ApiTenant, useFreshTenantPerTest } from '../support/api.js';

const START = '2026-03-15T12:00:00.000Z';
const DAY_MS = 24 * 60 * 60 * 1000;

describe('Idempotency (POST /customers)', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  // A fresh account per test: no budget or customer name is shared between tests.
  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { keys: [{}, {}] } });

  const customersNamed = (name: string): number =>
    countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ? AND name = ?', tenant.id, name);
  const records = (): number =>
    countRows(app.db, 'SELECT count(*) FROM idempotency_records WHERE api_key_id IN (?, ?)', tenant.keys[0]!.id, tenant.keys[1]!.id);
  const post = (body: unknown, idempotencyKey?: string, key = tenant.key) =>
    app.post('/api/v1/customers', key, body, idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey });

  it('replays the first response for the same key and body: same status and body plus idempotent-replayed: true, one row', async () => {
    const body = { name: 'Replay Co', email: 'billing@replay.example', paymentTermsDays: 15 };
    const first = await post(body, 'order-1001');
    expect(first.status).to.equal(201);
    expect(first.headers['idempotent-replayed']).to.equal(undefined);

    const second = await post(body, 'order-1001');
    expect(second.status).to.equal(201);
    expect(second.body).to.deep.equal(first.body);
    expect(second.text).to.equal(first.text);
    expect(second.headers['idempotent-replayed']).to.equal('true');
    expect(customersNamed('Replay Co')).to.equal(1);
    expect(countRows(app.db, "SELECT count(*) FROM audit_log WHERE action = 'customer.create' AND subject_id = ?", first.body.id)).to.equal(1);
  });

  it('treats the same fields in another order as the same request (replay)', async () => {
    const first = await post({ name: 'Order Co', currency: 'EUR', remindersEnabled: true }, 'field-order');
    const second = await post({ remindersEnabled: true, currency: 'EUR', name: 'Order Co' }, 'field-order');
    expect(second.status).to.equal(first.status);
    expect(second.headers['idempotent-replayed']).to.equal('true');
    expect(second.body).to.deep.equal(first.body);
  });

  it('replays a 200 created:false as a 200', async () => {
    await post({ name: 'Existing Co' });
    const first = await post({ name: 'existing co' }, 'lookup');
    expect(first.status).to.equal(200);
    expect(first.body.created).to.equal(false);
    const second = await post({ name: 'existing co' }, 'lookup');
    expect(second.status).to.equal(200);
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers['idempotent-replayed']).to.equal('true');
  });

  it('still replays just before 24 hours have passed', async () => {
    const first = await post({ name: 'Almost A Day Co' }, 'almost-a-day');
    app.clock.advanceMs(DAY_MS - 1000);
    const second = await post({ name: 'Almost A Day Co' }, 'almost-a-day');
    expect(second.status).to.equal(201);
    expect(second.headers['idempotent-replayed']).to.equal('true');
    expect(second.body).to.deep.equal(first.body);
  });

  it('refuses the same key with a different body (409 conflict) and writes nothing', async () => {
    const first = await post({ name: 'First Body Co' }, 'clash');
    expect(first.status).to.equal(201);
    const clash = await post({ name: 'Second Body Co' }, 'clash');
    expectError(clash, 409, 'conflict');
    expect(clash.headers['idempotent-replayed']).to.equal(undefined);
    expect(customersNamed('Second Body Co')).to.equal(0);
    rateLimitHeaders(clash);
    const extraField = await post({ name: 'First Body Co', email: 'a@b.example' }, 'clash');
    expectError(extraField, 409, 'conflict');
  });

  it('answers 409 conflict while an earlier request under the key has not finished, and runs nothing', async () => {
    const body = { name: 'Unfinished Co' };
    const now = app.clock.now();
    app.db
      .prepare(
        `INSERT INTO idempotency_records (api_key_id, idempotency_key, request_hash, state, created_at, expires_at)
         VALUES (?, ?, ?, 'in_progress', ?, ?)`,
      )
      .run(
        tenant.keys[0]!.id,
        'still-running',
        requestFingerprint({ operationId: 'customers.create', params: {}, query: {}, body }),
        now.toISOString(),
        new Date(now.getTime() + DAY_MS).toISOString(),
      );
    const res = await post(body, 'still-running');
    expectError(res, 409, 'conflict');
    expect(customersNamed('Unfinished Co')).to.equal(0);

    // Same request, not a clash: once the record completes, the stored answer is replayed.
    const stored = { id: '00000000-0000-4000-8000-000000000001', created: true };
    app.db
      .prepare(
        "UPDATE idempotency_records SET state = 'completed', status_code = 201, response_json = ? WHERE api_key_id = ? AND idempotency_key = ?",
      )
      .run(JSON.stringify(stored), tenant.keys[0]!.id, 'still-running');
    const replay = await post(body, 'still-running');
    expect(replay.status).to.equal(201);
    expect(replay.body).to.deep.equal(stored);
    expect(replay.headers['idempotent-replayed']).to.equal('true');
  });

  it('forgets the key after 24 hours: the request runs again (200 created:false, the customer exists)', async () => {
    const first = await post({ name: 'Day Later Co' }, 'a-day-later');
    expect(first.status).to.equal(201);
    app.clock.advanceMs(DAY_MS);
    const again = await post({ name: 'Day Later Co' }, 'a-day-later');
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ id: first.body.id, created: false });
    expect(again.headers['idempotent-replayed']).to.equal(undefined);
    // The key is stored afresh with the new answer.
    const replay = await post({ name: 'Day Later Co' }, 'a-day-later');
    expect(replay.status).to.equal(200);
    expect(replay.headers['idempotent-replayed']).to.equal('true');
  });

  it('lets a different body use an expired key without conflict', async () => {
    await post({ name: 'Old Body Co' }, 'reused-after-a-day');
    app.clock.advanceMs(DAY_MS);
    const res = await post({ name: 'New Body Co' }, 'reused-after-a-day');
    expect(res.status).to.equal(201);
    expect(customersNamed('New Body Co')).to.equal(1);
  });

  it('keeps keys per API key: two keys may use the same value without collision', async () => {
    const [first, second] = tenant.keys;
    const a = await post({ name: 'Key One Co' }, 'shared-value', first!.key);
    const b = await post({ name: 'Key Two Co' }, 'shared-value', second!.key);
    expect(a.status).to.equal(201);
    expect(b.status).to.equal(201);
    expect(b.headers['idempotent-replayed']).to.equal(undefined);
    expect(b.body.id).to.not.equal(a.body.id);
    // And the same body under each key runs once per key (the second finds the customer).
    const c = await post({ name: 'Key One Co' }, 'other-shared', second!.key);
    expect(c.status).to.equal(200);
    expect(c.headers['idempotent-replayed']).to.equal(undefined);
    expect(customersNamed('Key One Co')).to.equal(1);
  });

  it('keeps keys per API key across accounts too', async () => {
    const other = buildApiTenant(app);
    const mine = await post({ name: 'Mine Co' }, 'cross-account');
    const theirs = await app.post('/api/v1/customers', other.key, { name: 'Theirs Co' }, { 'idempotency-key': 'cross-account' });
    expect(mine.status).to.equal(201);
    expect(theirs.status).to.equal(201);
    expect(theirs.body.id).to.not.equal(mine.body.id);
  });

  it('stores nothing for a 422: the corrected request with the same key runs (201)', async () => {
    const refused = await post({ name: 'Corrected Co', paymentTermsDays: 400 }, 'fix-and-retry');
    expectInvalid(refused, 'paymentTermsDays');
    expect(records()).to.equal(0);
    const corrected = await post({ name: 'Corrected Co', paymentTermsDays: 45 }, 'fix-and-retry');
    expect(corrected.status).to.equal(201);
    expect(corrected.headers['idempotent-replayed']).to.equal(undefined);
    expect(customersNamed('Corrected Co')).to.equal(1);
    expect(records()).to.equal(1);
  });

  it('refuses an Idempotency-Key over 200 characters ("Idempotency-Key:", 422) and runs nothing', async () => {
    const res = await post({ name: 'Long Key Co' }, 'k'.repeat(201));
    expectInvalid(res, 'Idempotency-Key');
    expect(customersNamed('Long Key Co')).to.equal(0);
    const atLimit = await post({ name: 'Long Key Co' }, 'k'.repeat(200));
    expect(atLimit.status).to.equal(201);
  });

  it('refuses an Idempotency-Key with a non-printable or non-ASCII character ("Idempotency-Key:", 422)', async () => {
    expectInvalid(await post({ name: 'Tab Key Co' }, 'tab\tinside'), 'Idempotency-Key');
    // node:http sends header values as latin1: é arrives as the byte 0xE9.
    expectInvalid(await post({ name: 'Accent Key Co' }, 'caf\u00e9'), 'Idempotency-Key');
    expect(customersNamed('Tab Key Co') + customersNamed('Accent Key Co')).to.equal(0);
    expect(records()).to.equal(0);
  });

  it('accepts every printable ASCII character in a key (201, then replay)', async () => {
    const key = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('') + ' x';
    const first = await post({ name: 'Printable Co' }, key);
    expect(first.status).to.equal(201);
    const second = await post({ name: 'Printable Co' }, key);
    expect(second.headers['idempotent-replayed']).to.equal('true');
  });

  it('runs a POST without the header normally each time', async () => {
    const first = await post({ name: 'No Key Co' });
    const second = await post({ name: 'No Key Co' });
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(200);
    expect(second.body).to.deep.equal({ id: first.body.id, created: false });
    expect(second.headers['idempotent-replayed']).to.equal(undefined);
    expect(records()).to.equal(0);
  });

  it('counts a replay against the write budget like any other request', async () => {
    const first = await post({ name: 'Budget Co' }, 'budget');
    const replay = await post({ name: 'Budget Co' }, 'budget');
    expect(Number(replay.headers['ratelimit-remaining'])).to.equal(Number(first.headers['ratelimit-remaining']) - 1);
  });
});
