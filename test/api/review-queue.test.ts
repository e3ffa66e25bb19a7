import { expect } from 'chai';
import { ledgerTotals } from '../../src/books/ledger.js';
import { lockPeriod } from '../../src/books/periods.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import {
  buildApiTenant,
  countRows,
  expectError,
  expectInvalid,
  setTenant,
  type ApiTenant,
  useFreshTenantPerTest,
  withoutRequestId,
} from '../support/api.js';
import { accountIdByName, accountIdByRole, anyAccountIdByName, buildBusiness, buildKey, TEST_ACTOR } from '../support/factories.js';
import { addVendor, usdMoney, withQuery } from '../support/register.js';
import { acceptedAt, queueReviewItem, type QueuedItemInput } from '../support/review.js';

const START = '2026-03-15T12:00:00.000Z';
const NO_SUCH_ID = '0b9c3c52-6f1e-4c1a-9d59-4c1f0e7d2a11';
const ITEM_KEYS = ['amount', 'confidence', 'date', 'description', 'id', 'proposedAccount', 'proposedAccountId', 'rationale', 'vendor'];

interface QueueBody {
  hasMore: boolean;
  highConfidence: Array<Record<string, unknown> & { id: string }>;
  needsReview: Array<Record<string, unknown> & { id: string }>;
}

/** A 200 queue answer: exactly {hasMore, highConfidence, needsReview}, every item exactly the spec's fields. */
function expectQueue(res: TestResponse): QueueBody {
  expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(200);
  expect(Object.keys(res.body).sort()).to.deep.equal(['hasMore', 'highConfidence', 'needsReview']);
  expect(res.body.hasMore).to.be.a('boolean');
  for (const item of [...res.body.highConfidence, ...res.body.needsReview]) expect(Object.keys(item).sort()).to.deep.equal(ITEM_KEYS);
  return res.body as QueueBody;
}

const ids = (items: Array<{ id: string }>): string[] => items.map((item) => item.id);

describe('GET /review-queue', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { plan: 'large' } });

  const queue = (input: Partial<QueuedItemInput> = {}, business = tenant.business) =>
    queueReviewItem(app, business, { date: '2026-03-10', amountCents: 1000n, ...input });
  const get = async (query: Record<string, string | number | undefined> = {}, key = tenant.key): Promise<QueueBody> =>
    expectQueue(await app.get(withQuery('/api/v1/review-queue', query), key));

  describe('items', () => {
    it('shows an item exactly as {id, date, amount (USD money), vendor, description, proposedAccountId, proposedAccount, confidence, rationale}', async () => {
      const vendorId = addVendor(app, tenant.id, 'Staples');
      const item = queue({
        date: '2026-03-02',
        amountCents: 123456n,
        vendorId,
        description: 'CARD 4411 STAPLES #0231',
        proposedAccount: 'Office Supplies',
        confidence: 0.95,
        rationale: 'Staples was booked to Office Supplies 14 times.',
      });
      expect(await get()).to.deep.equal({
        hasMore: false,
        highConfidence: [
          {
            id: item.itemId,
            date: '2026-03-02',
            amount: usdMoney('123456', '$1,234.56'),
            vendor: 'Staples',
            description: 'CARD 4411 STAPLES #0231',
            proposedAccountId: accountIdByName(app.db, tenant.business.id, 'Office Supplies'),
            proposedAccount: 'Office Supplies',
            confidence: 0.95,
            rationale: 'Staples was booked to Office Supplies 14 times.',
          },
        ],
        needsReview: [],
      });
    });

    it('shows null vendor, description, proposal, confidence and rationale as null (every key present)', async () => {
      const item = queue({ amountCents: 5n, proposedAccount: null, confidence: null, rationale: null, description: null });
      expect(await get()).to.deep.equal({
        hasMore: false,
        highConfidence: [],
        needsReview: [
          {
            id: item.itemId,
            date: '2026-03-10',
            amount: usdMoney('5', '$0.05'),
            vendor: null,
            description: null,
            proposedAccountId: null,
            proposedAccount: null,
            confidence: null,
            rationale: null,
          },
        ],
      });
    });

    it('answers an empty queue as {hasMore: false, highConfidence: [], needsReview: []}', async () => {
      expect(await get()).to.deep.equal({ hasMore: false, highConfidence: [], needsReview: [] });
    });

    it('carries confidence as a JSON number, and amounts as digit strings', async () => {
      queue({ confidence: 0.42, amountCents: 99999999999999n });
      const res = await app.get('/api/v1/review-queue', tenant.key);
      expect(res.text).to.contain('"confidence":0.42');
      expect(res.text).to.contain('"cents":"99999999999999"');
      expect(expectQueue(res).needsReview[0]!.amount).to.deep.equal(usdMoney('99999999999999', '$999,999,999,999.99'));
    });

    it('leaves out items that were accepted (POST /review-queue/{id}/accept)', async () => {
      const first = queue({ date: '2026-03-01' });
      const second = queue({ date: '2026-03-02' });
      const res = await app.post(`/api/v1/review-queue/${first.itemId}/accept`, tenant.key, {});
      expect(res.status, res.text).to.equal(200);
      const body = await get();
      expect(ids([...body.highConfidence, ...body.needsReview])).to.deep.equal([second.itemId]);
    });

    it('does not list transactions that never entered the queue (a manual expense)', async () => {
      const res = await app.post('/api/v1/expenses', tenant.key, {
        date: '2026-03-10',
        amountCents: '500',
        vendorName: 'Direct Vendor',
        accountId: accountIdByName(app.db, tenant.business.id, 'Meals'),
      });
      expect(res.status, res.text).to.equal(201);
      expect(await get()).to.deep.equal({ hasMore: false, highConfidence: [], needsReview: [] });
    });
  });

  describe('highConfidence and needsReview (threshold: DAYBOOK_REVIEW_CONFIDENCE, default 0.9)', () => {
    it('puts an item scored exactly 0.9 with a proposal in highConfidence', async () => {
      const item = queue({ confidence: 0.9 });
      const body = await get();
      expect(ids(body.highConfidence)).to.deep.equal([item.itemId]);
      expect(body.needsReview).to.deep.equal([]);
      expect(body.highConfidence[0]!.confidence).to.equal(0.9);
    });

    it('puts an item scored 1 with a proposal in highConfidence', async () => {
      const item = queue({ confidence: 1 });
      expect(ids((await get()).highConfidence)).to.deep.equal([item.itemId]);
    });

    it('puts an item scored just under 0.9 (0.8999) in needsReview', async () => {
      const item = queue({ confidence: 0.8999 });
      const body = await get();
      expect(body.highConfidence).to.deep.equal([]);
      expect(ids(body.needsReview)).to.deep.equal([item.itemId]);
    });

    it('puts an item scored 0.95 without a proposal in needsReview', async () => {
      const item = queue({ confidence: 0.95, proposedAccount: null });
      const body = await get();
      expect(body.highConfidence).to.deep.equal([]);
      expect(ids(body.needsReview)).to.deep.equal([item.itemId]);
      expect(body.needsReview[0]).to.deep.include({ proposedAccountId: null, proposedAccount: null, confidence: 0.95 });
    });

    it('puts an item with a proposal but null confidence (never scored) in needsReview', async () => {
      const item = queue({ confidence: null });
      const body = await get();
      expect(body.highConfidence).to.deep.equal([]);
      expect(ids(body.needsReview)).to.deep.equal([item.itemId]);
      expect(body.needsReview[0]).to.deep.include({ proposedAccount: 'Office Supplies', confidence: null });
    });

    it('puts an item scored 0 in needsReview', async () => {
      const item = queue({ confidence: 0 });
      expect(ids((await get()).needsReview)).to.deep.equal([item.itemId]);
    });

    it('splits a mixed queue, each list oldest first', async () => {
      const high1 = queue({ date: '2026-03-01', confidence: 0.99 });
      const low1 = queue({ date: '2026-03-02', confidence: 0.5 });
      const high2 = queue({ date: '2026-03-03', confidence: 0.9 });
      const low2 = queue({ date: '2026-03-04', confidence: null });
      const low3 = queue({ date: '2026-03-05', confidence: 0.97, proposedAccount: null });
      const body = await get();
      expect(ids(body.highConfidence)).to.deep.equal([high1.itemId, high2.itemId]);
      expect(ids(body.needsReview)).to.deep.equal([low1.itemId, low2.itemId, low3.itemId]);
      expect(body.hasMore).to.equal(false);
    });
  });

  describe('order: oldest first, by the transaction\'s date, then when queued', () => {
    it('orders by the transaction date, not by when the item was queued', async () => {
      const late = queue({ date: '2026-03-12' });
      app.clock.advanceMs(60_000);
      const early = queue({ date: '2026-02-20' });
      app.clock.advanceMs(60_000);
      const middle = queue({ date: '2026-03-01' });
      expect(ids((await get()).highConfidence)).to.deep.equal([early.itemId, middle.itemId, late.itemId]);
    });

    it('orders items of the same date by when they were queued', async () => {
      const first = queue({ date: '2026-03-05', amountCents: 300n });
      app.clock.advanceMs(1_000);
      const second = queue({ date: '2026-03-05', amountCents: 100n });
      app.clock.advanceMs(1_000);
      const third = queue({ date: '2026-03-05', amountCents: 200n });
      expect(ids((await get()).highConfidence)).to.deep.equal([first.itemId, second.itemId, third.itemId]);
    });
  });

  describe('limit (1 to 100, default 50; counts both lists; hasMore tells the rest)', () => {
    /** Five items, oldest first: high, low, high, low, high. */
    const queueFive = () =>
      ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'].map((date, index) =>
        queue({ date, confidence: index % 2 === 0 ? 0.95 : 0.5 }),
      );

    it('limit=2 serves the two oldest items across both lists, with hasMore true', async () => {
      const items = queueFive();
      const body = await get({ limit: 2 });
      expect(body).to.deep.include({ hasMore: true });
      expect(ids(body.highConfidence)).to.deep.equal([items[0]!.itemId]);
      expect(ids(body.needsReview)).to.deep.equal([items[1]!.itemId]);
    });

    it('limit=1 serves only the oldest item, with hasMore true', async () => {
      const items = queueFive();
      const body = await get({ limit: 1 });
      expect(body.hasMore).to.equal(true);
      expect(ids(body.highConfidence)).to.deep.equal([items[0]!.itemId]);
      expect(body.needsReview).to.deep.equal([]);
    });

    it('limit=4 of five items: four served (3 oldest of one list are not favoured), hasMore true', async () => {
      const items = queueFive();
      const body = await get({ limit: 4 });
      expect(body.hasMore).to.equal(true);
      expect(ids(body.highConfidence)).to.deep.equal([items[0]!.itemId, items[2]!.itemId]);
      expect(ids(body.needsReview)).to.deep.equal([items[1]!.itemId, items[3]!.itemId]);
    });

    it('limit equal to the number waiting serves them all with hasMore false', async () => {
      queueFive();
      const body = await get({ limit: 5 });
      expect(body.hasMore).to.equal(false);
      expect(body.highConfidence.length + body.needsReview.length).to.equal(5);
    });

    it('tells the rest after accepting: hasMore turns false once what waits fits the limit', async () => {
      const items = queueFive();
      expect((await get({ limit: 4 })).hasMore).to.equal(true);
      const res = await app.post(`/api/v1/review-queue/${items[0]!.itemId}/accept`, tenant.key, {});
      expect(res.status, res.text).to.equal(200);
      const body = await get({ limit: 4 });
      expect(body.hasMore).to.equal(false);
      expect(ids([...body.highConfidence, ...body.needsReview]).sort()).to.deep.equal(items.slice(1).map((i) => i.itemId).sort());
    });

    it('serves 50 items by default, with hasMore true when 51 wait', async () => {
      for (let day = 0; day < 51; day++) queue({ date: `2026-01-${String((day % 28) + 1).padStart(2, '0')}`, confidence: day % 3 === 0 ? null : 0.95 });
      const body = await get();
      expect(body.highConfidence.length + body.needsReview.length).to.equal(50);
      expect(body.hasMore).to.equal(true);
    });

    it('serves 100 items at limit=100, with hasMore true when 101 wait and false when 100 do', async () => {
      const items = Array.from({ length: 101 }, (_, n) => queue({ date: `2026-02-${String((n % 28) + 1).padStart(2, '0')}` }));
      let body = await get({ limit: 100 });
      expect(body.highConfidence).to.have.length(100);
      expect(body.hasMore).to.equal(true);
      // Accepting any one leaves exactly 100 waiting.
      const res = await app.post(`/api/v1/review-queue/${items[0]!.itemId}/accept`, tenant.key, {});
      expect(res.status, res.text).to.equal(200);
      body = await get({ limit: 100 });
      expect(body.highConfidence).to.have.length(100);
      expect(body.hasMore).to.equal(false);
    });

    for (const limit of ['0', '101', 'x', '1.5', '-1', '']) {
      it(`refuses limit=${JSON.stringify(limit)} (422 validation_failed "limit:")`, async () => {
        queue();
        expectInvalid(await app.get(`/api/v1/review-queue?limit=${encodeURIComponent(limit)}`, tenant.key), 'limit');
      });
    }
  });

  describe('not paged (read rule 3)', () => {
    it('refuses a cursor parameter (422 validation_failed naming "cursor")', async () => {
      queue();
      expectInvalid(await app.get('/api/v1/review-queue?cursor=abc', tenant.key), 'cursor');
    });

    it('refuses a cursor even alongside a valid limit (422 "cursor:")', async () => {
      expectInvalid(await app.get('/api/v1/review-queue?limit=10&cursor=eyJ4IjoxfQ', tenant.key), 'cursor');
    });

    it('refuses any other unknown parameter, naming it (422 "offset:")', async () => {
      expectInvalid(await app.get('/api/v1/review-queue?offset=10', tenant.key), 'offset');
    });

    it('has no nextCursor in its answer', async () => {
      queue();
      const res = await app.get('/api/v1/review-queue?limit=1', tenant.key);
      expect(res.body).to.not.have.property('nextCursor');
    });
  });

  describe('entity rules', () => {
    it('spans every business of the account without entityId for an unlimited key, oldest first across businesses', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [typeof multi.business, typeof multi.business];
      const inB = queue({ date: '2026-03-01' }, b);
      const inA = queue({ date: '2026-03-02' }, a);
      const lowInB = queue({ date: '2026-03-03', confidence: 0.2 }, b);
      const body = await get({}, multi.key);
      expect(ids(body.highConfidence)).to.deep.equal([inB.itemId, inA.itemId]);
      expect(ids(body.needsReview)).to.deep.equal([lowInB.itemId]);
    });

    it('limits the spanning queue as one: limit counts items of every business together', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [typeof multi.business, typeof multi.business];
      const first = queue({ date: '2026-03-01' }, a);
      const second = queue({ date: '2026-03-02' }, b);
      queue({ date: '2026-03-03' }, a);
      const body = await get({ limit: 2 }, multi.key);
      expect(ids(body.highConfidence)).to.deep.equal([first.itemId, second.itemId]);
      expect(body.hasMore).to.equal(true);
    });

    it('serves only the named business with entityId', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [typeof multi.business, typeof multi.business];
      queue({ date: '2026-03-01' }, a);
      const inB = queue({ date: '2026-03-02' }, b);
      const body = await get({ entityId: b.id }, multi.key);
      expect(ids(body.highConfidence)).to.deep.equal([inB.itemId]);
      expect(body.needsReview).to.deep.equal([]);
    });

    it('never shows another account\'s items', async () => {
      const other = buildApiTenant(app);
      queue({ date: '2026-03-01' }, other.business);
      const mine = queue({ date: '2026-03-02' });
      expect(ids((await get()).highConfidence)).to.deep.equal([mine.itemId]);
    });

    it('serves only its own business to a key limited to one business, without entityId', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [typeof multi.business, typeof multi.business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [b.id] });
      queue({ date: '2026-03-01' }, a);
      const inB = queue({ date: '2026-03-02' }, b);
      const body = await get({}, limited.key);
      expect(ids([...body.highConfidence, ...body.needsReview])).to.deep.equal([inB.itemId]);
    });

    it('refuses a key limited to several businesses that names none (422 validation_failed "entityId:")', async () => {
      const multi = buildApiTenant(app, { businesses: 3, plan: 'large' });
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [multi.businesses[0]!.id, multi.businesses[1]!.id] });
      queue({}, multi.businesses[0]!);
      expectInvalid(await app.get('/api/v1/review-queue', limited.key), 'entityId');
    });

    it('serves a key limited to several businesses the one it names', async () => {
      const multi = buildApiTenant(app, { businesses: 3, plan: 'large' });
      const [a, b] = multi.businesses as [typeof multi.business, typeof multi.business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [a.id, b.id] });
      queue({ date: '2026-03-01' }, a);
      const inB = queue({ date: '2026-03-02' }, b);
      expect(ids((await get({ entityId: b.id }, limited.key)).highConfidence)).to.deep.equal([inB.itemId]);
    });

    it('refuses an entityId the key was not given (403 entity_not_allowed)', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [typeof multi.business, typeof multi.business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [a.id] });
      queue({}, b);
      expectError(await app.get(withQuery('/api/v1/review-queue', { entityId: b.id }), limited.key), 403, 'entity_not_allowed');
    });

    it('refuses another account\'s business (404 not_found)', async () => {
      const other = buildApiTenant(app);
      queue({}, other.business);
      expectError(await app.get(withQuery('/api/v1/review-queue', { entityId: other.business.id }), tenant.key), 404, 'not_found');
    });

    it('refuses an unknown entityId (404 not_found)', async () => {
      expectError(await app.get(withQuery('/api/v1/review-queue', { entityId: NO_SUCH_ID }), tenant.key), 404, 'not_found');
    });

    it('refuses an entityId that is not a uuid (422 "entityId:")', async () => {
      expectInvalid(await app.get('/api/v1/review-queue?entityId=main', tenant.key), 'entityId');
    });
  });

  describe('access', () => {
    it('serves a Read only key (review:read)', async () => {
      const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
      const item = queue();
      expect(ids((await get({}, readOnly.key)).highConfidence)).to.deep.equal([item.itemId]);
    });

    it('refuses a request without a key (401 invalid_key)', async () => {
      expectError(await app.get('/api/v1/review-queue', null), 401, 'invalid_key');
    });
  });
});

describe('GET /review-queue with DAYBOOK_REVIEW_CONFIDENCE set to 0.8', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  before(async () => {
    app = await startTestApp(START, { config: { reviewConfidence: 0.8 } });
    tenant = buildApiTenant(app, { plan: 'large' });
  });
  after(async () => {
    await app?.close();
  });

  it('splits at the configured threshold: 0.8 and 0.85 are high confidence, 0.79 needs review', async () => {
    const at80 = queueReviewItem(app, tenant.business, { date: '2026-03-01', amountCents: 100n, confidence: 0.8 });
    const at85 = queueReviewItem(app, tenant.business, { date: '2026-03-02', amountCents: 100n, confidence: 0.85 });
    const at79 = queueReviewItem(app, tenant.business, { date: '2026-03-03', amountCents: 100n, confidence: 0.79 });
    const noProposal = queueReviewItem(app, tenant.business, { date: '2026-03-04', amountCents: 100n, confidence: 0.99, proposedAccount: null });
    const body = expectQueue(await app.get('/api/v1/review-queue', tenant.key));
    expect(ids(body.highConfidence)).to.deep.equal([at80.itemId, at85.itemId]);
    expect(ids(body.needsReview)).to.deep.equal([at79.itemId, noProposal.itemId]);
  });
});

interface EntryRow {
  id: string;
  business_id: string;
  entry_date: string;
  source_type: string;
  source_id: string;
  memo: string | null;
}

interface LineRow {
  line_no: bigint;
  ledger_account_id: string;
  entry_date: string;
  direction: string;
  amount_cents: bigint;
  basis: string;
}

interface TransactionState {
  status: string;
  ledger_account_id: string | null;
  journal_entry_id: string | null;
  txn_date: string;
  amount_cents: bigint;
  source: string;
}

/** What an accept may leave behind in one account's books. */
interface Written {
  entries: number;
  lines: number;
  audit: number;
  accepted: number;
  settledTransactions: number;
}

describe('POST /review-queue/{id}/accept', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { plan: 'large' } });

  const accountId = (name: string, businessId = tenant.business.id): string => accountIdByName(app.db, businessId, name);
  const bankId = (businessId = tenant.business.id): string => accountIdByRole(app.db, businessId, 'bank');
  const anyAccountId = (name: string, businessId = tenant.business.id): string => anyAccountIdByName(app.db, businessId, name);

  const queue = (input: Partial<QueuedItemInput> = {}, business = tenant.business) =>
    queueReviewItem(app, business, { date: '2026-03-10', amountCents: 4599n, description: 'ACH DEBIT STAPLES', ...input });
  const accept = (itemId: string, body?: unknown, key = tenant.key, headers: Record<string, string> = {}): Promise<TestResponse> =>
    app.post(`/api/v1/review-queue/${itemId}/accept`, key, body, headers);

  const expectAccepted = (res: TestResponse): void => {
    expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(200);
    expect(res.body).to.deep.equal({ ok: true });
    expect(res.headers['content-type']).to.match(/^application\/json/);
  };

  const written = (t: ApiTenant = tenant): Written => {
    const inBusinesses = 'business_id IN (SELECT id FROM businesses WHERE tenant_id = ?)';
    return {
      entries: countRows(app.db, `SELECT count(*) FROM journal_entries WHERE ${inBusinesses}`, t.id),
      lines: countRows(app.db, `SELECT count(*) FROM journal_lines WHERE ${inBusinesses}`, t.id),
      audit: countRows(app.db, 'SELECT count(*) FROM audit_log WHERE tenant_id = ?', t.id),
      accepted: countRows(app.db, `SELECT count(*) FROM review_queue_items WHERE accepted_at IS NOT NULL AND ${inBusinesses}`, t.id),
      settledTransactions: countRows(app.db, `SELECT count(*) FROM transactions WHERE status <> 'pending' AND ${inBusinesses}`, t.id),
    };
  };
  const entriesOf = (itemId: string): EntryRow[] =>
    app.db
      .prepare("SELECT id, business_id, entry_date, source_type, source_id, memo FROM journal_entries WHERE source_type = 'review_accept' AND source_id = ?")
      .all(itemId) as EntryRow[];
  const entryOf = (itemId: string): EntryRow => {
    const rows = entriesOf(itemId);
    expect(rows, `journal entries of review item ${itemId}`).to.have.length(1);
    return rows[0]!;
  };
  const linesOf = (entryId: string): LineRow[] =>
    app.db
      .prepare('SELECT line_no, ledger_account_id, entry_date, direction, amount_cents, basis FROM journal_lines WHERE entry_id = ? ORDER BY line_no')
      .all(entryId) as LineRow[];
  const transactionState = (id: string): TransactionState =>
    app.db.prepare('SELECT status, ledger_account_id, journal_entry_id, txn_date, amount_cents, source FROM transactions WHERE id = ?').get(id) as TransactionState;

  /** The item still waits: not accepted, its transaction pending and unposted, and GET /review-queue lists it. */
  const expectStillWaiting = async (item: { itemId: string; transactionId: string }, key = tenant.key, entityId?: string): Promise<void> => {
    expect(acceptedAt(app, item.itemId), 'accepted_at').to.equal(null);
    expect(transactionState(item.transactionId)).to.deep.include({ status: 'pending', ledger_account_id: null, journal_entry_id: null });
    expect(entriesOf(item.itemId)).to.deep.equal([]);
    const body = expectQueue(await app.get(withQuery('/api/v1/review-queue', { entityId }), key));
    expect(ids([...body.highConfidence, ...body.needsReview])).to.include(item.itemId);
  };

  /** Debits equal credits over the business's journal, in the accrual and the cash view (the trial balance). */
  const expectBalanced = (businessId = tenant.business.id): void => {
    for (const view of ['accrual', 'cash'] as const) {
      const totals = ledgerTotals(app.db, businessId, view);
      expect(totals.debitCents, `${view} trial balance of business ${businessId}`).to.equal(totals.creditCents);
    }
  };

  describe('success', () => {
    it('answers 200 {ok: true}, exactly', async () => {
      const item = queue();
      const res = await accept(item.itemId, {});
      expectAccepted(res);
      expect(res.headers['idempotent-replayed']).to.equal(undefined);
    });

    it('with no accountId books the proposal: one entry (source review_accept) on the transaction\'s date debiting the account and crediting Business Checking by the amount', async () => {
      const item = queue({ date: '2026-03-02', amountCents: 4599n, proposedAccount: 'Software and Subscriptions' });
      expectAccepted(await accept(item.itemId, {}));
      const entry = entryOf(item.itemId);
      expect(entry).to.deep.include({ business_id: tenant.business.id, entry_date: '2026-03-02', source_type: 'review_accept', source_id: item.itemId, memo: 'ACH DEBIT STAPLES' });
      expect(linesOf(entry.id)).to.deep.equal([
        { line_no: 1n, ledger_account_id: accountId('Software and Subscriptions'), entry_date: '2026-03-02', direction: 'debit', amount_cents: 4599n, basis: 'both' },
        { line_no: 2n, ledger_account_id: bankId(), entry_date: '2026-03-02', direction: 'credit', amount_cents: 4599n, basis: 'both' },
      ]);
      expect(accountIdByName(app.db, tenant.business.id, 'Business Checking')).to.equal(bankId());
    });

    it('accepts a POST with no body at all (accountId is optional)', async () => {
      const item = queue();
      expectAccepted(await app.request('POST', `/api/v1/review-queue/${item.itemId}/accept`, { key: tenant.key }));
      expect(transactionState(item.transactionId).status).to.equal('accepted');
    });

    it('makes the transaction accepted with its ledger account and journal entry set', async () => {
      const item = queue({ proposedAccount: 'Travel' });
      expectAccepted(await accept(item.itemId, {}));
      expect(transactionState(item.transactionId)).to.deep.equal({
        status: 'accepted',
        ledger_account_id: accountId('Travel'),
        journal_entry_id: entryOf(item.itemId).id,
        txn_date: '2026-03-10',
        amount_cents: 4599n,
        source: 'csv',
      });
    });

    it('takes the item off the queue: accepted_at is the time of the accept and GET /review-queue no longer lists it', async () => {
      const item = queue();
      const other = queue({ date: '2026-03-11' });
      app.clock.set('2026-03-16T09:30:00.000Z');
      expectAccepted(await accept(item.itemId, {}));
      expect(acceptedAt(app, item.itemId)).to.equal('2026-03-16T09:30:00.000Z');
      expect(acceptedAt(app, other.itemId)).to.equal(null);
      const body = expectQueue(await app.get('/api/v1/review-queue', tenant.key));
      expect(ids([...body.highConfidence, ...body.needsReview])).to.deep.equal([other.itemId]);
    });

    it('shows the booking in GET /transactions/{id}: status accepted, the account, and the two lines', async () => {
      const vendorId = addVendor(app, tenant.id, 'Adobe');
      const item = queue({ amountCents: 5999n, vendorId, proposedAccount: 'Software and Subscriptions', rationale: 'Adobe is software.' });
      const before = await app.get(`/api/v1/transactions/${item.transactionId}`, tenant.key);
      expect(before.status, before.text).to.equal(200);
      expect(before.body).to.deep.include({ status: 'pending', account: null, lines: [] });

      expectAccepted(await accept(item.itemId, {}));
      const res = await app.get(`/api/v1/transactions/${item.transactionId}`, tenant.key);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({
        id: item.transactionId,
        date: '2026-03-10',
        amount: usdMoney('5999', '$59.99'),
        vendor: 'Adobe',
        account: 'Software and Subscriptions',
        status: 'accepted',
        source: 'csv',
        description: 'ACH DEBIT STAPLES',
        rationale: 'Adobe is software.',
        lines: [
          { account: 'Software and Subscriptions', debit: usdMoney('5999', '$59.99'), credit: null },
          { account: 'Business Checking', debit: null, credit: usdMoney('5999', '$59.99') },
        ],
      });
    });

    it('shows both lines for a cash-basis business too', async () => {
      const cash = buildBusiness(app.db, app.clock, { tenantId: tenant.id, basis: 'cash' });
      const item = queue({ amountCents: 1500n, proposedAccount: 'Meals' }, cash);
      expectAccepted(await accept(item.itemId, {}));
      const res = await app.get(`/api/v1/transactions/${item.transactionId}`, tenant.key);
      expect(res.body.lines).to.deep.equal([
        { account: 'Meals', debit: usdMoney('1500', '$15.00'), credit: null },
        { account: 'Business Checking', debit: null, credit: usdMoney('1500', '$15.00') },
      ]);
      expectBalanced(cash.id);
    });

    it('with an accountId different from the proposal books that account and marks the transaction edited', async () => {
      const item = queue({ proposedAccount: 'Office Supplies' });
      expectAccepted(await accept(item.itemId, { accountId: accountId('Meals') }));
      const entry = entryOf(item.itemId);
      expect(linesOf(entry.id).map((l) => [l.ledger_account_id, l.direction, l.amount_cents])).to.deep.equal([
        [accountId('Meals'), 'debit', 4599n],
        [bankId(), 'credit', 4599n],
      ]);
      expect(transactionState(item.transactionId)).to.deep.include({ status: 'edited', ledger_account_id: accountId('Meals'), journal_entry_id: entry.id });
      const res = await app.get(`/api/v1/transactions/${item.transactionId}`, tenant.key);
      expect(res.body).to.deep.include({ status: 'edited', account: 'Meals' });
    });

    it('with an accountId equal to the proposal marks the transaction accepted', async () => {
      const item = queue({ proposedAccount: 'Rent' });
      expectAccepted(await accept(item.itemId, { accountId: accountId('Rent') }));
      expect(transactionState(item.transactionId)).to.deep.include({ status: 'accepted', ledger_account_id: accountId('Rent') });
    });

    it('accepts an upper-case accountId equal to the proposal as the proposal (accepted, not edited)', async () => {
      const item = queue({ proposedAccount: 'Rent' });
      expectAccepted(await accept(item.itemId, { accountId: accountId('Rent').toUpperCase() }));
      expect(transactionState(item.transactionId)).to.deep.include({ status: 'accepted', ledger_account_id: accountId('Rent') });
    });

    it('books an item without a proposal to the accountId sent', async () => {
      const item = queue({ proposedAccount: null, confidence: null });
      expectAccepted(await accept(item.itemId, { accountId: accountId('Utilities') }));
      expect(linesOf(entryOf(item.itemId).id).map((l) => [l.ledger_account_id, l.direction])).to.deep.equal([
        [accountId('Utilities'), 'debit'],
        [bankId(), 'credit'],
      ]);
      expect(transactionState(item.transactionId).ledger_account_id).to.equal(accountId('Utilities'));
    });

    it('accepts a needsReview item as proposed (the threshold only sorts the lists)', async () => {
      const item = queue({ confidence: 0.3, proposedAccount: 'Insurance' });
      expectAccepted(await accept(item.itemId, {}));
      expect(transactionState(item.transactionId)).to.deep.include({ status: 'accepted', ledger_account_id: accountId('Insurance') });
    });

    it('accepts Uncategorized Expense and an asset account such as Equipment (the rules of POST /expenses)', async () => {
      const first = queue();
      const second = queue();
      expectAccepted(await accept(first.itemId, { accountId: accountId('Uncategorized Expense') }));
      expectAccepted(await accept(second.itemId, { accountId: accountId('Equipment') }));
      expect(transactionState(first.transactionId).ledger_account_id).to.equal(accountId('Uncategorized Expense'));
      expect(transactionState(second.transactionId).ledger_account_id).to.equal(accountId('Equipment'));
    });

    it('records review.accept in the audit log under the key\'s name (authentication rule 9)', async () => {
      const item = queue({ proposedAccount: 'Office Supplies' });
      expectAccepted(await accept(item.itemId, { accountId: accountId('Meals') }));
      const rows = app.db
        .prepare('SELECT tenant_id, business_id, actor_type, actor_id, actor_name, action, subject_type, detail_json FROM audit_log WHERE subject_id = ?')
        .all(item.itemId) as Array<Record<string, unknown> & { detail_json: string }>;
      expect(rows.map(({ detail_json, ...row }) => ({ ...row, detail: JSON.parse(detail_json) }))).to.deep.equal([
        {
          tenant_id: tenant.id,
          business_id: tenant.business.id,
          actor_type: 'api_key',
          actor_id: tenant.keys[0]!.id,
          actor_name: tenant.keys[0]!.name,
          action: 'review.accept',
          subject_type: 'review_item',
          detail: { transactionId: item.transactionId, accountId: accountId('Meals'), proposedAccountId: accountId('Office Supplies'), status: 'edited' },
        },
      ]);
      const entryActor = (app.db.prepare('SELECT actor FROM journal_entries WHERE id = ?').get(entryOf(item.itemId).id) as { actor: string }).actor;
      expect(entryActor, 'the entry names the key that posted it').to.equal(`api_key:${tenant.keys[0]!.id}`);
    });

    it('writes exactly one entry, two lines and one audit row, and settles exactly one item and one transaction', async () => {
      const item = queue();
      queue();
      const before = written();
      expectAccepted(await accept(item.itemId, {}));
      expect(written()).to.deep.equal({
        entries: before.entries + 1,
        lines: before.lines + 2,
        audit: before.audit + 1,
        accepted: before.accepted + 1,
        settledTransactions: before.settledTransactions + 1,
      });
    });

    it('keeps the trial balance balanced, the bank credited by every accepted amount', async () => {
      const amounts = [1n, 999n, 250000n, 31415n];
      const items = amounts.map((amountCents, n) => queue({ amountCents, date: `2026-03-0${n + 1}` }));
      for (const item of items) expectAccepted(await accept(item.itemId, {}));
      expectBalanced();
      const bank = app.db
        .prepare("SELECT sum(amount_cents) AS credit FROM journal_lines WHERE ledger_account_id = ? AND direction = 'credit'")
        .get(bankId()) as { credit: bigint };
      expect(bank.credit).to.equal(1n + 999n + 250000n + 31415n);
    });

    it('accepts an item of a key\'s granted business (key limited to that business)', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const granted = multi.businesses[1]!;
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [granted.id] });
      const item = queue({}, granted);
      expectAccepted(await accept(item.itemId, {}, limited.key));
      expect(entryOf(item.itemId).business_id).to.equal(granted.id);
      expectBalanced(granted.id);
    });
  });

  describe('accountId', () => {
    it('refuses an item with no proposal and no accountId (422 validation_failed "accountId:") and writes nothing', async () => {
      const item = queue({ proposedAccount: null, confidence: null });
      const before = written();
      expectInvalid(await accept(item.itemId, {}), 'accountId');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    it('refuses the bank account the expense is paid from (422 "accountId:") and writes nothing', async () => {
      const item = queue();
      const before = written();
      expectInvalid(await accept(item.itemId, { accountId: bankId() }), 'accountId');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    for (const name of ['Accounts Receivable', 'Accounts Payable', 'Sales Tax Payable', 'Sales', "Owner's Equity", 'Retained Earnings', 'Realized FX Gain or Loss']) {
      it(`refuses ${name}, an account Daybook keeps itself (422 "accountId:") and writes nothing`, async () => {
        const item = queue();
        const before = written();
        expectInvalid(await accept(item.itemId, { accountId: accountId(name) }), 'accountId');
        expect(written()).to.deep.equal(before);
        expect(acceptedAt(app, item.itemId)).to.equal(null);
      });
    }

    it('refuses a heading account such as Operating Expenses (422 "accountId:")', async () => {
      const item = queue();
      const before = written();
      expectInvalid(await accept(item.itemId, { accountId: anyAccountId('Operating Expenses') }), 'accountId');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    it('refuses an archived account (422 "accountId:")', async () => {
      const item = queue();
      const travel = accountId('Travel');
      app.db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(travel);
      const before = written();
      expectInvalid(await accept(item.itemId, { accountId: travel }), 'accountId');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    it('refuses to book a proposal that has since been archived, when no accountId is sent (422 "accountId:")', async () => {
      const item = queue({ proposedAccount: 'Advertising and Marketing' });
      app.db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(item.proposedAccountId);
      const before = written();
      const res = await accept(item.itemId, {});
      expectInvalid(res, 'accountId');
      expect(res.body.error.message).to.contain('can no longer take postings');
      expect(written()).to.deep.equal(before);
    });

    it('moves an item whose proposed account was archived to needsReview, without the proposal, and books it elsewhere as edited', async () => {
      const item = queue({ proposedAccount: 'Advertising and Marketing', confidence: 0.99 });
      const listQueue = async (): Promise<QueueBody> => expectQueue(await app.get('/api/v1/review-queue', tenant.key));
      expect(ids((await listQueue()).highConfidence)).to.include(item.itemId);
      app.db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(item.proposedAccountId);
      const listed = await listQueue();
      expect(ids(listed.highConfidence)).to.not.include(item.itemId);
      const shown = listed.needsReview.find((entry) => entry.id === item.itemId);
      expect(shown).to.include({ proposedAccountId: null, proposedAccount: null, confidence: 0.99 });
      const res = await accept(item.itemId, { accountId: accountId('Travel') });
      expect(res.status).to.equal(200);
      expect(app.db.prepare('SELECT status FROM transactions WHERE id = ?').get(item.transactionId)).to.deep.equal({ status: 'edited' });
    });

    it('refuses an account of another business of the same account (404 not_found "accountId:")', async () => {
      const second = buildBusiness(app.db, app.clock, { tenantId: tenant.id });
      const item = queue();
      const before = written();
      expectError(await accept(item.itemId, { accountId: accountId('Office Supplies', second.id) }), 404, 'not_found', 'accountId:');
      expect(written()).to.deep.equal(before);
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('refuses an account of another account\'s business (404 not_found "accountId:")', async () => {
      const other = buildApiTenant(app);
      const item = queue();
      const before = [written(), written(other)];
      expectError(await accept(item.itemId, { accountId: accountId('Office Supplies', other.business.id) }), 404, 'not_found', 'accountId:');
      expect([written(), written(other)]).to.deep.equal(before);
    });

    it('refuses an unknown accountId (404 not_found "accountId:")', async () => {
      const item = queue();
      const before = written();
      expectError(await accept(item.itemId, { accountId: NO_SUCH_ID }), 404, 'not_found', 'accountId:');
      expect(written()).to.deep.equal(before);
    });

    it('refuses an accountId that is not a uuid (422 "accountId:")', async () => {
      const item = queue();
      expectInvalid(await accept(item.itemId, { accountId: '6160' }), 'accountId');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('refuses a null accountId (422 "accountId:")', async () => {
      const item = queue();
      expectInvalid(await accept(item.itemId, { accountId: null }), 'accountId');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });
  });

  describe('conflict: an item is accepted once', () => {
    it('refuses a second accept (409 conflict) and writes nothing more', async () => {
      const item = queue();
      expectAccepted(await accept(item.itemId, {}));
      const settledAt = acceptedAt(app, item.itemId);
      const before = written();
      app.clock.advanceMs(60_000);
      expectError(await accept(item.itemId, {}), 409, 'conflict');
      expect(written()).to.deep.equal(before);
      expect(entriesOf(item.itemId)).to.have.length(1);
      expect(acceptedAt(app, item.itemId)).to.equal(settledAt);
    });

    it('refuses a second accept naming another account (409 conflict); the first booking stands', async () => {
      const item = queue({ proposedAccount: 'Office Supplies' });
      expectAccepted(await accept(item.itemId, {}));
      const before = written();
      expectError(await accept(item.itemId, { accountId: accountId('Meals') }), 409, 'conflict');
      expect(written()).to.deep.equal(before);
      expect(transactionState(item.transactionId)).to.deep.include({ status: 'accepted', ledger_account_id: accountId('Office Supplies') });
    });
  });

  describe('idempotency', () => {
    it('replays the 200 for the same Idempotency-Key, with idempotent-replayed: true, booking once', async () => {
      const item = queue();
      const before = written();
      const first = await accept(item.itemId, {}, tenant.key, { 'idempotency-key': 'accept-1' });
      expectAccepted(first);
      const second = await accept(item.itemId, {}, tenant.key, { 'idempotency-key': 'accept-1' });
      expectAccepted(second);
      expect(second.text).to.equal(first.text);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(written()).to.deep.equal({
        entries: before.entries + 1,
        lines: before.lines + 2,
        audit: before.audit + 1,
        accepted: before.accepted + 1,
        settledTransactions: before.settledTransactions + 1,
      });
      expectBalanced();
    });

    it('refuses the same Idempotency-Key with another accountId (409 conflict)', async () => {
      const item = queue();
      expectAccepted(await accept(item.itemId, {}, tenant.key, { 'idempotency-key': 'accept-2' }));
      const before = written();
      const clash = await accept(item.itemId, { accountId: accountId('Meals') }, tenant.key, { 'idempotency-key': 'accept-2' });
      expectError(clash, 409, 'conflict');
      expect(clash.headers['idempotent-replayed']).to.equal(undefined);
      expect(written()).to.deep.equal(before);
    });

    it('frees the key after a 422: the corrected request with the same key runs (200, not a replay)', async () => {
      const item = queue({ proposedAccount: null });
      expectInvalid(await accept(item.itemId, {}, tenant.key, { 'idempotency-key': 'accept-3' }), 'accountId');
      const corrected = await accept(item.itemId, { accountId: accountId('Rent') }, tenant.key, { 'idempotency-key': 'accept-3' });
      expectAccepted(corrected);
      expect(corrected.headers['idempotent-replayed']).to.equal(undefined);
      expect(transactionState(item.transactionId).ledger_account_id).to.equal(accountId('Rent'));
    });
    it('frees the key after a 402: once billing is active the same key accepts (200, not a replay)', async () => {
      const item = queue();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      expectError(await accept(item.itemId, {}, tenant.key, { 'idempotency-key': 'accept-4' }), 402, 'read_only_billing_state');
      setTenant(app, tenant.id, { billingState: 'active' });
      const retried = await accept(item.itemId, {}, tenant.key, { 'idempotency-key': 'accept-4' });
      expectAccepted(retried);
      expect(retried.headers['idempotent-replayed']).to.equal(undefined);
      expect(entriesOf(item.itemId)).to.have.length(1);
    });
  });

  describe('period_locked', () => {
    it('refuses an item whose transaction date falls in a closed period (409 period_locked); the item stays', async () => {
      const item = queue({ date: '2026-02-27' });
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
      const before = written();
      expectError(await accept(item.itemId, {}), 409, 'period_locked');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    it('refuses an item dated on the lock day itself (409 period_locked), even with an accountId', async () => {
      const item = queue({ date: '2026-02-28' });
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
      expectError(await accept(item.itemId, { accountId: accountId('Meals') }), 409, 'period_locked');
      await expectStillWaiting(item);
    });

    it('accepts an item dated the day after the lock (200), posting on its own date', async () => {
      const item = queue({ date: '2026-03-01' });
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
      expectAccepted(await accept(item.itemId, {}));
      expect(entryOf(item.itemId).entry_date).to.equal('2026-03-01');
    });
  });

  describe('read_only_billing_state', () => {
    it('refuses while billing is past due (402); the item stays; once billing is active it is accepted (200)', async () => {
      const item = queue();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const before = written();
      expectError(await accept(item.itemId, {}), 402, 'read_only_billing_state');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);

      setTenant(app, tenant.id, { billingState: 'active' });
      expectAccepted(await accept(item.itemId, {}));
      expect(transactionState(item.transactionId).status).to.equal('accepted');
    });
  });

  describe('the order of refusals (as for POST /expenses)', () => {
    it('answers 402 before asking for an account while billing is past due (an item with no proposal)', async () => {
      const item = queue({ proposedAccount: null, confidence: null });
      setTenant(app, tenant.id, { billingState: 'past_due' });
      expectError(await accept(item.itemId, {}), 402, 'read_only_billing_state');
    });

    it('answers 409 period_locked before judging the account for a date in a closed period', async () => {
      const item = queue({ date: '2026-02-10' });
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
      const bank = accountIdByRole(app.db, tenant.business.id, 'bank');
      expectError(await accept(item.itemId, { accountId: bank }), 409, 'period_locked');
    });
  });

  describe('not_found: an item the key cannot use is answered like one that does not exist', () => {
    it('refuses an unknown id (404 not_found)', async () => {
      expectError(await accept(NO_SUCH_ID, {}), 404, 'not_found');
    });

    it('answers an item of a business the key may not use exactly like an unknown id (404, same body but the request id); the item stays', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [granted, other] = multi.businesses as [typeof multi.business, typeof multi.business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [granted.id] });
      const item = queue({}, other);
      const before = written(multi);
      const res = await accept(item.itemId, {}, limited.key);
      expectError(res, 404, 'not_found');
      const unknown = await accept(NO_SUCH_ID, {}, limited.key);
      expectError(unknown, 404, 'not_found');
      expect(withoutRequestId(res)).to.equal(withoutRequestId(unknown));
      expect(written(multi)).to.deep.equal(before);
      await expectStillWaiting(item, multi.key, other.id);
    });

    it('answers another account\'s item exactly like an unknown id (404); the item stays', async () => {
      const other = buildApiTenant(app);
      const item = queue({}, other.business);
      const before = [written(), written(other)];
      const res = await accept(item.itemId, {});
      expectError(res, 404, 'not_found');
      const unknown = await accept(NO_SUCH_ID, {});
      expect(withoutRequestId(res)).to.equal(withoutRequestId(unknown));
      expect([written(), written(other)]).to.deep.equal(before);
      await expectStillWaiting(item, other.key);
    });

    it('answers 404 for an unreachable item before looking at the body\'s accountId', async () => {
      const other = buildApiTenant(app);
      const item = queue({}, other.business);
      const res = await accept(item.itemId, { accountId: accountId('Meals', other.business.id) });
      const unknown = await accept(NO_SUCH_ID, { accountId: accountId('Meals', other.business.id) });
      expectError(res, 404, 'not_found');
      expect(withoutRequestId(res)).to.equal(withoutRequestId(unknown));
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('answers 404 for an unreachable item even while billing is past due (nothing to tell apart)', async () => {
      const other = buildApiTenant(app);
      const item = queue({}, other.business);
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const res = await accept(item.itemId, {});
      const unknown = await accept(NO_SUCH_ID, {});
      expectError(res, 404, 'not_found');
      expect(withoutRequestId(res)).to.equal(withoutRequestId(unknown));
    });

    it('refuses a path id that is not a uuid (422 validation_failed)', async () => {
      expectError(await accept('not-a-uuid', {}), 422, 'validation_failed');
    });
  });

  describe('body and access', () => {
    it('refuses an unknown field, naming it (422 "category:"), and writes nothing', async () => {
      const item = queue();
      const before = written();
      expectInvalid(await accept(item.itemId, { category: 'Office' }), 'category');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    it('refuses an unknown field even beside a valid accountId (422 "note:")', async () => {
      const item = queue();
      expectInvalid(await accept(item.itemId, { accountId: accountId('Meals'), note: 'x' }), 'note');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('refuses the path id repeated in the body (422 validation_failed)', async () => {
      const item = queue();
      expectError(await accept(item.itemId, { id: item.itemId }), 422, 'validation_failed');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('refuses the path id repeated in the query (422 validation_failed)', async () => {
      const item = queue();
      expectError(await app.post(`/api/v1/review-queue/${item.itemId}/accept?id=${item.itemId}`, tenant.key, {}), 422, 'validation_failed');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('refuses a body that is not a JSON object (422 "body:")', async () => {
      const item = queue();
      expectInvalid(await accept(item.itemId, [{ accountId: accountId('Meals') }]), 'body');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('refuses a Read only key (403 insufficient_scope) and writes nothing', async () => {
      const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
      const item = queue();
      const before = written();
      expectError(await accept(item.itemId, {}, readOnly.key), 403, 'insufficient_scope');
      expect(written()).to.deep.equal(before);
      await expectStillWaiting(item);
    });

    it('refuses a request without a key (401 invalid_key)', async () => {
      const item = queue();
      expectError(await app.post(`/api/v1/review-queue/${item.itemId}/accept`, null, {}), 401, 'invalid_key');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });

    it('answers GET on the accept path as the JSON 404 (only POST is served there)', async () => {
      const item = queue();
      expectError(await app.get(`/api/v1/review-queue/${item.itemId}/accept`, tenant.key), 404, 'not_found');
      expect(acceptedAt(app, item.itemId)).to.equal(null);
    });
  });
});
