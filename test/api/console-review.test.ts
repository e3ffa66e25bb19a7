import { expect } from 'chai';
import { type Business, getBusiness } from '../../src/books/businesses.js';
import { inTransaction } from '../../src/db/connection.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { createSignInLink, csrfToken } from '../../src/store/console-sessions.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { accountIdByName, accountIdByRole } from '../support/factories.js';
import { type Books, issueInvoice, newBooks } from '../support/invoicing.js';
import { acceptedAt, queueReviewItem, type QueuedItemInput } from '../support/review.js';

/**
 * The console's Today and Review queue pages over HTTP: Today shows a business's signals and
 * links its evidence to console pages, never to the API; the review queue lists the waiting
 * items and accepts them through the write door (one at a time, or the confident ones together
 * after a confirmation), under the console's actor, behind the session's CSRF token.
 */

const NOW = '2026-03-16T08:00:00.000Z';

describe('the owner’s console: Today and the review queue', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp(NOW);
  });
  after(() => app.close());

  const form = (fields: Record<string, string | string[]>) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) params.append(name, one);
    return params.toString();
  };

  function post(path: string, cookie: string, fields: Record<string, string | string[]>): Promise<TestResponse> {
    return app.request('POST', path, { rawBody: form(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', cookie } });
  }

  const get = (path: string, cookie: string) => app.request('GET', path, { headers: { cookie } });

  /** Signs in with a fresh link: the cookie to send back, and the session's CSRF token. */
  async function signIn(books: Books): Promise<{ cookie: string; csrf: string }> {
    const token = inTransaction(app.db, () => createSignInLink(app.db, app.clock, CLI_ACTOR, books.tenantId, 15)).token;
    const res = await app.request('POST', `/console/sign-in/${token}`, { rawBody: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).to.equal(303);
    const cookie = [res.headers['set-cookie']].flat()[0]!.split(';')[0]!;
    return { cookie, csrf: csrfToken(cookie.split('=')[1]!) };
  }

  const businessOf = (books: Books): Business => getBusiness(app.db, books.businessId);
  const queue = (books: Books, input: Partial<QueuedItemInput> = {}) =>
    queueReviewItem(app, businessOf(books), { date: '2026-03-10', amountCents: 4200n, description: 'CARD 4411 STAPLES', ...input });

  async function transactionStatus(books: Books, transactionId: string): Promise<string> {
    const res = await app.get(`/api/v1/transactions/${transactionId}`, books.key);
    expect(res.status, res.text).to.equal(200);
    return res.body.status as string;
  }

  const reviewAudit = (books: Books) =>
    app.db.prepare("SELECT subject_id, actor_type FROM audit_log WHERE tenant_id = ? AND action = 'review.accept' ORDER BY id").all(books.tenantId) as {
      subject_id: string;
      actor_type: string;
    }[];

  /** The page a 303 leads to, fetched with the same cookie. */
  async function follow(res: TestResponse, cookie: string): Promise<TestResponse> {
    expect(res.status, res.text.slice(0, 300)).to.equal(303);
    const location = String(res.headers.location);
    expect(location).to.match(/^\/console\/review\?/);
    return get(location, cookie);
  }

  const dataItems = (html: string): string[] => [...html.matchAll(/<tr data-item="([^"]+)">/g)].map((match) => match[1]!);

  it('lists the waiting items, one row each, with a labelled account choice set to the proposal', async () => {
    const books = newBooks(app);
    const first = queue(books, { date: '2026-03-09', description: 'CARD 4411 STAPLES', proposedAccount: 'Office Supplies', confidence: 0.95 });
    const second = queue(books, { date: '2026-03-11', description: 'UBER TRIP', proposedAccount: 'Travel', confidence: 0.4, rationale: 'A ride.' });
    const { cookie } = await signIn(books);

    const res = await get(`/console/review?business=${books.businessId}`, cookie);
    expect(res.status).to.equal(200);
    expect(dataItems(res.text)).to.deep.equal([first.itemId, second.itemId]);
    // Each row's form posts to its item, and its account choice starts at the proposal.
    expect(res.text).to.contain(`action="/console/review/${first.itemId}/accept" class="accept"`);
    expect(res.text).to.contain(`<label for="account-${second.itemId}" class="visually-hidden">`);
    expect(res.text).to.contain(`<option value="${accountIdByName(app.db, books.businessId, 'Travel')}" selected>Travel (6200)</option>`);
    expect(res.text).to.contain('<td class="num">$42.00</td>');
    expect(res.text).to.contain('<td class="num">95%</td>');
    expect(res.text).to.contain('<td>A ride.</td>');
    // Accounts Daybook keeps itself are not offered; the bank line is never booked to the bank.
    expect(res.text).to.not.contain(`value="${accountIdByRole(app.db, books.businessId, 'bank')}"`);
    expect(res.text).to.not.contain(`value="${accountIdByRole(app.db, books.businessId, 'accounts_receivable')}"`);
    expect(res.text).to.contain('<kbd>j</kbd>');
    // The first business by name is shown when none is named.
    expect(dataItems((await get('/console/review', cookie)).text)).to.deep.equal([first.itemId, second.itemId]);
  });

  it('accepts an item to its proposal through the door, under the console’s actor', async () => {
    const books = newBooks(app);
    const item = queue(books, { proposedAccount: 'Office Supplies' });
    const { cookie, csrf } = await signIn(books);

    const res = await post(`/console/review/${item.itemId}/accept`, cookie, { _csrf: csrf, business: books.businessId, accountId: item.proposedAccountId! });
    const page = await follow(res, cookie);
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('Accepted: CARD 4411 STAPLES, $42.00, booked to Office Supplies.');
    expect(dataItems(page.text)).to.deep.equal([]);
    expect(await transactionStatus(books, item.transactionId)).to.equal('accepted');
    expect(reviewAudit(books)).to.deep.equal([{ subject_id: item.itemId, actor_type: 'console' }]);
  });

  it('books an item to another account chosen: the transaction is edited', async () => {
    const books = newBooks(app);
    const item = queue(books, { proposedAccount: 'Office Supplies' });
    const { cookie, csrf } = await signIn(books);
    const software = accountIdByName(app.db, books.businessId, 'Software and Subscriptions');

    const page = await follow(await post(`/console/review/${item.itemId}/accept`, cookie, { _csrf: csrf, business: books.businessId, accountId: software }), cookie);
    expect(page.text).to.contain('booked to Software and Subscriptions (not the proposal).');
    expect(await transactionStatus(books, item.transactionId)).to.equal('edited');
    const booked = app.db.prepare('SELECT ledger_account_id FROM transactions WHERE id = ?').get(item.transactionId) as { ledger_account_id: string };
    expect(booked.ledger_account_id).to.equal(software);
  });

  it('shows the queue again with the refusal and its status when the door refuses', async () => {
    const books = newBooks(app);
    const item = queue(books, { proposedAccount: null, confidence: null });
    const { cookie, csrf } = await signIn(books);

    const res = await post(`/console/review/${item.itemId}/accept`, cookie, { _csrf: csrf, business: books.businessId, accountId: '' });
    expect(res.status).to.equal(422);
    expect(res.text).to.contain('role="alert">Nothing was accepted: ');
    expect(res.text).to.contain('accountId');
    expect(dataItems(res.text)).to.deep.equal([item.itemId]);
    expect(acceptedAt(app, item.itemId)).to.equal(null);
  });

  it('accepts the confident proposals together: exactly those the confirmation showed', async () => {
    const books = newBooks(app);
    const sure = queue(books, { date: '2026-03-05', description: 'STAPLES', confidence: 0.95 });
    const surer = queue(books, { date: '2026-03-06', description: 'ADOBE', proposedAccount: 'Software and Subscriptions', confidence: 0.99 });
    const unsure = queue(books, { date: '2026-03-07', description: 'UNKNOWN SHOP', confidence: 0.5 });
    const { cookie, csrf } = await signIn(books);

    const queuePage = await get(`/console/review?business=${books.businessId}`, cookie);
    expect(queuePage.text).to.contain('action="/console/review/accept-confident"');
    const confirm = await get(`/console/review/accept-confident?business=${books.businessId}`, cookie);
    expect(confirm.status).to.equal(200);
    const shown = [...confirm.text.matchAll(/<input type="hidden" name="item" value="([^"]+)">/g)].map((match) => match[1]!);
    expect(shown).to.deep.equal([`${sure.itemId}:${sure.proposedAccountId}`, `${surer.itemId}:${surer.proposedAccountId}`]);
    expect(confirm.text).to.contain('Accept these 2 items');
    expect(confirm.text).to.not.contain('UNKNOWN SHOP');

    // A confident item queued after the confirmation was shown is not in what the owner saw.
    const later = queue(books, { date: '2026-03-08', description: 'LATER', confidence: 0.97 });
    const page = await follow(await post('/console/review/accept-confident', cookie, { _csrf: csrf, business: books.businessId, item: shown }), cookie);
    expect(page.text).to.contain('Accepted 2.');
    expect(acceptedAt(app, sure.itemId)).to.equal(NOW);
    expect(acceptedAt(app, surer.itemId)).to.equal(NOW);
    expect(acceptedAt(app, unsure.itemId)).to.equal(null);
    expect(acceptedAt(app, later.itemId)).to.equal(null);
    expect(await transactionStatus(books, sure.transactionId)).to.equal('accepted');
    expect(await transactionStatus(books, surer.transactionId)).to.equal('accepted');
    expect(reviewAudit(books).map((row) => row.actor_type)).to.deep.equal(['console', 'console']);
    // What still waits: the later confident item first, then the one that needs a look.
    expect(dataItems(page.text)).to.deep.equal([later.itemId, unsure.itemId]);
  });

  it('refuses a low-confidence item slipped into the batch, and accepts the rest', async () => {
    const books = newBooks(app);
    const sure = queue(books, { description: 'STAPLES', confidence: 0.95 });
    const unsure = queue(books, { description: 'UNKNOWN SHOP', confidence: 0.5 });
    const { cookie, csrf } = await signIn(books);

    const res = await post('/console/review/accept-confident', cookie, {
      _csrf: csrf,
      business: books.businessId,
      item: [`${sure.itemId}:${sure.proposedAccountId}`, `${unsure.itemId}:${unsure.proposedAccountId}`],
    });
    const page = await follow(res, cookie);
    expect(page.text).to.contain('Accepted 1; 1 could not be: UNKNOWN SHOP, $42.00: its proposal is not a confident one.');
    expect(acceptedAt(app, sure.itemId)).to.equal(NOW);
    expect(acceptedAt(app, unsure.itemId)).to.equal(null);
  });

  it('refuses a form without the session’s CSRF token and accepts nothing', async () => {
    const books = newBooks(app);
    const item = queue(books, { confidence: 0.95 });
    const { cookie } = await signIn(books);

    const one = await post(`/console/review/${item.itemId}/accept`, cookie, { business: books.businessId, accountId: item.proposedAccountId! });
    expect(one.status).to.equal(403);
    const many = await post('/console/review/accept-confident', cookie, { business: books.businessId, item: `${item.itemId}:${item.proposedAccountId}` });
    expect(many.status).to.equal(403);
    expect(acceptedAt(app, item.itemId)).to.equal(null);
    expect(reviewAudit(books)).to.deep.equal([]);
  });

  it('answers an item of another account’s business as one that does not exist, and writes nothing', async () => {
    const mine = newBooks(app);
    const theirs = newBooks(app, 'Elsewhere Studio');
    const theirItem = queue(theirs, { confidence: 0.95 });
    const { cookie, csrf } = await signIn(mine);
    const auditRows = () => (app.db.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: bigint }).n;
    const before = auditRows();

    const one = await post(`/console/review/${theirItem.itemId}/accept`, cookie, { _csrf: csrf, business: mine.businessId, accountId: theirItem.proposedAccountId! });
    expect(one.status).to.equal(404);
    expect(one.text).to.contain('Nothing was accepted: No such review item.');
    expect(one.text).to.not.contain(theirs.businessName);

    // Nor through the batch, named with this account's business or with theirs.
    const viaMine = await post('/console/review/accept-confident', cookie, { _csrf: csrf, business: mine.businessId, item: `${theirItem.itemId}:${theirItem.proposedAccountId}` });
    expect((await follow(viaMine, cookie)).text).to.contain('Accepted 0; 1 could not be:');
    const viaTheirs = await post('/console/review/accept-confident', cookie, { _csrf: csrf, business: theirs.businessId, item: `${theirItem.itemId}:${theirItem.proposedAccountId}` });
    expect(viaTheirs.status).to.equal(404);
    expect((await get(`/console/review?business=${theirs.businessId}`, cookie)).status).to.equal(404);
    expect((await get(`/console/review/accept-confident?business=${theirs.businessId}`, cookie)).status).to.equal(404);

    expect(acceptedAt(app, theirItem.itemId)).to.equal(null);
    expect(auditRows()).to.equal(before);
  });

  it('ignores a notice in the address that the console did not write', async () => {
    const books = newBooks(app);
    const { cookie } = await signIn(books);
    const res = await get(`/console/review?business=${books.businessId}&notice=Call+555-0100&kind=ok&sig=forged`, cookie);
    expect(res.status).to.equal(200);
    expect(res.text).to.not.contain('555-0100');
  });

  it('shows Today’s signals, linking the review queue’s evidence to the console and never to the API', async () => {
    const books = newBooks(app);
    const invoice = await issueInvoice(app, books);
    // Four days before the invoice falls due, so Today names it too.
    app.clock.set('2026-04-10T08:00:00.000Z');
    try {
      queue(books, { date: '2026-04-08' });
      const { cookie } = await signIn(books);
      const res = await get(`/console/today?business=${books.businessId}`, cookie);
      expect(res.status).to.equal(200);
      expect(res.text).to.contain('1 bank transaction waits in the review queue.');
      expect(res.text).to.contain(`<a href="/console/review?business=${books.businessId}">1 item, oldest from 2026-04-08</a>`);
      // The invoice has no console page yet: its evidence is plain text.
      expect(res.text).to.contain(`<li>Invoice ${invoice.number}, due 2026-04-14</li>`);
      expect(res.text).to.not.contain('/api/v1');
      // The business picker defaults to the account's first business.
      expect((await get('/console/today', cookie)).text).to.contain('1 bank transaction waits in the review queue.');
    } finally {
      app.clock.set(NOW);
    }
  });

  it('answers Today for another account’s business as a page that does not exist', async () => {
    const mine = newBooks(app);
    const theirs = newBooks(app, 'Elsewhere Studio');
    const { cookie } = await signIn(mine);
    const res = await get(`/console/today?business=${theirs.businessId}`, cookie);
    expect(res.status).to.equal(404);
    expect(res.text).to.not.contain(theirs.businessName);
  });
});
