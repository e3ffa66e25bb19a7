import { expect } from 'chai';
import { fixedClock } from '../../src/clock.js';
import { inTransaction } from '../../src/db/connection.js';
import { type Actor, type AuditEvent, CLI_ACTOR, jobActor, PAY_PAGE_ACTOR, recordAudit } from '../../src/store/audit.js';
import { consoleActor, createSignInLink, csrfToken } from '../../src/store/console-sessions.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { buildBusiness, buildKey } from '../support/factories.js';
import { type Books, newBooks } from '../support/invoicing.js';

/**
 * The console's audit trail page: the signed-in account's rows and no one else's, newest
 * first, 50 a page with an "Older" link that keeps the filters; filters by business, by who
 * wrote (a kind of writer, or a key by name) and by day; a filter that makes no sense answers
 * 400 with the page and a notice, never a 500.
 */

const NOW = '2026-03-16T08:00:00.000Z';

/** One row of the page's table, as the owner reads it. */
interface ShownRow {
  id: number;
  when: string;
  who: string;
  what: string;
  record: string;
  business: string;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (html: string) => html.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);
const textOf = (html: string) => unescape(html.replace(/<[^>]*>/g, ''));

function shownRows(html: string): ShownRow[] {
  return [...html.matchAll(/<tr data-audit-id="(\d+)">(.*?)<\/tr>/gs)].map(([, id, inner]) => {
    const cells = [...inner!.matchAll(/<td>(.*?)<\/td>/gs)].map(([, cell]) => cell!);
    expect(cells, `cells of row ${id}`).to.have.length(5);
    return {
      id: Number(id),
      when: textOf(cells[0]!),
      who: textOf(cells[1]!),
      what: textOf(/<code>(.*?)<\/code>/s.exec(cells[2]!)![1]!),
      record: textOf(cells[3]!),
      business: textOf(cells[4]!),
    };
  });
}

/** The "Older" link's address, if the page has one. */
function olderLink(html: string): string | undefined {
  const found = /<a href="([^"]*)" rel="next">Older<\/a>/.exec(html);
  return found ? unescape(found[1]!) : undefined;
}

describe('the owner’s console: the audit trail page', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp(NOW);
  });
  after(() => app.close());

  function link(books: Books): string {
    return inTransaction(app.db, () => createSignInLink(app.db, app.clock, CLI_ACTOR, books.tenantId, 15)).token;
  }

  function post(path: string, cookie: string | null, fields: Record<string, string>): Promise<TestResponse> {
    return app.request('POST', path, {
      rawBody: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    });
  }

  async function signIn(books: Books): Promise<{ cookie: string; csrf: string; sessionId: string }> {
    const res = await post(`/console/sign-in/${link(books)}`, null, {});
    expect(res.status).to.equal(303);
    const cookie = [res.headers['set-cookie']].flat()[0]!.split(';')[0]!;
    const sessionId = (app.db.prepare('SELECT id FROM console_sessions WHERE tenant_id = ? ORDER BY created_at DESC').get(books.tenantId) as { id: string }).id;
    return { cookie, csrf: csrfToken(cookie.split('=')[1]!), sessionId };
  }

  function audit(cookie: string, query = ''): Promise<TestResponse> {
    return app.request('GET', `/console/audit${query}`, { headers: { cookie } });
  }

  /** Appends a row at `at`, as a writer would have. */
  function record(at: string, actor: Actor, event: AuditEvent): number {
    return inTransaction(app.db, () => {
      recordAudit(app.db, fixedClock(at), actor, event);
      return Number(app.db.prepare('SELECT max(id) FROM audit_log').pluck().get());
    });
  }

  /** The ids of an account's rows, newest first, as stored. */
  function storedIds(tenantId: string): number[] {
    return (app.db.prepare('SELECT id FROM audit_log WHERE tenant_id = ? ORDER BY id DESC').pluck().all(tenantId) as (number | bigint)[]).map(Number);
  }

  it('lists a key created and revoked in the console under the console, with the sign-in, newest first', async () => {
    const books = newBooks(app);
    const { cookie, csrf, sessionId } = await signIn(books);
    expect((await post('/console/keys', cookie, { _csrf: csrf, name: 'nightly export', access: 'read' })).status).to.equal(201);
    const keyId = (app.db.prepare("SELECT id FROM api_keys WHERE tenant_id = ? AND name = 'nightly export'").get(books.tenantId) as { id: string }).id;
    expect((await post(`/console/keys/${keyId}/revoke`, cookie, { _csrf: csrf })).status).to.equal(303);

    const res = await audit(cookie);
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.text).to.contain('<a href="/console/audit" aria-current="page">Audit trail</a>');
    const rows = shownRows(res.text);
    const byConsole = `Console: ${consoleActor(sessionId).name}`;
    expect(rows.slice(0, 3).map(({ who, what, record }) => ({ who, what, record }))).to.deep.equal([
      { who: byConsole, what: 'api_key.revoke', record: `api_key ${keyId}` },
      { who: byConsole, what: 'api_key.create', record: `api_key ${keyId}` },
      { who: byConsole, what: 'console.sign_in', record: `console_session ${sessionId}` },
    ]);
    expect(rows[3]).to.include({ what: 'console.link', who: `Admin command: ${CLI_ACTOR.name} (daybook)` });
    expect(rows[0]!.when).to.equal('2026-03-16 08:00:00');
    // Every row of the account, and only those, newest first.
    expect(rows.map((row) => row.id)).to.deep.equal(storedIds(books.tenantId));
    // The business's own row names it.
    expect(rows.find((row) => row.what === 'business.create')).to.include({ business: books.businessName, record: `business ${books.businessId}` });
  });

  it('labels every control and gives every column header its scope', async () => {
    const books = newBooks(app);
    const { cookie } = await signIn(books);
    const html = (await audit(cookie)).text;
    const controls = [...html.matchAll(/<(select|input)\b([^>]*)>/g)].map(([, , attributes]) => attributes!).filter((attributes) => !attributes.includes('type="hidden"'));
    expect(controls).to.have.length(4);
    for (const attributes of controls) {
      const id = /\bid="([^"]+)"/.exec(attributes)?.[1];
      expect(id, attributes).to.be.a('string');
      expect(html).to.contain(`<label for="${id}">`);
    }
    const headers = [...html.matchAll(/<th\b[^>]*>/g)].map(([tag]) => tag);
    expect(headers).to.have.length(5);
    for (const tag of headers) expect(tag).to.equal('<th scope="col">');
    expect(html).to.contain('<form method="get" action="/console/audit"');
  });

  describe('filters', () => {
    let books: Books;
    let cookie: string;
    let other: { id: string; name: string };
    const ids: Record<string, number> = {};
    before(async () => {
      books = newBooks(app);
      other = buildBusiness(app.db, app.clock, { tenantId: books.tenantId, name: 'Lakeside Bakery' });
      const key = buildKey(app.db, app.clock, { tenantId: books.tenantId, name: 'Bookkeeping app' });
      const tenantId = books.tenantId;
      ids.overdue = record('2026-03-10T09:00:00.000Z', jobActor('overdue'), { tenantId, businessId: books.businessId, action: 'invoice.overdue', subjectType: 'invoice', subjectId: 'inv-1' });
      ids.invoice = record('2026-03-12T00:00:00.000Z', { type: 'api_key', id: key.id, name: 'Bookkeeping app' }, { tenantId, businessId: other.id, action: 'invoice.create', subjectType: 'invoice', subjectId: 'inv-2' });
      ids.webhook = record('2026-03-12T23:59:59.999Z', { type: 'webhook', id: null, name: 'stripe' }, { tenantId, businessId: books.businessId, action: 'card_payment.record', subjectType: 'invoice', subjectId: 'inv-1' });
      ids.pay = record('2026-03-14T10:00:00.000Z', PAY_PAGE_ACTOR, { tenantId, businessId: other.id, action: 'invoice.pay_started', subjectType: 'invoice', subjectId: 'inv-2' });
      ({ cookie } = await signIn(books));
    });

    async function actionsFor(query: string): Promise<string[]> {
      const res = await audit(cookie, query);
      expect(res.status, `${query}: ${res.text.slice(0, 300)}`).to.equal(200);
      return shownRows(res.text).map((row) => row.what);
    }

    it('by business: only rows about that business', async () => {
      const res = await audit(cookie, `?business=${other.id}`);
      const rows = shownRows(res.text);
      expect(rows.map((row) => row.what)).to.deep.equal(['invoice.pay_started', 'invoice.create', 'business.create']);
      for (const row of rows) expect(row.business).to.equal('Lakeside Bakery');
      // The choice is kept in the form.
      expect(res.text).to.contain(`<option value="${other.id}" selected>Lakeside Bakery</option>`);
      expect(await actionsFor(`?business=${books.businessId}`)).to.deep.equal(['card_payment.record', 'invoice.overdue', 'business.create']);
    });

    it('by who: a kind of writer, any key, or one key by name', async () => {
      expect(await actionsFor('?who=job')).to.deep.equal(['invoice.overdue']);
      expect(await actionsFor('?who=webhook')).to.deep.equal(['card_payment.record']);
      expect(await actionsFor('?who=pay_page')).to.deep.equal(['invoice.pay_started']);
      expect(await actionsFor('?who=console')).to.deep.equal(['console.sign_in']);
      expect(await actionsFor('?who=api_key')).to.deep.equal(['invoice.create']);
      expect(await actionsFor(`?who=${encodeURIComponent('key:Bookkeeping app')}`)).to.deep.equal(['invoice.create']);
      const cli = await actionsFor('?who=cli');
      expect(cli).to.include.members(['console.link', 'api_key.create', 'business.create', 'account.create']);
      expect(cli.filter((what) => ['invoice.overdue', 'invoice.create', 'card_payment.record', 'invoice.pay_started', 'console.sign_in'].includes(what))).to.deep.equal([]);
      const keyRows = shownRows((await audit(cookie, '?who=api_key')).text);
      expect(keyRows[0]!.who).to.equal('API key: Bookkeeping app');
    });

    it('by day (UTC): from and to both count whole days', async () => {
      expect(await actionsFor('?since=2026-03-11&until=2026-03-12')).to.deep.equal(['card_payment.record', 'invoice.create']);
      expect(await actionsFor('?until=2026-03-12')).to.deep.equal(['card_payment.record', 'invoice.create', 'invoice.overdue']);
      expect(await actionsFor('?since=2026-03-13&until=2026-03-15')).to.deep.equal(['invoice.pay_started']);
      expect(await actionsFor('?since=2026-03-14&until=2026-03-14')).to.deep.equal(['invoice.pay_started']);
      const since = await actionsFor('?since=2026-03-16');
      expect(since).to.include('console.sign_in');
      expect(since.filter((what) => ['invoice.pay_started', 'card_payment.record', 'invoice.create', 'invoice.overdue'].includes(what))).to.deep.equal([]);
      expect(await actionsFor('?since=2026-03-17')).to.deep.equal([]);
    });

    it('all together: business, who and days narrow each other', async () => {
      expect(await actionsFor(`?business=${other.id}&who=pay_page&since=2026-03-14&until=2026-03-14`)).to.deep.equal(['invoice.pay_started']);
      expect(await actionsFor(`?business=${books.businessId}&who=api_key`)).to.deep.equal([]);
      expect(await actionsFor(`?business=${other.id}&until=2026-03-13`)).to.deep.equal(['invoice.create']);
      // The form sent with nothing chosen filters nothing.
      expect(await actionsFor('?business=&who=&since=&until=')).to.deep.equal(await actionsFor(''));
    });
  });

  it('pages 50 rows at a time: "Older" carries the filters and the last id, and no row shows twice', async () => {
    const books = newBooks(app);
    const tenantId = books.tenantId;
    for (let n = 0; n < 70; n++) {
      const at = `2026-03-15T10:${String(n % 60).padStart(2, '0')}:00.000Z`;
      record(at, jobActor('overdue'), { tenantId, businessId: books.businessId, action: 'invoice.overdue', subjectType: 'invoice', subjectId: `job-${n}` });
      record(at, CLI_ACTOR, { tenantId, action: 'account.update', subjectType: 'account', subjectId: tenantId });
    }
    const { cookie } = await signIn(books);
    const all = storedIds(tenantId);
    expect(all.length).to.be.greaterThan(140);

    // Unfiltered: every row of the account once, across pages, newest first.
    const seen: number[] = [];
    let next: string | undefined = '/console/audit';
    let pages = 0;
    while (next !== undefined) {
      const res = await app.request('GET', next, { headers: { cookie } });
      expect(res.status).to.equal(200);
      const rows = shownRows(res.text);
      pages++;
      next = olderLink(res.text);
      expect(rows.length).to.equal(next === undefined ? all.length - seen.length : 50);
      if (next !== undefined) expect(next).to.equal(`/console/audit?before=${rows[49]!.id}`);
      seen.push(...rows.map((row) => row.id));
    }
    expect(pages).to.equal(Math.ceil(all.length / 50));
    expect(seen).to.deep.equal(all);

    // Filtered: the link keeps the filter, and the next page holds only the rest.
    const first = await audit(cookie, '?who=job&since=2026-03-15');
    const firstRows = shownRows(first.text);
    expect(firstRows).to.have.length(50);
    const older = olderLink(first.text)!;
    expect(older).to.equal(`/console/audit?who=job&since=2026-03-15&before=${firstRows[49]!.id}`);
    const second = await app.request('GET', older, { headers: { cookie } });
    const secondRows = shownRows(second.text);
    expect(secondRows).to.have.length(20);
    expect(olderLink(second.text)).to.equal(undefined);
    expect(second.text).to.contain('<a href="/console/audit?who=job&amp;since=2026-03-15">Newest</a>');
    const both = [...firstRows, ...secondRows];
    expect(new Set(both.map((row) => row.id)).size).to.equal(70);
    expect(both.map((row) => row.record)).to.have.members(Array.from({ length: 70 }, (_, n) => `invoice job-${n}`));
    for (const row of both) expect(row.what).to.equal('invoice.overdue');
    expect(Math.min(...firstRows.map((row) => row.id))).to.be.greaterThan(Math.max(...secondRows.map((row) => row.id)));
  });

  it('never shows another account’s rows, nor the installation’s', async () => {
    const mine = newBooks(app, 'Mine Pottery');
    const theirs = newBooks(app, 'Theirs Joinery');
    record(NOW, jobActor('overdue'), { tenantId: theirs.tenantId, businessId: theirs.businessId, action: 'invoice.overdue', subjectType: 'invoice', subjectId: 'theirs-1' });
    const installation = record(NOW, CLI_ACTOR, { tenantId: null, action: 'rates.fetch', subjectType: 'rates', subjectId: null });
    await signIn(theirs);
    const { cookie } = await signIn(mine);
    const theirIds = new Set(storedIds(theirs.tenantId));
    for (const query of ['', '?who=job', '?who=console', '?who=cli', '?since=2026-03-16']) {
      const res = await audit(cookie, query);
      expect(res.status).to.equal(200);
      for (const row of shownRows(res.text)) {
        expect(theirIds.has(row.id), `${query}: row ${row.id}`).to.equal(false);
        expect(row.id).to.not.equal(installation);
      }
      expect(res.text).to.not.contain(theirs.businessName);
      expect(res.text).to.not.contain('theirs-1');
    }
    expect(shownRows((await audit(cookie)).text).map((row) => row.id)).to.deep.equal(storedIds(mine.tenantId));
    // Their business cannot be asked for.
    const asked = await audit(cookie, `?business=${theirs.businessId}`);
    expect(asked.status).to.equal(400);
    expect(shownRows(asked.text)).to.deep.equal([]);
  });

  it('shows a row’s detail escaped, in a details element', async () => {
    const books = newBooks(app);
    record(NOW, CLI_ACTOR, { tenantId: books.tenantId, action: 'account.update', subjectType: 'account', subjectId: books.tenantId, detail: { name: '<script>alert(1)</script> & "co"' } });
    const { cookie } = await signIn(books);
    const html = (await audit(cookie)).text;
    expect(html).to.not.contain('<script>alert');
    expect(html).to.contain('<details><summary>Detail</summary><pre>{\n  &quot;name&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt; &amp; \\&quot;co\\&quot;&quot;\n}</pre></details>');
  });

  it('answers a filter that makes no sense with 400, the form and a notice, never a 500', async () => {
    const books = newBooks(app);
    const { cookie } = await signIn(books);
    const cases: [query: string, says: RegExp][] = [
      ['?since=2026-02-30', /&quot;From&quot; must be a date written YYYY-MM-DD/],
      ['?until=yesterday', /&quot;To&quot; must be a date written YYYY-MM-DD/],
      ['?since=2026-03-10&until=2026-03-09', /&quot;To&quot; is before &quot;From&quot;/],
      ['?business=no-such-business', /not one of this account’s businesses/],
      ['?business=00000000-0000-4000-8000-000000000000', /not one of this account’s businesses/],
      ['?who=robot', /Choose who wrote from the list/],
      ['?who=key%3ANo%20such%20key', /No API key of this account has that name/],
      ['?before=abc', /link to older rows is damaged/],
      ['?before=-1', /link to older rows is damaged/],
      ['?since=2026-03-01&since=2026-03-02', /Give &quot;since&quot; once/],
    ];
    for (const [query, says] of cases) {
      const res = await audit(cookie, query);
      expect(res.status, query).to.equal(400);
      expect(res.headers['content-type'], query).to.equal('text/html; charset=utf-8');
      expect(res.text, query).to.match(/<p class="notice problem" role="alert">/);
      expect(res.text, query).to.match(says);
      expect(res.text, query).to.contain('<form method="get" action="/console/audit"');
      expect(shownRows(res.text), query).to.deep.equal([]);
    }
    // What was typed is shown back, escaped.
    const typed = await audit(cookie, `?since=${encodeURIComponent('"><b>x')}`);
    expect(typed.status).to.equal(400);
    expect(typed.text).to.not.contain('"><b>x');
    expect(typed.text).to.contain('value="&quot;&gt;&lt;b&gt;x"');
  });

  it('is signed out without a session', async () => {
    const res = await app.request('GET', '/console/audit');
    expect(res.status).to.equal(401);
    expect(res.text).to.not.contain('data-audit-id');
  });
});
