import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { systemAccountId } from '../../src/books/chart.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { postEntry, withPostingFields } from '../../src/books/ledger.js';
import { lockPeriod } from '../../src/books/periods.js';
import { defineCommand } from '../../src/door/door.js';
import { defineWrite } from '../../src/http/operation.js';
import { IsoDate, Strict, Uuid } from '../../src/api/schemas/common.js';
import { auditProbe, publishedWith } from '../support/probes.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildApiTenant, countRows, expectError, rateLimitHeaders, setTenant, type ApiTenant } from '../support/api.js';
import { TEST_ACTOR } from '../support/factories.js';

/**
 * The error table's codes that the published endpoints cannot reach yet (internal_error,
 * period_locked, read_only_billing_state), proved through the real pipeline with probe
 * operations that post through the posting engine, as the later writes will.
 */

/** Posts a 1.00 owner's deposit dated `date` in the key's only business, through the one door for writes. */
const postCommand = defineCommand({
  name: 'probe.post',
  scope: (_input: { date: string }) => ({ business: undefined }),
  run(context, input) {
    const { db, clock, actor, reached } = context;
    const businessId = reached.business!.id;
    const entry = withPostingFields({ period_locked: 'date' }, () =>
      postEntry(db, clock, actor, {
        businessId,
        date: input.date,
        sourceType: 'manual',
        lines: [
          { accountId: systemAccountId(db, businessId, 'bank'), direction: 'debit', amountCents: 100n },
          { accountId: systemAccountId(db, businessId, 'owner_equity'), direction: 'credit', amountCents: 100n },
        ],
      }),
    );
    auditProbe(context, 'probe.post');
    return { entryId: entry.id };
  },
});
const postProbe = defineWrite({
  id: 'expenses.create',
  method: 'POST',
  path: '/probe/post',
  permission: 'expenses:write',
  summary: 'probe: post an entry',
  params: Strict({}),
  query: Strict({}),
  body: Strict({ date: IsoDate }),
  responses: { 201: { description: 'posted', schema: Strict({ entryId: Uuid }) } },
  errors: ['period_locked', 'read_only_billing_state'],
  command: postCommand,
  input: ({ body }) => ({ date: body.date }),
  reply: (result) => ({ status: 201, body: result }),
});

/** Creates a customer, then fails while `failures.remaining` > 0: a fault after work was done. */
const failures = { remaining: 0 };
const faultCommand = defineCommand({
  name: 'probe.fault',
  scope: (input: { tenantId: string; name: string }) => ({ account: input.tenantId }),
  run({ db, clock, actor }, input) {
    const created = findOrCreateCustomer(db, clock, actor, input.tenantId, { name: input.name });
    if (failures.remaining > 0) {
      failures.remaining -= 1;
      throw new Error('disk on fire at /var/lib/daybook/secret-path');
    }
    return created;
  },
});
const faultProbe = defineWrite({
  id: 'invoices.send',
  method: 'POST',
  path: '/probe/fault',
  permission: 'invoices:write',
  summary: 'probe: fail after writing',
  params: Strict({}),
  query: Strict({}),
  body: Strict({ name: Type.String() }),
  responses: { 201: { description: 'created', schema: Strict({ id: Uuid, created: Type.Boolean() }) } },
  errors: [],
  command: faultCommand,
  input: ({ principal, body }) => ({ tenantId: principal.tenant.id, name: body.name }),
  reply: (result) => ({ status: 201, body: result }),
});

/** A write whose reply is a refusal instead of the command throwing it: the door must not commit that. */
const refusalCommand = defineCommand({
  name: 'probe.returnedRefusal',
  scope: (input: { tenantId: string; name: string }) => ({ account: input.tenantId }),
  run: ({ db, clock, actor }, input) => findOrCreateCustomer(db, clock, actor, input.tenantId, { name: input.name }),
});
const refusalProbe = defineWrite({
  id: 'review.accept',
  method: 'POST',
  path: '/probe/returned-refusal',
  permission: 'review:write',
  summary: 'probe: return a 422',
  params: Strict({}),
  query: Strict({}),
  body: Strict({ name: Type.String() }),
  responses: { 201: { description: 'created', schema: Strict({}) } },
  errors: [],
  command: refusalCommand,
  input: ({ principal, body }) => ({ tenantId: principal.tenant.id, name: body.name }),
  reply: () => ({ status: 422, body: { error: 'should have thrown' } }) as never,
});

describe('Errors: codes from the error table, through the real pipeline', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  before(async () => {
    app = await startTestApp('2026-03-15T12:00:00.000Z', { operations: publishedWith([postProbe, faultProbe, refusalProbe]) });
    tenant = buildApiTenant(app, { plan: 'large' });
  });
  after(async () => {
    await app.close();
  });

  const entries = (): number => countRows(app.db, 'SELECT count(*) FROM journal_entries WHERE business_id = ?', tenant.business.id);
  const customersNamed = (name: string): number =>
    countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ? AND name = ?', tenant.id, name);

  describe('internal_error (500)', () => {
    it('answers a fault with the error body, no internals, the request id, and the ratelimit headers; nothing is written', async () => {
      failures.remaining = 1;
      const res = await app.allowingFaults(() => app.post('/api/v1/probe/fault', tenant.key, { name: 'Fault Co' }));
      expectError(res, 500, 'internal_error');
      expect(res.text).not.to.contain('disk on fire');
      expect(res.text).not.to.contain('/var/lib');
      expect(res.text).not.to.match(/\bat .+:\d+:\d+/);
      expect(rateLimitHeaders(res).limit).to.equal(300);
      expect(customersNamed('Fault Co')).to.equal(0);
    });

    it('lets a client retry after a 500 with the same Idempotency-Key: the write runs once (idempotency rule 4)', async () => {
      failures.remaining = 1;
      const headers = { 'idempotency-key': 'retry-after-fault' };
      const first = await app.allowingFaults(() => app.post('/api/v1/probe/fault', tenant.key, { name: 'Retry Co' }, headers));
      expectError(first, 500, 'internal_error');
      expect(customersNamed('Retry Co')).to.equal(0);

      const second = await app.allowingFaults(() => app.post('/api/v1/probe/fault', tenant.key, { name: 'Retry Co' }, headers));
      expect(second.status, second.text).to.equal(201);
      expect(second.headers['idempotent-replayed']).to.equal(undefined);

      const third = await app.post('/api/v1/probe/fault', tenant.key, { name: 'Retry Co' }, headers);
      expect(third.status).to.equal(201);
      expect(third.headers['idempotent-replayed']).to.equal('true');
      expect(third.body).to.deep.equal(second.body);
      expect(customersNamed('Retry Co')).to.equal(1);
    });

    it('rolls back a write whose reply is a refusal instead of a thrown one (500, nothing written, nothing stored)', async () => {
      const res = await app.allowingFaults(() => app.post('/api/v1/probe/returned-refusal', tenant.key, { name: 'Returned Co' }, { 'idempotency-key': 'returned' }));
      expectError(res, 500, 'internal_error');
      expect(customersNamed('Returned Co')).to.equal(0);
      expect(countRows(app.db, "SELECT count(*) FROM idempotency_records WHERE idempotency_key = 'returned'")).to.equal(0);
    });
  });

  describe('period_locked (409)', () => {
    before(() => {
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
    });

    it('refuses a posting dated in a closed period, writes nothing and leaves the key free', async () => {
      const before = entries();
      const headers = { 'idempotency-key': 'locked-then-fixed' };
      const res = await app.post('/api/v1/probe/post', tenant.key, { date: '2026-02-28' }, headers);
      expectError(res, 409, 'period_locked', 'date:');
      expect(rateLimitHeaders(res).limit).to.equal(300);
      expect(entries()).to.equal(before);

      // period_locked is a 409 but not an idempotency clash: the corrected request runs.
      const fixed = await app.post('/api/v1/probe/post', tenant.key, { date: '2026-03-01' }, headers);
      expect(fixed.status, fixed.text).to.equal(201);
      expect(entries()).to.equal(before + 1);
    });
  });

  describe('read_only_billing_state (402)', () => {
    after(() => {
      setTenant(app, tenant.id, { billingState: 'active' });
    });

    it('refuses any write that posts while billing is past due; reads and POST /customers still work', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const before = entries();
      expectError(await app.post('/api/v1/probe/post', tenant.key, { date: '2026-03-10' }), 402, 'read_only_billing_state');
      expect(entries()).to.equal(before);
      expect((await app.get('/api/v1/businesses', tenant.key)).status).to.equal(200);
      expect((await app.post('/api/v1/customers', tenant.key, { name: 'Still Billing Co' })).status).to.equal(201);

      setTenant(app, tenant.id, { billingState: 'active' });
      expect((await app.post('/api/v1/probe/post', tenant.key, { date: '2026-03-10' })).status).to.equal(201);
    });
  });

  describe('not_found (404) for paths in another case', () => {
    it('matches paths case-sensitively: /api/v1/BUSINESSES is an unknown path, not counted', async () => {
      const res = await app.get('/api/v1/BUSINESSES', tenant.key);
      expectError(res, 404, 'not_found');
      expect(res.headers['ratelimit-limit']).to.equal(undefined);
    });
  });
});
