import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { Business } from '../../src/books/businesses.js';
import { setRate } from '../../src/books/fx.js';
import { purgeExpiredIdempotency } from '../../src/store/idempotency.js';
import { markOverdueInvoices } from '../../src/books/invoice-posting.js';
import { revokeKey } from '../../src/books/keys.js';
import { enqueueEmail, markEmailFailed, MAX_ATTEMPTS } from '../../src/store/outbox.js';
import { inTransaction } from '../../src/db/connection.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { buildApiTenant, expectError, expectInvalid, setTenant, type ApiTenant } from '../support/api.js';
import { buildKey, TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer, invoiceBody, payInvoice, sendInvoice } from '../support/invoicing.js';
import { withQuery } from '../support/register.js';
import { queueReviewItem } from '../support/review.js';

const START = '2026-03-15T12:00:00.000Z';
const SITE_URL = 'https://books.example.test';
const NO_SUCH_ID = '0b9c3c52-6f1e-4c1a-9d59-4c1f0e7d2a11';
const SEVERITIES = ['blocking', 'urgent', 'attention', 'informational'];
const BILLING_SENTENCE = 'Billing is past due, so the books are read only: expenses, invoice sends, payments and accepts are refused.';

interface Evidence {
  label: string;
  url?: string;
}

interface Signal {
  id: string;
  severity: string;
  sentence: string;
  action: string;
  evidence: Evidence[];
}

interface Feed {
  headline: string;
  signals: Signal[];
}

interface StoredSignal {
  id: string;
  kind: string;
  subject_id: string | null;
  severity: string;
  sentence: string;
  first_seen_at: string;
  last_seen_at: string;
  closed_at: string | null;
}

/** A 200 Today answer: exactly {headline, signals}, each signal exactly the spec's fields. */
function expectFeed(res: TestResponse): Feed {
  expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(200);
  expect(Object.keys(res.body).sort()).to.deep.equal(['headline', 'signals']);
  expect(res.body.headline).to.be.a('string').and.not.equal('');
  for (const signal of res.body.signals as Signal[]) {
    expect(Object.keys(signal).sort()).to.deep.equal(['action', 'evidence', 'id', 'sentence', 'severity']);
    expect(signal.id).to.be.a('string').and.not.equal('');
    expect(SEVERITIES).to.include(signal.severity);
    expect(signal.sentence).to.be.a('string').and.not.equal('');
    expect(signal.action).to.be.a('string').and.not.equal('');
    for (const item of signal.evidence) {
      expect(['label', 'label,url']).to.include(Object.keys(item).sort().join(','));
      expect(item.label).to.be.a('string').and.not.equal('');
      if ('url' in item) expect(item.url).to.be.a('string').and.match(/^https?:\/\//);
    }
  }
  return res.body as Feed;
}

describe('GET /today', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  before(async () => {
    app = await startTestApp(START, { config: { siteUrl: SITE_URL } });
  });
  after(async () => {
    await app?.close();
  });
  // A fresh account per test at the same instant: no billing state, key or signal leaks between tests.
  beforeEach(() => {
    app.clock.set(START);
    tenant = buildApiTenant(app, { plan: 'large' });
  });

  const today = async (key = tenant.key, entityId?: string): Promise<Feed> => expectFeed(await app.get(withQuery('/api/v1/today', { entityId }), key));
  const stored = (businessId = tenant.business.id): StoredSignal[] =>
    app.db
      .prepare(
        'SELECT id, kind, subject_id, severity, sentence, first_seen_at, last_seen_at, closed_at FROM today_signals WHERE business_id = ? ORDER BY first_seen_at, kind, id',
      )
      .all(businessId) as StoredSignal[];
  const storedById = (id: string): StoredSignal => {
    const row = app.db.prepare('SELECT id, kind, subject_id, severity, sentence, first_seen_at, last_seen_at, closed_at FROM today_signals WHERE id = ?').get(id);
    expect(row, `stored signal ${id}`).to.not.equal(undefined);
    return row as StoredSignal;
  };
  const bySeverity = (feed: Feed, severity: string): Signal[] => feed.signals.filter((signal) => signal.severity === severity);
  const only = (feed: Feed, severity: string): Signal => {
    const found = bySeverity(feed, severity);
    expect(found, `${severity} signals in ${JSON.stringify(feed)}`).to.have.length(1);
    return found[0]!;
  };
  const invoiceUrl = (invoiceId: string): string => `${SITE_URL}/api/v1/invoices/${invoiceId}`;
  const reviewUrl = (businessId = tenant.business.id): string => `${SITE_URL}/api/v1/review-queue?entityId=${businessId}`;

  /** POST /invoices, asserting the 201 (its pay link is under the configured site URL). */
  const createInvoice = async (key: string, body: Record<string, unknown>): Promise<{ invoiceId: string; invoiceNumber: string }> => {
    const res = await app.post('/api/v1/invoices', key, body);
    expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(201);
    expect(res.body.webUrl).to.match(new RegExp(`^${SITE_URL.replace(/\./g, '\\.')}/pay/[A-Za-z0-9_-]{43}$`));
    return res.body as { invoiceId: string; invoiceNumber: string };
  };
  /** A sent USD invoice for $250.00 (2 x $125.00) to a customer named `customer`. */
  const sentInvoice = async (dates: { issueDate: string; dueDate: string }, customer = 'Harbor Catering', business = tenant.business) => {
    const customerId = addBilledCustomer(app, tenant.id, { name: customer });
    const created = await createInvoice(tenant.key, invoiceBody(app, business.id, customerId, { entityId: business.id, ...dates }));
    await sendInvoice(app, tenant.key, created.invoiceId);
    return created;
  };
  const draftInvoice = async (currency: string, issueDate: string, customer = 'Maple Leaf Catering') => {
    const customerId = addBilledCustomer(app, tenant.id, { name: customer });
    return createInvoice(tenant.key, invoiceBody(app, tenant.business.id, customerId, { currency, issueDate, dueDate: '2026-05-01' }));
  };
  const queue = (date = '2026-03-14', business: Business = tenant.business) => queueReviewItem(app, business, { date, amountCents: 1999n });

  describe('shape and headline', () => {
    it('answers {headline: "Nothing needs you today.", signals: []} when nothing is open', async () => {
      expect(await today()).to.deep.equal({ headline: 'Nothing needs you today.', signals: [] });
      expect(stored()).to.deep.equal([]);
    });

    it('makes one blocking signal\'s own sentence the headline', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const feed = await today();
      expect(feed.headline).to.equal(BILLING_SENTENCE);
      expect(feed.signals).to.have.length(1);
    });

    it('makes one attention signal standing alone the headline', async () => {
      queue();
      const feed = await today();
      expect(feed.headline).to.equal('1 bank transaction waits in the review queue.');
    });

    it('heads one blocking signal among others with its sentence and how many less weighty ones follow', async () => {
      await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' });
      queue();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const feed = await today();
      expect(feed.signals.map((s) => s.severity)).to.deep.equal(['blocking', 'urgent', 'attention']);
      expect(feed.headline).to.equal(
        'Billing is past due, so the books are read only: expenses, invoice sends, payments and accepts are refused (and 2 things of less weight).',
      );
    });

    it('counts several signals of the top severity: "2 things block the books (and 1 thing of less weight)."', async () => {
      await draftInvoice('CAD', '2026-03-05');
      queue();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const feed = await today();
      expect(feed.signals.map((s) => s.severity)).to.deep.equal(['blocking', 'blocking', 'attention']);
      expect(feed.headline).to.equal('2 things block the books (and 1 thing of less weight).');
    });

    it('counts several urgent signals with nothing else: "2 things are urgent."', async () => {
      await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' }, 'First Late Payer');
      await sentInvoice({ issueDate: '2026-01-05', dueDate: '2026-01-20' }, 'Second Late Payer');
      const feed = await today();
      expect(feed.signals.map((s) => s.severity)).to.deep.equal(['urgent', 'urgent']);
      expect(feed.headline).to.equal('2 things are urgent.');
    });

    it('orders signals blocking, urgent, attention, informational, whatever order their causes arose in', async () => {
      // Informational first (a payment today), then attention (a review item, a key), urgent (a long-overdue invoice), blocking last.
      const paid = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-04-30' }, 'Prompt Payer');
      await payInvoice(app, tenant.key, paid.invoiceId, '25000');
      queue();
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Expiring key', expiresOn: '2026-03-20' });
      await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' }, 'Late Payer');
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const feed = await today();
      expect(feed.signals.map((s) => s.severity)).to.deep.equal(['blocking', 'urgent', 'attention', 'attention', 'informational']);
      expect(feed.headline).to.equal(
        'Billing is past due, so the books are read only: expenses, invoice sends, payments and accepts are refused (and 4 things of less weight).',
      );
    });
  });

  describe('billing past due (blocking)', () => {
    it('opens while billing is past due and closes once it is active again', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'blocking',
          sentence: BILLING_SENTENCE,
          action: 'Settle the subscription; writes that post work again at once.',
          evidence: [{ label: 'Account billing state: past due' }],
        },
      ]);

      setTenant(app, tenant.id, { billingState: 'active' });
      app.clock.advanceMs(60_000);
      expect(await today()).to.deep.equal({ headline: 'Nothing needs you today.', signals: [] });
      expect(storedById(feed.signals[0]!.id)).to.deep.include({ kind: 'billing_past_due', closed_at: '2026-03-15T12:01:00.000Z' });
    });

    it('shows in every business of the account, each with its own id', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      setTenant(app, multi.id, { billingState: 'past_due' });
      const [a, b] = multi.businesses as [Business, Business];
      const inA = only(await today(multi.key, a.id), 'blocking');
      const inB = only(await today(multi.key, b.id), 'blocking');
      expect(inA.sentence).to.equal(BILLING_SENTENCE);
      expect(inB.sentence).to.equal(BILLING_SENTENCE);
      expect(inA.id).to.not.equal(inB.id);
    });
  });

  describe('draft without a rate (blocking)', () => {
    it('opens for a non-USD draft whose issue date has no stored rate, and closes once the rate is set', async () => {
      const draft = await draftInvoice('EUR', '2026-03-10');
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'blocking',
          sentence: `Draft ${draft.invoiceNumber} is in EUR, and no EUR exchange rate is stored for its issue date, 2026-03-10.`,
          action: 'Set a rate with daybook rate set --currency EUR --date 2026-03-10, or send it while the rate provider can be reached.',
          evidence: [{ label: `Invoice ${draft.invoiceNumber}`, url: invoiceUrl(draft.invoiceId) }],
        },
      ]);
      expect(feed.headline).to.equal(feed.signals[0]!.sentence);

      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-10', usdPerUnit: '1.085' });
      expect((await today()).signals).to.deep.equal([]);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal(START);
    });

    it('opens nothing for a USD draft, or for a draft with a rate stored on an earlier date', async () => {
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'GBP', date: '2026-03-01', usdPerUnit: '1.27' });
      await draftInvoice('USD', '2026-03-10', 'Dollar Customer');
      await draftInvoice('GBP', '2026-03-10', 'Pound Customer');
      expect((await today()).signals).to.deep.equal([]);
    });

    it('opens one signal per draft', async () => {
      const first = await draftInvoice('MXN', '2026-03-02', 'Peso Customer');
      const second = await draftInvoice('CAD', '2026-03-03', 'Loonie Customer');
      const feed = await today();
      expect(bySeverity(feed, 'blocking').map((s) => s.evidence[0]!.url)).to.deep.equal([invoiceUrl(first.invoiceId), invoiceUrl(second.invoiceId)]);
    });
  });

  describe('invoice overdue more than 30 days (urgent)', () => {
    it('opens for a sent invoice due more than 30 days ago, and closes once it is paid', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' });
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'urgent',
          sentence: `Harbor Catering owes $250.00 on ${invoice.invoiceNumber}, 42 days past due.`,
          action: 'Remind the customer (POST /invoices/{id}/remind), or call them.',
          evidence: [{ label: `Invoice ${invoice.invoiceNumber}, due 2026-02-01`, url: invoiceUrl(invoice.invoiceId) }],
        },
      ]);
      expect(feed.headline).to.equal(`Harbor Catering owes $250.00 on ${invoice.invoiceNumber}, 42 days past due.`);

      await payInvoice(app, tenant.key, invoice.invoiceId, '25000');
      const after = await today();
      expect(bySeverity(after, 'urgent')).to.deep.equal([]);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal(START);
    });

    it('keeps its id while partly paid, its sentence showing the new balance', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' });
      const before = only(await today(), 'urgent');
      await payInvoice(app, tenant.key, invoice.invoiceId, '10000');
      const after = only(await today(), 'urgent');
      expect(after.id).to.equal(before.id);
      expect(after.sentence).to.equal(`Harbor Catering owes $150.00 on ${invoice.invoiceNumber}, 42 days past due.`);
    });

    it('waits until the due date is more than 30 days past: due exactly 30 days ago opens nothing, 31 days ago opens it', async () => {
      await sentInvoice({ issueDate: '2026-02-01', dueDate: '2026-02-13' }, 'Thirty Days');
      expect(bySeverity(await today(), 'urgent')).to.deep.equal([]);
      const late = await sentInvoice({ issueDate: '2026-02-01', dueDate: '2026-02-12' }, 'Thirty One Days');
      const urgent = only(await today(), 'urgent');
      expect(urgent.sentence).to.equal(`Thirty One Days owes $250.00 on ${late.invoiceNumber}, 31 days past due.`);
    });

    it('opens nothing for a draft, however old its due date', async () => {
      const customerId = addBilledCustomer(app, tenant.id, { name: 'Draft Only' });
      await createInvoice(tenant.key, invoiceBody(app, tenant.business.id, customerId, { issueDate: '2026-01-01', dueDate: '2026-01-02' }));
      expect((await today()).signals).to.deep.equal([]);
    });
  });

  describe('invoice overdue 1 to 30 days (attention)', () => {
    it('opens for a sent invoice due 1 to 30 days ago, and closes once it is paid', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-02-01', dueDate: '2026-03-05' });
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'attention',
          sentence: `Harbor Catering owes $250.00 on ${invoice.invoiceNumber}, 10 days past due.`,
          action: 'Remind the customer (POST /invoices/{id}/remind).',
          evidence: [{ label: `Invoice ${invoice.invoiceNumber}, due 2026-03-05`, url: invoiceUrl(invoice.invoiceId) }],
        },
      ]);
      await payInvoice(app, tenant.key, invoice.invoiceId, '25000');
      expect((await today()).signals.map((signal) => signal.severity), 'only the payment is news').to.deep.equal(['informational']);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal(START);
    });

    it('runs from 1 day past due through 30: due yesterday and due 30 days ago open it, due today does not', async () => {
      const yesterday = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-03-14' }, 'One Day');
      const thirty = await sentInvoice({ issueDate: '2026-02-01', dueDate: '2026-02-13' }, 'Thirty Days');
      await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-03-15' }, 'Due Today');
      const sentences = bySeverity(await today(), 'attention').map((signal) => signal.sentence);
      expect(sentences).to.include(`One Day owes $250.00 on ${yesterday.invoiceNumber}, 1 day past due.`);
      expect(sentences).to.include(`Thirty Days owes $250.00 on ${thirty.invoiceNumber}, 30 days past due.`);
      expect(sentences.filter((sentence) => sentence.includes('past due'))).to.have.length(2);
    });

    it('hands over to the urgent signal on the 31st day: the attention one closes and the urgent one opens with a new id', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-02-01', dueDate: '2026-02-13' });
      const attention = only(await today(), 'attention');
      app.clock.set('2026-03-16T08:00:00.000Z');
      const feed = await today();
      expect(bySeverity(feed, 'attention')).to.deep.equal([]);
      expect(only(feed, 'urgent').sentence).to.equal(`Harbor Catering owes $250.00 on ${invoice.invoiceNumber}, 31 days past due.`);
      expect(storedById(attention.id).closed_at).to.equal('2026-03-16T08:00:00.000Z');
    });
  });

  describe('review items waiting more than 7 days (urgent) and review items waiting (attention)', () => {
    it('opens an attention signal for a waiting item, with the queue as evidence', async () => {
      queue('2026-03-14');
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'attention',
          sentence: '1 bank transaction waits in the review queue.',
          action: 'Review the proposals and accept them.',
          evidence: [{ label: '1 item, oldest from 2026-03-14', url: reviewUrl() }],
        },
      ]);
    });

    it('counts every waiting item in one signal that keeps its id', async () => {
      queue('2026-03-12');
      const first = only(await today(), 'attention');
      queue('2026-03-03');
      const second = only(await today(), 'attention');
      expect(second).to.deep.equal({
        id: first.id,
        severity: 'attention',
        sentence: '2 bank transactions wait in the review queue.',
        action: 'Review the proposals and accept them.',
        evidence: [{ label: '2 items, oldest from 2026-03-03', url: reviewUrl() }],
      });
    });

    it('opens the urgent signal once an item was queued more than 7 days ago (whole UTC days), and accepting it closes both', async () => {
      const item = queue('2026-03-14');
      const attention = only(await today(), 'attention');

      // Queued on the 15th: on the 22nd it is 7 days old, not more.
      app.clock.set('2026-03-22T23:59:59.999Z');
      let feed = await today();
      expect(bySeverity(feed, 'urgent')).to.deep.equal([]);
      expect(only(feed, 'attention').id).to.equal(attention.id);

      app.clock.set('2026-03-23T00:00:00.000Z');
      feed = await today();
      const urgent = only(feed, 'urgent');
      expect(urgent).to.deep.equal({
        id: urgent.id,
        severity: 'urgent',
        sentence: '1 bank transaction has waited in the review queue for more than 7 days.',
        action: 'Accept them (POST /review-queue/{id}/accept), choosing the account where the proposal is wrong.',
        evidence: [{ label: 'Oldest from 2026-03-14', url: reviewUrl() }],
      });
      expect(only(feed, 'attention').id).to.equal(attention.id);
      expect(feed.headline).to.equal('1 bank transaction has waited in the review queue for more than 7 days (and 1 thing of less weight).');

      const res = await app.post(`/api/v1/review-queue/${item.itemId}/accept`, tenant.key, {});
      expect(res.status, res.text).to.equal(200);
      expect(await today()).to.deep.equal({ headline: 'Nothing needs you today.', signals: [] });
      expect(storedById(urgent.id).closed_at).to.equal('2026-03-23T00:00:00.000Z');
      expect(storedById(attention.id).closed_at).to.equal('2026-03-23T00:00:00.000Z');
    });

    it('counts in the urgent signal only the items queued more than 7 days ago', async () => {
      queue('2026-03-01');
      app.clock.advanceDays(8);
      queue('2026-03-20');
      const feed = await today();
      expect(only(feed, 'urgent').sentence).to.equal('1 bank transaction has waited in the review queue for more than 7 days.');
      expect(only(feed, 'attention').sentence).to.equal('2 bank transactions wait in the review queue.');
    });

    it('closes the attention signal once the queue is empty, and a later item opens a new one with a new id', async () => {
      const item = queue();
      const first = only(await today(), 'attention');
      expect((await app.post(`/api/v1/review-queue/${item.itemId}/accept`, tenant.key, {})).status).to.equal(200);
      expect((await today()).signals).to.deep.equal([]);
      queue();
      const second = only(await today(), 'attention');
      expect(second.id).to.not.equal(first.id);
      expect(storedById(first.id).closed_at).to.not.equal(null);
      expect(storedById(second.id).closed_at).to.equal(null);
    });
  });

  describe('invoice due within 7 days (attention)', () => {
    it('opens for a sent invoice due in the next 7 days, and closes once it is paid', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-10', dueDate: '2026-03-20' });
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'attention',
          sentence: `${invoice.invoiceNumber} from Harbor Catering ($250.00) is due in 5 days, on 2026-03-20.`,
          action: 'Nothing yet; a reminder can go out if it is not paid on time.',
          evidence: [{ label: `Invoice ${invoice.invoiceNumber}, due 2026-03-20`, url: invoiceUrl(invoice.invoiceId) }],
        },
      ]);
      await payInvoice(app, tenant.key, invoice.invoiceId, '25000');
      expect(bySeverity(await today(), 'attention')).to.deep.equal([]);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal(START);
    });

    it('says "is due today" for an invoice due today', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-03-15' });
      expect(only(await today(), 'attention').sentence).to.equal(`${invoice.invoiceNumber} from Harbor Catering ($250.00) is due today.`);
    });

    it('reaches 7 days ahead and no further: due on the 22nd opens it, due on the 23rd does not', async () => {
      const inSeven = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-03-22' }, 'Seven Days');
      await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-03-23' }, 'Eight Days');
      expect(only(await today(), 'attention').sentence).to.equal(`${inSeven.invoiceNumber} from Seven Days ($250.00) is due in 7 days, on 2026-03-22.`);
    });

    it('closes once the due date passes (the overdue signal opens in its place, with a new id)', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-03-16' });
      const open = only(await today(), 'attention');
      app.clock.set('2026-03-17T08:00:00.000Z');
      const after = only(await today(), 'attention');
      expect(after.sentence).to.equal(`Harbor Catering owes $250.00 on ${invoice.invoiceNumber}, 1 day past due.`);
      expect(after.id).to.not.equal(open.id);
      expect(storedById(open.id).closed_at).to.equal('2026-03-17T08:00:00.000Z');
    });
  });

  describe('API key expiring within 14 days (attention)', () => {
    it('opens for a key that stops working within 14 days, and closes once it is revoked', async () => {
      const key = buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Zapier sync', access: 'read', expiresOn: '2026-03-25' });
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'attention',
          sentence: 'The API key "Zapier sync" stops working after 2026-03-25, in 10 days.',
          action: 'Create its replacement (daybook key create), switch the software to it, then revoke the old key.',
          evidence: [{ label: 'Key Zapier sync, expires 2026-03-25' }],
        },
      ]);
      revokeKey(app.db, app.clock, TEST_ACTOR, key.id);
      expect((await today()).signals).to.deep.equal([]);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal(START);
    });

    it('says "at the end of today" for a key expiring today', async () => {
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Last day', expiresOn: '2026-03-15' });
      expect(only(await today(), 'attention').sentence).to.equal('The API key "Last day" stops working at the end of today.');
    });

    it('reaches 14 days ahead and no further: a key expiring on the 29th opens it, one on the 30th does not', async () => {
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Fourteen days', expiresOn: '2026-03-29' });
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Fifteen days', expiresOn: '2026-03-30' });
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'No expiry' });
      expect((await today()).signals.map((s) => s.sentence)).to.deep.equal(['The API key "Fourteen days" stops working after 2026-03-29, in 14 days.']);
    });

    it('closes once the key has expired', async () => {
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Short lived', expiresOn: '2026-03-16' });
      const open = only(await today(), 'attention');
      app.clock.set('2026-03-17T00:00:00.000Z');
      expect((await today()).signals).to.deep.equal([]);
      expect(storedById(open.id).closed_at).to.equal('2026-03-17T00:00:00.000Z');
    });

    it('shows a key limited to one business only in that business\'s Today', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [Business, Business];
      buildKey(app.db, app.clock, { tenantId: multi.id, name: 'Only B', businessIds: [b.id], expiresOn: '2026-03-20' });
      expect((await today(multi.key, a.id)).signals).to.deep.equal([]);
      expect(only(await today(multi.key, b.id), 'attention').sentence).to.equal('The API key "Only B" stops working after 2026-03-20, in 5 days.');
    });

    it('does not show another account\'s expiring key', async () => {
      const other = buildApiTenant(app);
      buildKey(app.db, app.clock, { tenantId: other.id, name: 'Theirs', expiresOn: '2026-03-20' });
      expect((await today()).signals).to.deep.equal([]);
    });
  });

  describe('payments received in the last 7 days (informational)', () => {
    it('opens for a payment today, and closes once 7 days have passed', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-04-30' });
      await payInvoice(app, tenant.key, invoice.invoiceId, '25000');
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'informational',
          sentence: '1 invoice payment came in over the last 7 days, $250.00 in all.',
          action: 'Nothing to do.',
          evidence: [{ label: '1 payment since 2026-03-09' }],
        },
      ]);
      // Alone at its severity, its own sentence is the headline, as for any other.
      expect(feed.headline).to.equal('1 invoice payment came in over the last 7 days, $250.00 in all.');

      app.clock.advanceDays(6);
      expect(only(await today(), 'informational').id).to.equal(feed.signals[0]!.id);
      app.clock.advanceDays(2);
      expect((await today()).signals).to.deep.equal([]);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal('2026-03-23T12:00:00.000Z');
    });

    it('sums the payments of the window in one signal that keeps its id', async () => {
      const first = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-04-30' }, 'First Payer');
      const second = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-04-30' }, 'Second Payer');
      await payInvoice(app, tenant.key, first.invoiceId, '25000', '2026-03-12');
      const before = only(await today(), 'informational');
      await payInvoice(app, tenant.key, second.invoiceId, '10050');
      const after = only(await today(), 'informational');
      expect(after).to.deep.equal({
        id: before.id,
        severity: 'informational',
        sentence: '2 invoice payments came in over the last 7 days, $350.50 in all.',
        action: 'Nothing to do.',
        evidence: [{ label: '2 payments since 2026-03-09' }],
      });
    });

    it('leaves out payments dated 7 or more days ago', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-01', dueDate: '2026-04-30' });
      await payInvoice(app, tenant.key, invoice.invoiceId, '25000', '2026-03-08');
      expect((await today()).signals).to.deep.equal([]);
    });
  });

  describe('email that failed every retry (urgent)', () => {
    /** An invoice email written to the outbox and failed MAX_ATTEMPTS times, as the outbox job would. */
    const failedEmail = (invoiceId: string, to: string): string => {
      const id = inTransaction(app.db, () =>
        enqueueEmail(app.db, app.clock, {
          tenantId: tenant.id,
          businessId: tenant.business.id,
          kind: 'invoice',
          invoiceId,
          to,
          subject: 'Invoice from Test Business',
          text: 'Your invoice.',
          html: '<p>Your invoice.</p>',
        }),
      );
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) markEmailFailed(app.db, app.clock, id, '550 5.1.1 mailbox unavailable');
      expect((app.db.prepare('SELECT status FROM email_outbox WHERE id = ?').get(id) as { status: string }).status).to.equal('failed');
      return id;
    };

    it('opens for an email that failed every retry, and closes once the email is no longer failed', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-15', dueDate: '2026-04-30' });
      const emailId = failedEmail(invoice.invoiceId, 'ap@harbor.example');
      const feed = await today();
      expect(feed.signals).to.deep.equal([
        {
          id: feed.signals[0]!.id,
          severity: 'urgent',
          sentence: 'An email to ap@harbor.example ("Invoice from Test Business") could not be delivered: the mail server refused it, or every retry failed.',
          action: 'Check the mail server settings (DAYBOOK_SMTP_URL) and the address, then send the invoice link another way.',
          evidence: [{ label: 'Last error: 550 5.1.1 mailbox unavailable' }, { label: 'The invoice', url: invoiceUrl(invoice.invoiceId) }],
        },
      ]);

      app.db.prepare("UPDATE email_outbox SET status = 'sent', sent_at = ? WHERE id = ?").run(START, emailId);
      expect((await today()).signals).to.deep.equal([]);
      expect(storedById(feed.signals[0]!.id).closed_at).to.equal(START);
    });

    it('opens nothing for an email still being retried', async () => {
      const invoice = await sentInvoice({ issueDate: '2026-03-15', dueDate: '2026-04-30' });
      const id = inTransaction(app.db, () =>
        enqueueEmail(app.db, app.clock, {
          tenantId: tenant.id,
          businessId: tenant.business.id,
          kind: 'reminder',
          invoiceId: invoice.invoiceId,
          to: 'ap@harbor.example',
          subject: 'Reminder',
          text: 'A reminder.',
          html: '<p>A reminder.</p>',
        }),
      );
      markEmailFailed(app.db, app.clock, id, '421 try again later');
      expect((await today()).signals).to.deep.equal([]);
    });
  });

  describe('signal ids', () => {
    it('keeps a signal\'s id across calls while it stays open', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const first = await today();
      app.clock.advanceMs(3_600_000);
      const second = await today();
      app.clock.advanceDays(3);
      const third = await today();
      expect(second.signals.map((s) => s.id)).to.deep.equal(first.signals.map((s) => s.id));
      expect(third.signals.map((s) => s.id)).to.deep.equal(first.signals.map((s) => s.id));
      expect(stored()).to.have.length(1);
    });

    it('gives a signal that closed and came back a new id, and keeps the closed one closed', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const before = only(await today(), 'blocking');
      setTenant(app, tenant.id, { billingState: 'active' });
      app.clock.advanceMs(60_000);
      await today();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      app.clock.advanceMs(60_000);
      const after = only(await today(), 'blocking');
      expect(after.id).to.not.equal(before.id);
      expect(stored().map((row) => ({ id: row.id, kind: row.kind, closed_at: row.closed_at }))).to.deep.equal([
        { id: before.id, kind: 'billing_past_due', closed_at: '2026-03-15T12:01:00.000Z' },
        { id: after.id, kind: 'billing_past_due', closed_at: null },
      ]);
    });

    it('gives each invoice its own signal and id', async () => {
      await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' }, 'First Late Payer');
      await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-02' }, 'Second Late Payer');
      const urgent = bySeverity(await today(), 'urgent');
      expect(urgent).to.have.length(2);
      expect(new Set(urgent.map((s) => s.id)).size).to.equal(2);
    });
  });

  describe('what reading Today stores (read rule 4)', () => {
    it('records a new signal with first_seen_at and last_seen_at at the time of the call', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const signal = only(await today(), 'blocking');
      expect(stored()).to.deep.equal([
        {
          id: signal.id,
          kind: 'billing_past_due',
          subject_id: null,
          severity: 'blocking',
          sentence: BILLING_SENTENCE,
          first_seen_at: START,
          last_seen_at: START,
          closed_at: null,
        },
      ]);
    });

    it('refreshes last_seen_at on each call, keeping first_seen_at', async () => {
      queue();
      const signal = only(await today(), 'attention');
      app.clock.set('2026-03-15T15:30:00.000Z');
      await today();
      expect(storedById(signal.id)).to.deep.include({ first_seen_at: START, last_seen_at: '2026-03-15T15:30:00.000Z', closed_at: null });
      app.clock.set('2026-03-16T09:00:00.000Z');
      await today();
      expect(storedById(signal.id)).to.deep.include({ first_seen_at: START, last_seen_at: '2026-03-16T09:00:00.000Z', closed_at: null });
    });

    it('closes signals that no longer apply at the time of the call that notices, leaving last_seen_at at the last call that saw it', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const signal = only(await today(), 'blocking');
      app.clock.set('2026-03-15T13:00:00.000Z');
      setTenant(app, tenant.id, { billingState: 'active' });
      expect(storedById(signal.id).closed_at, 'nothing closes until Today is read').to.equal(null);
      app.clock.set('2026-03-15T14:00:00.000Z');
      await today();
      expect(storedById(signal.id)).to.deep.include({ last_seen_at: START, closed_at: '2026-03-15T14:00:00.000Z' });
    });

    it('leaves a closed signal closed on later calls (closed_at does not move)', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const signal = only(await today(), 'blocking');
      setTenant(app, tenant.id, { billingState: 'active' });
      await today();
      app.clock.advanceDays(1);
      await today();
      expect(storedById(signal.id).closed_at).to.equal(START);
    });

    it('stores nothing for a business with nothing open', async () => {
      await today();
      await today();
      expect(stored()).to.deep.equal([]);
    });

    it('touches only the business asked about', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [Business, Business];
      queue('2026-03-14', a);
      queue('2026-03-14', b);
      const inA = only(await today(multi.key, a.id), 'attention');
      const inB = only(await today(multi.key, b.id), 'attention');
      app.clock.advanceMs(60_000);
      await today(multi.key, a.id);
      expect(storedById(inA.id).last_seen_at).to.equal('2026-03-15T12:01:00.000Z');
      expect(storedById(inB.id).last_seen_at).to.equal(START);
    });

    it('changes nothing else in the books: a checksum of every other table is the same before and after a call that opens and closes signals', async () => {
      // Causes: billing past due, a long-overdue invoice, a waiting review item, a draft without a rate.
      const late = await sentInvoice({ issueDate: '2026-01-10', dueDate: '2026-02-01' });
      await draftInvoice('MXN', '2026-03-04', 'Checksum Draft Customer');
      queue();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const opened = await today();
      expect(opened.signals.map((s) => s.severity)).to.deep.equal(['blocking', 'blocking', 'urgent', 'attention']);

      // Fix two causes (billing, the invoice) and add two (a second review item is counted, a key expires soon).
      setTenant(app, tenant.id, { billingState: 'active' });
      await payInvoice(app, tenant.key, late.invoiceId, '25000');
      buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'Soon gone', expiresOn: '2026-03-20' });
      queue('2026-03-13');
      app.clock.advanceMs(60_000);
      // The job pool runs beside the API on this clock: settle what its next tick would do first.
      inTransaction(app.db, () => markOverdueInvoices(app.db, app.clock));
      purgeExpiredIdempotency(app.db, app.clock);

      const signalsBefore = stored();
      const before = booksChecksum(app);
      const feed = await today();
      const after = booksChecksum(app);
      expect(after.perTable, 'each table\'s checksum').to.deep.equal(before.perTable);
      expect(after.digest).to.equal(before.digest);

      // ...while the call did open and close signals.
      expect(feed.signals.map((s) => s.severity)).to.deep.equal(['blocking', 'attention', 'attention', 'informational']);
      const signalsAfter = stored();
      const closedNow = signalsAfter.filter((row) => row.closed_at === '2026-03-15T12:01:00.000Z').map((row) => row.kind).sort();
      expect(closedNow).to.deep.equal(['billing_past_due', 'invoice_overdue_30']);
      const openedNow = signalsAfter.filter((row) => row.first_seen_at === '2026-03-15T12:01:00.000Z').map((row) => row.kind).sort();
      expect(openedNow).to.deep.equal(['key_expiring', 'payments_received']);
      expect(signalsAfter).to.not.deep.equal(signalsBefore);
    });

    it('the checksum notices a change to the books (so its equality above means something)', async () => {
      const before = booksChecksum(app);
      expect(before.tables).to.include.members(['audit_log', 'invoices', 'journal_entries', 'journal_lines', 'review_queue_items', 'transactions', 'tenants', 'api_keys']);
      expect(before.tables).to.not.include('today_signals');
      queue();
      expect(booksChecksum(app).digest).to.not.equal(before.digest);
    });
  });

  describe('entity rules', () => {
    it('uses the only business when entityId is omitted, and the same when it is named', async () => {
      queue();
      const omitted = await today();
      const named = await today(tenant.key, tenant.business.id);
      expect(named).to.deep.equal(omitted);
    });

    it('refuses an omitted entityId when the key reaches several businesses (422 "entityId:"), storing nothing', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      setTenant(app, multi.id, { billingState: 'past_due' });
      expectInvalid(await app.get('/api/v1/today', multi.key), 'entityId');
      for (const business of multi.businesses) expect(stored(business.id)).to.deep.equal([]);
    });

    it('works out each business on its own: a review item of one business is not in the other\'s Today', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [Business, Business];
      queue('2026-03-14', b);
      expect((await today(multi.key, a.id)).signals).to.deep.equal([]);
      expect(only(await today(multi.key, b.id), 'attention').evidence).to.deep.equal([{ label: '1 item, oldest from 2026-03-14', url: reviewUrl(b.id) }]);
    });

    it('uses the granted business when a key limited to one business omits entityId', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [Business, Business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [b.id] });
      queue('2026-03-14', b);
      const feed = await today(limited.key);
      expect(only(feed, 'attention').evidence[0]!.url).to.equal(reviewUrl(b.id));
      expect(stored(a.id)).to.deep.equal([]);
    });

    it('refuses an omitted entityId from a key limited to two of three businesses (422 "entityId:")', async () => {
      const multi = buildApiTenant(app, { businesses: 3, plan: 'large' });
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [multi.businesses[0]!.id, multi.businesses[1]!.id] });
      expectInvalid(await app.get('/api/v1/today', limited.key), 'entityId');
    });

    it('refuses an entityId the key was not given (403 entity_not_allowed), storing nothing for it', async () => {
      const multi = buildApiTenant(app, { businesses: 2, plan: 'large' });
      const [a, b] = multi.businesses as [Business, Business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [a.id] });
      queue('2026-03-14', b);
      expectError(await app.get(withQuery('/api/v1/today', { entityId: b.id }), limited.key), 403, 'entity_not_allowed');
      expect(stored(b.id)).to.deep.equal([]);
    });

    it('refuses another account\'s business (404 not_found), storing nothing for it', async () => {
      const other = buildApiTenant(app);
      setTenant(app, other.id, { billingState: 'past_due' });
      expectError(await app.get(withQuery('/api/v1/today', { entityId: other.business.id }), tenant.key), 404, 'not_found');
      expect(stored(other.business.id)).to.deep.equal([]);
    });

    it('refuses an unknown entityId (404 not_found)', async () => {
      expectError(await app.get(withQuery('/api/v1/today', { entityId: NO_SUCH_ID }), tenant.key), 404, 'not_found');
    });

    it('refuses an entityId that is not a uuid (422 "entityId:")', async () => {
      expectInvalid(await app.get('/api/v1/today?entityId=main', tenant.key), 'entityId');
    });

    it('refuses an unknown parameter, naming it (422 "severity:")', async () => {
      expectInvalid(await app.get('/api/v1/today?severity=urgent', tenant.key), 'severity');
    });
  });

  describe('access', () => {
    it('serves a Read only key (today:read)', async () => {
      const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
      queue();
      expect(only(await today(readOnly.key), 'attention').sentence).to.equal('1 bank transaction waits in the review queue.');
    });

    it('refuses a request without a key (401 invalid_key), storing nothing', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      expectError(await app.get('/api/v1/today', null), 401, 'invalid_key');
      expect(stored()).to.deep.equal([]);
    });

    it('serves Today while billing is past due (reads still work)', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      expect(only(await today(), 'blocking').sentence).to.equal(BILLING_SENTENCE);
    });
  });
});

/**
 * SHA-256 over every row of every table but today_signals and knex's own, each table's rows
 * serialised (bigints as text) and sorted, so the order rows come back in does not matter and
 * WITHOUT ROWID tables count too.
 */
function booksChecksum(app: TestApp): { digest: string; tables: string[]; perTable: Record<string, string> } {
  const tables = (
    app.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'knex%' AND name <> 'today_signals' ORDER BY name")
      .all() as Array<{ name: string }>
  ).map((row) => row.name);
  const perTable: Record<string, string> = {};
  const whole = createHash('sha256');
  for (const table of tables) {
    const rows = (app.db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[])
      .map((row) => JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : Buffer.isBuffer(value) ? value.toString('hex') : value)))
      .sort();
    const digest = createHash('sha256').update(rows.join('\n')).digest('hex');
    perTable[table] = digest;
    whole.update(`${table}:${digest}\n`);
  }
  return { digest: whole.digest('hex'), tables, perTable };
}
