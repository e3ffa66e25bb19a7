import { expect } from 'chai';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { type Business, getBusiness } from '../../src/books/businesses.js';
import { getTenant } from '../../src/books/tenants.js';
import { inTransaction } from '../../src/db/connection.js';
import { CONSOLE_CSP } from '../../src/pages/console/html.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { createSignInLink, csrfToken } from '../../src/store/console-sessions.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { seriousAccessibilityFindings, startBrowserOrSkip, type PageProblems, watchCspViolations, watchPage } from '../support/browser.js';
import { type Books, newBooks } from '../support/invoicing.js';
import { queueReviewItem } from '../support/review.js';
import { freePort } from '../support/free-port.js';

/**
 * The owner's console in a real browser (Debian's Chromium, headless), as an owner uses it:
 * signing in from a one-time link, creating an API key and revoking it, reading the audit trail,
 * working through the review queue with the keyboard, and a form posted from another site
 * refused with nothing written. Every console page shown keeps its Content-Security-Policy, has
 * no console error and no serious accessibility finding at a desktop's and a phone's width, and
 * nothing the browser asks for goes anywhere but the console's own server.
 */

const NOW = '2026-03-16T08:00:00.000Z';
const TODAY = NOW.slice(0, 10);

const WIDTHS = [
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
] as const;
const DESKTOP = WIDTHS[0][1];

/** The name a page from another site uses for itself; the browser reaches it through the loopback stand-in, never the network. */
const CROSS_SITE_ORIGIN = 'http://elsewhere.example';

/** A document the page loaded (each hop of a redirect too), as the server answered it. */
interface LoadedDocument {
  url: string;
  status: number;
  headers: Record<string, string>;
}

/** A tab of the owner's browser, watched from its first request. */
interface Tab {
  page: Page;
  problems: PageProblems;
  documents: LoadedDocument[];
}

/**
 * Another site's page: a form that posts itself at once to the console's key form, as a hostile
 * page would. The same loopback server answers as a page on another port of this machine (same
 * site, another origin) and, as the browser's proxy, for CROSS_SITE_ORIGIN (another site).
 */
interface ForeignSite {
  /** Its own address on the loopback interface. */
  origin: string;
  /** What it was asked for: method, origin and path of every request it answered. */
  asked: string[];
  close(): Promise<void>;
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

function startForeignSite(consoleOrigin: string): Promise<ForeignSite> {
  const asked: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    asked.push(`${req.method} ${url.origin}${url.pathname}`);
    if (req.method === 'GET' && url.pathname === '/forge') {
      const field = (name: string) => `<input type="hidden" name="${name}" value="${escapeAttribute(url.searchParams.get(name) ?? '')}">`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!DOCTYPE html><html lang="en"><head><title>A page elsewhere</title></head><body>
<form method="post" action="${consoleOrigin}/console/keys">${field('_csrf')}${field('name')}<input type="hidden" name="access" value="read_write"></form>
<script>document.forms[0].submit();</script>
</body></html>`);
      return;
    }
    // The browser's own request for an icon: answered with nothing, so it logs no error.
    res.writeHead(url.pathname === '/favicon.ico' ? 204 : 404);
    res.end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ origin: `http://127.0.0.1:${port}`, asked, close: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}

describe('the owner’s console in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser;
  let app: TestApp;
  /** The console's own origin: every request the browser makes must go here (but the deliberate page elsewhere). */
  let origin: string;
  let foreign: ForeignSite;

  before(async function () {
    browser = await startBrowserOrSkip(this);
    const port = await freePort();
    app = await startTestApp(NOW, { config: { port, siteUrl: `http://127.0.0.1:${port}` } });
    origin = app.url;
    expect(origin).to.equal(`http://127.0.0.1:${port}`);
    foreign = await startForeignSite(origin);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await foreign?.close();
  });

  /** The owner's browser: one context (one cookie jar), every request it makes recorded. */
  async function ownerBrowser(options: BrowserContextOptions = {}) {
    const context: BrowserContext = await browser.newContext({ viewport: DESKTOP, ...options });
    await watchCspViolations(context);
    const requests: string[] = [];
    context.on('request', (request) => requests.push(request.url()));
    // What a page loads besides itself (its script, its style, the browser's icon) must be there to load.
    const failedLoads: string[] = [];
    context.on('response', (response) => {
      if (response.status() >= 400 && !response.request().isNavigationRequest()) failedLoads.push(`${response.status()} ${response.url()}`);
    });
    return {
      context,
      requests,
      failedLoads,
      async newTab(): Promise<Tab> {
        const page = await context.newPage();
        const documents: LoadedDocument[] = [];
        page.on('response', (response) => {
          if (response.request().isNavigationRequest() && response.frame() === page.mainFrame()) {
            documents.push({ url: response.url(), status: response.status(), headers: response.headers() });
          }
        });
        return { page, problems: watchPage(page), documents };
      },
    };
  }
  type OwnerBrowser = Awaited<ReturnType<typeof ownerBrowser>>;

  /**
   * Asserts that nothing the browser asked for went anywhere but the console (and the origins
   * named), that the console's own script and style were among it, and that nothing a page
   * loaded besides itself was refused.
   */
  function expectOnlyOwnRequests(owner: OwnerBrowser, elsewhere: readonly string[] = []): void {
    const away = owner.requests.filter((url) => new URL(url).origin !== origin && !elsewhere.includes(new URL(url).origin));
    expect(away, 'requests to any other address').to.deep.equal([]);
    expect(owner.failedLoads, 'loads that failed').to.deep.equal([]);
    expect(owner.requests).to.include(`${origin}/console/assets/console.js`);
    expect(owner.requests).to.include(`${origin}/console/assets/console.css`);
  }

  /**
   * The browser notes every page answered with an error status ("Failed to load resource") on
   * its console. That note is expected for a page the console refuses on purpose (the test
   * checks its status); any other console error is a fault.
   */
  function isRefusalNote(text: string, documents: readonly LoadedDocument[]): boolean {
    const note = /^error: Failed to load resource: the server responded with a status of (\d{3}) \([^)]*\) \((.+)\)$/.exec(text);
    if (!note) return false;
    const status = Number(note[1]);
    return status >= 400 && documents.some((document) => document.url === note[2] && document.status === status);
  }

  /**
   * Holds the console page the tab shows to the console's rules: served with its policy, no
   * console error, no uncaught error, no policy violation, and no serious or critical axe
   * finding at a desktop's width or a phone's.
   */
  async function expectSoundPage(tab: Tab, label: string, status = 200): Promise<void> {
    const { page, problems, documents } = tab;
    const shown = documents[documents.length - 1];
    expect(shown?.url, `${label}: the page shown`).to.equal(page.url());
    expect(new URL(page.url()).origin, label).to.equal(origin);
    expect(shown!.status, `${label}: status`).to.equal(status);
    expect(shown!.headers['content-security-policy'], `${label}: its policy`).to.equal(CONSOLE_CSP);
    expect(
      problems.consoleErrors.filter((text) => !isRefusalNote(text, documents)),
      `${label}: console errors`,
    ).to.deep.equal([]);
    expect(problems.pageErrors, `${label}: uncaught errors`).to.deep.equal([]);
    expect(problems.cspMessages, `${label}: console messages about the policy`).to.deep.equal([]);
    expect(await problems.cspViolations(), `${label}: policy violations`).to.deep.equal([]);
    for (const [name, size] of WIDTHS) {
      await page.setViewportSize(size);
      expect(await seriousAccessibilityFindings(page), `${label} at a ${name}’s width`).to.deep.equal([]);
    }
    await page.setViewportSize(DESKTOP);
  }

  function signInLink(books: Books, minutes = 15): string {
    const { token } = inTransaction(app.db, () => createSignInLink(app.db, app.clock, CLI_ACTOR, books.tenantId, minutes));
    return `${origin}/console/sign-in/${token}`;
  }

  /** Opens a fresh sign-in link in the tab and presses Sign in: the tab shows Today. */
  async function signIn(tab: Tab, books: Books): Promise<void> {
    const opened = await tab.page.goto(signInLink(books));
    expect(opened?.status()).to.equal(200);
    await expectSoundPage(tab, 'the sign-in page');
    await Promise.all([tab.page.waitForURL(`${origin}/console/today`), tab.page.getByRole('button', { name: 'Sign in' }).click()]);
  }

  const heading = (page: Page) => page.locator('h1').innerText();
  const mainText = (page: Page) => page.locator('main').innerText();

  /** Presses the control and waits until the page its form leads to has loaded; returns the answer to the form's POST. */
  async function submit(page: Page, press: () => Promise<void>) {
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST' && response.request().isNavigationRequest()),
      // The page shown has loaded already: the next load is the answer's (or, after a redirect, the page it leads to).
      page.waitForEvent('load'),
      press(),
    ]);
    return answer;
  }

  it('signs in from a one-time link: the button uses it up, a second press or a later visit is refused, and so is a link past its time', async () => {
    const books = newBooks(app, 'Harbour Ceramics');
    const accountName = getTenant(app.db, books.tenantId).name;
    const owner = await ownerBrowser();
    try {
      const link = signInLink(books);
      const first = await owner.newTab();
      expect((await first.page.goto(link))?.status()).to.equal(200);
      expect(await heading(first.page)).to.equal('Sign in');
      expect(await mainText(first.page)).to.include(`Sign in to the console of ${accountName}.`);
      expect(await owner.context.cookies(origin), 'opening the link signs no one in').to.deep.equal([]);
      await expectSoundPage(first, 'the sign-in page');

      // The same link open in a second tab: opening it again changes nothing.
      const second = await owner.newTab();
      expect((await second.page.goto(link))?.status()).to.equal(200);
      expect(await second.page.getByRole('button', { name: 'Sign in' }).count()).to.equal(1);

      await Promise.all([first.page.waitForURL(`${origin}/console/today`), first.page.getByRole('button', { name: 'Sign in' }).click()]);
      expect(await heading(first.page)).to.equal('Today');
      expect(await first.page.locator('main h2').innerText()).to.equal('Harbour Ceramics');
      expect(await first.page.locator('nav a[aria-current="page"]').innerText()).to.equal('Today');
      const cookies = await owner.context.cookies(origin);
      expect(cookies.map(({ name, path, httpOnly, sameSite, secure }) => ({ name, path, httpOnly, sameSite, secure }))).to.deep.equal([
        { name: 'daybook_console', path: '/', httpOnly: true, sameSite: 'Strict', secure: false },
      ]);
      await expectSoundPage(first, 'Today');

      // Pressing the button of the other tab: the link is used up.
      const pressedAgain = await submit(second.page, () => second.page.getByRole('button', { name: 'Sign in' }).click());
      expect(pressedAgain.status()).to.equal(404);
      expect(await heading(second.page)).to.equal('Sign-in link not usable');
      expect(await mainText(second.page)).to.include('This sign-in link cannot be used');
      await expectSoundPage(second, 'a sign-in link pressed a second time', 404);

      // A new visit to the same link shows it cannot be used, with no button.
      const later = await owner.newTab();
      expect((await later.page.goto(link))?.status()).to.equal(404);
      expect(await heading(later.page)).to.equal('Sign-in link not usable');
      expect(await later.page.getByRole('button', { name: 'Sign in' }).count()).to.equal(0);
      await expectSoundPage(later, 'a used sign-in link, visited again', 404);

      // The session the first press started is unharmed by the refused one.
      expect((await first.page.reload())?.status()).to.equal(200);
      expect(await heading(first.page)).to.equal('Today');

      // A link of five minutes: opened in time, pressed after its time, then visited again.
      const shortLink = signInLink(books, 5);
      const late = await owner.newTab();
      expect((await late.page.goto(shortLink))?.status()).to.equal(200);
      app.clock.advanceMs(5 * 60_000 + 1000);
      try {
        const pressedLate = await submit(late.page, () => late.page.getByRole('button', { name: 'Sign in' }).click());
        expect(pressedLate.status()).to.equal(404);
        expect(await mainText(late.page)).to.include('This sign-in link cannot be used');
        await expectSoundPage(late, 'a sign-in link pressed after its time', 404);
        const expired = await owner.newTab();
        expect((await expired.page.goto(shortLink))?.status()).to.equal(404);
        expect(await mainText(expired.page)).to.include('This sign-in link cannot be used');
        expect(await expired.page.getByRole('button', { name: 'Sign in' }).count()).to.equal(0);
        await expectSoundPage(expired, 'a sign-in link visited after its time', 404);
      } finally {
        app.clock.set(NOW);
      }

      // One sign-in came of the two links.
      const sessions = app.db.prepare('SELECT count(*) AS n FROM console_sessions WHERE tenant_id = ?').get(books.tenantId) as { n: number | bigint };
      expect(Number(sessions.n)).to.equal(1);
      expectOnlyOwnRequests(owner);
    } finally {
      await owner.context.close();
    }
  });

  it('creates a read-and-write key whose value works on the API, revokes it after a confirmation (the API then answers 401), and lists both writes in the audit trail under the console', async () => {
    const books = newBooks(app, 'Lantern Print Works');
    const owner = await ownerBrowser();
    try {
      const tab = await owner.newTab();
      const { page } = tab;
      await signIn(tab, books);

      await Promise.all([page.waitForURL(`${origin}/console/keys`), page.getByRole('link', { name: 'API keys' }).click()]);
      expect(await heading(page)).to.equal('API keys');
      await expectSoundPage(tab, 'the keys page');

      await page.getByLabel('Name (what uses the key)').fill('Nightly export');
      await page.getByLabel('Access').selectOption({ label: 'Read and write' });
      const created = await submit(page, () => page.getByRole('button', { name: 'Create key' }).click());
      expect(created.status()).to.equal(201);
      expect(await heading(page)).to.equal('Key created');
      expect(await page.getByRole('status').innerText()).to.equal('Key "Nightly export" created.');
      const value = (await page.locator('#new-key').innerText()).trim();
      expect(value).to.not.equal('');
      // The script shows the copy button beside the value.
      expect(await page.getByRole('button', { name: 'Copy the key' }).isVisible()).to.equal(true);
      await expectSoundPage(tab, 'the key created page', 201);

      const businesses = await app.get('/api/v1/businesses', value);
      expect(businesses.status, businesses.text).to.equal(200);
      expect(businesses.text).to.include('Lantern Print Works');
      const stored = app.db.prepare("SELECT id, access FROM api_keys WHERE tenant_id = ? AND name = 'Nightly export'").get(books.tenantId) as { id: string; access: string };
      expect(stored.access).to.equal('read_write');

      // Shown once: the keys page lists the key, used today, and never its value.
      await Promise.all([page.waitForURL(`${origin}/console/keys`), page.getByRole('link', { name: 'Back to the keys' }).click()]);
      const keyRow = page.locator('tbody tr', { has: page.locator('td', { hasText: /^Nightly export$/ }) });
      expect((await keyRow.locator('td').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())).to.deep.equal(['Nightly export', 'Read and write', 'All businesses', 'Never', TODAY, TODAY, 'Active', 'Revoke Nightly export']);
      expect(await page.content()).to.not.include(value);

      await Promise.all([page.waitForURL(`${origin}/console/keys/${stored.id}/revoke`), page.getByRole('link', { name: 'Revoke Nightly export' }).click()]);
      expect(await heading(page)).to.equal('Revoke a key');
      await expectSoundPage(tab, 'the revoke confirmation');
      const revoked = await submit(page, () => page.getByRole('button', { name: 'Revoke "Nightly export"' }).click());
      expect(revoked.status()).to.equal(303);
      expect(new URL(page.url()).pathname).to.equal('/console/keys');
      expect(await page.getByRole('status').innerText()).to.equal('Key "Nightly export" revoked: it stops working on its next request.');
      expect(await keyRow.locator('td').nth(6).innerText()).to.equal(`Revoked ${TODAY}`);
      await expectSoundPage(tab, 'the keys page after a revoke');

      expect((await app.get('/api/v1/businesses', value)).status).to.equal(401);

      // The audit trail: both writes, made under this console session.
      const session = app.db.prepare('SELECT id FROM console_sessions WHERE tenant_id = ?').get(books.tenantId) as { id: string };
      const who = `Console: console session ${session.id.slice(0, 8)}`;
      await Promise.all([page.waitForURL(`${origin}/console/audit`), page.getByRole('link', { name: 'Audit trail' }).click()]);
      expect(await heading(page)).to.equal('Audit trail');
      const auditRows = () =>
        page.locator('tr[data-audit-id]').evaluateAll((rows) =>
          rows.map((row) => {
            const cells = (row as HTMLTableRowElement).cells;
            return { who: cells[1]!.innerText.trim(), what: cells[2]!.querySelector('code')!.innerText, record: cells[3]!.innerText.trim() };
          }),
        );
      const keyRows = (await auditRows()).filter((row) => row.what.startsWith('api_key.') && row.record === `api_key ${stored.id}`);
      expect(keyRows).to.deep.equal([
        { who, what: 'api_key.revoke', record: `api_key ${stored.id}` },
        { who, what: 'api_key.create', record: `api_key ${stored.id}` },
      ]);
      await expectSoundPage(tab, 'the audit trail');

      // Filtered to the console's writes: the sign-in and the two key writes, newest first.
      await page.getByLabel('Who').selectOption({ label: 'Console' });
      await Promise.all([page.waitForURL((url) => url.pathname === '/console/audit' && url.searchParams.get('who') === 'console'), page.getByRole('button', { name: 'Show' }).click()]);
      expect((await auditRows()).map((row) => [row.who, row.what])).to.deep.equal([
        [who, 'api_key.revoke'],
        [who, 'api_key.create'],
        [who, 'console.sign_in'],
      ]);
      await expectSoundPage(tab, 'the audit trail filtered to the console');
      expectOnlyOwnRequests(owner);
    } finally {
      await owner.context.close();
    }
  });

  it('works through the review queue with the keyboard (j and k move, a accepts), then accepts the confident ones after a confirmation', async () => {
    const books = newBooks(app, 'Corner Bakery');
    const business: Business = getBusiness(app.db, books.businessId);
    const staples = queueReviewItem(app, business, { date: '2026-03-05', amountCents: 4200n, description: 'CARD 4411 STAPLES', proposedAccount: 'Office Supplies', confidence: 0.95 });
    const ride = queueReviewItem(app, business, { date: '2026-03-06', amountCents: 1850n, description: 'UBER TRIP', proposedAccount: 'Travel', confidence: 0.4, rationale: 'A ride.' });
    const software = queueReviewItem(app, business, { date: '2026-03-07', amountCents: 5999n, description: 'ADOBE CREATIVE CLOUD', proposedAccount: 'Software and Subscriptions', confidence: 0.97 });

    async function transactionStatus(transactionId: string): Promise<string> {
      const res = await app.get(`/api/v1/transactions/${transactionId}`, books.key);
      expect(res.status, res.text).to.equal(200);
      return res.body.status as string;
    }

    const owner = await ownerBrowser();
    try {
      const tab = await owner.newTab();
      const { page } = tab;
      await signIn(tab, books);
      await Promise.all([page.waitForURL(`${origin}/console/review`), page.getByRole('link', { name: 'Review queue' }).click()]);
      expect(await heading(page)).to.equal('Review queue');
      const rows = () => page.locator('tr[data-item]').evaluateAll((found) => found.map((row) => row.getAttribute('data-item')));
      // The confident proposals first, then the one that needs a look.
      expect(await rows()).to.deep.equal([staples.itemId, software.itemId, ride.itemId]);
      /** The item the keyboard is on: marked, and holding the focus. */
      const current = () =>
        page.evaluate(() => {
          const marked = [...document.querySelectorAll('tr.current')].map((row) => row.getAttribute('data-item'));
          return { marked, focused: document.activeElement?.getAttribute('data-item') ?? null };
        });
      expect(await current()).to.deep.equal({ marked: [staples.itemId], focused: staples.itemId });
      await expectSoundPage(tab, 'the review queue');

      for (const [key, expected] of [
        ['j', software],
        ['j', ride],
        ['j', ride], // the last item stays current
        ['k', software],
        ['j', ride],
      ] as const) {
        await page.keyboard.press(key);
        expect(await current(), `after ${key}`).to.deep.equal({ marked: [expected.itemId], focused: expected.itemId });
      }
      const acceptedByKey = await submit(page, () => page.keyboard.press('a'));
      expect(acceptedByKey.status()).to.equal(303);
      expect(new URL(page.url()).pathname).to.equal('/console/review');
      expect(await page.getByRole('status').innerText()).to.equal('Accepted: UBER TRIP, $18.50, booked to Travel.');
      expect(await rows()).to.deep.equal([staples.itemId, software.itemId]);
      await expectSoundPage(tab, 'the review queue after an item accepted');

      expect(await transactionStatus(ride.transactionId)).to.equal('accepted');
      expect(await transactionStatus(staples.transactionId)).to.equal('pending');
      expect(await transactionStatus(software.transactionId)).to.equal('pending');

      await Promise.all([page.waitForURL(`${origin}/console/review/accept-confident?business=${books.businessId}`), page.getByRole('button', { name: 'Accept the confident ones together…' }).click()]);
      expect(await heading(page)).to.equal('Accept the confident proposals');
      const listed = await page.locator('tbody tr').evaluateAll((found) => found.map((row) => [...(row as HTMLTableRowElement).cells].map((cell) => cell.innerText.trim())));
      expect(listed).to.deep.equal([
        ['2026-03-05', 'CARD 4411 STAPLES', '$42.00', 'Office Supplies', '95%'],
        ['2026-03-07', 'ADOBE CREATIVE CLOUD', '$59.99', 'Software and Subscriptions', '97%'],
      ]);
      await expectSoundPage(tab, 'the confirmation of the confident ones');

      const acceptedTogether = await submit(page, () => page.getByRole('button', { name: 'Accept these 2 items' }).click());
      expect(acceptedTogether.status()).to.equal(303);
      expect(await page.getByRole('status').innerText()).to.equal('Accepted 2.');
      expect(await mainText(page)).to.include('Nothing waits in the review queue of Corner Bakery.');
      await expectSoundPage(tab, 'the emptied review queue');

      expect(await transactionStatus(staples.transactionId)).to.equal('accepted');
      expect(await transactionStatus(software.transactionId)).to.equal('accepted');
      const reviewed = app.db.prepare("SELECT subject_id, actor_type FROM audit_log WHERE tenant_id = ? AND action = 'review.accept' ORDER BY id").all(books.tenantId);
      expect(reviewed).to.deep.equal([
        { subject_id: ride.itemId, actor_type: 'console' },
        { subject_id: staples.itemId, actor_type: 'console' },
        { subject_id: software.itemId, actor_type: 'console' },
      ]);
      expectOnlyOwnRequests(owner);
    } finally {
      await owner.context.close();
    }
  });

  it('refuses a key form posted from another origin or another site, and one without its token, writing nothing', async () => {
    const books = newBooks(app, 'Willow Joinery');
    const keyCount = () => Number((app.db.prepare('SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?').get(books.tenantId) as { n: number | bigint }).n);
    const consoleKeyWrites = () =>
      Number((app.db.prepare("SELECT count(*) AS n FROM audit_log WHERE tenant_id = ? AND actor_type = 'console' AND action LIKE 'api_key.%'").get(books.tenantId) as { n: number | bigint }).n);
    // The browser reaches the other site only through the loopback stand-in; the console's own address never goes through it.
    const owner = await ownerBrowser({ proxy: { server: foreign.origin, bypass: '127.0.0.1' } });
    try {
      const tab = await owner.newTab();
      const { page } = tab;
      await signIn(tab, books);
      const keysBefore = keyCount();
      const [cookie] = await owner.context.cookies(origin);
      // The hostile page is given the session's real form token: only where the form comes from can refuse it.
      const token = csrfToken(cookie!.value);
      const forged = (at: string, name: string) => `${at}/forge?${new URLSearchParams({ _csrf: token, name }).toString()}`;
      const posted = () => page.waitForResponse((response) => response.url() === `${origin}/console/keys` && response.request().method() === 'POST');

      // Another port of this machine: the same site, so the browser sends the cookie; the console refuses the form.
      const [sameSite] = await Promise.all([posted(), page.goto(forged(foreign.origin, 'Forged from another origin'), { waitUntil: 'commit' })]);
      await page.waitForURL(`${origin}/console/keys`);
      expect((await sameSite.request().allHeaders()).cookie ?? '').to.include(`daybook_console=${cookie!.value}`);
      expect(sameSite.status()).to.equal(403);
      expect(await heading(page)).to.equal('Refused');
      await expectSoundPage(tab, 'the refusal of a form from another origin', 403);

      // Another site: SameSite=Strict keeps the cookie off the request, so the console sees no one signed in.
      const [crossSite] = await Promise.all([posted(), page.goto(forged(CROSS_SITE_ORIGIN, 'Forged from another site'), { waitUntil: 'commit' })]);
      await page.waitForURL(`${origin}/console/keys`);
      expect((await crossSite.request().allHeaders()).cookie).to.equal(undefined);
      expect(crossSite.status()).to.equal(401);
      expect(await heading(page)).to.equal('Signed out');
      await expectSoundPage(tab, 'the answer to a form from another site', 401);

      // The console's own form with its token taken out.
      expect((await page.goto(`${origin}/console/keys`))?.status(), 'still signed in').to.equal(200);
      await page.getByLabel('Name (what uses the key)').fill('Without its token');
      const removed = await page.evaluate(() => {
        const inputs = document.querySelectorAll('form[action="/console/keys"] input[name="_csrf"]');
        inputs.forEach((input) => input.remove());
        return inputs.length;
      });
      expect(removed).to.equal(1);
      const tokenless = await submit(page, () => page.getByRole('button', { name: 'Create key' }).click());
      expect(tokenless.status()).to.equal(403);
      expect(await heading(page)).to.equal('Refused');
      await expectSoundPage(tab, 'the refusal of a form without its token', 403);

      expect(keyCount(), 'no key was created').to.equal(keysBefore);
      expect(consoleKeyWrites(), 'no key write in the audit trail').to.equal(0);
      expect((await page.goto(`${origin}/console/keys`))?.status()).to.equal(200);
      const listedKeys = await page.locator('tbody td:first-child').allInnerTexts();
      for (const name of ['Forged from another origin', 'Forged from another site', 'Without its token']) expect(listedKeys).to.not.include(name);

      // The only requests off the console's origin: the two hostile pages (and the browser's icon requests there).
      const elsewhere = owner.requests.filter((url) => new URL(url).origin !== origin).map((url) => `${new URL(url).origin}${new URL(url).pathname}`);
      expect([...new Set(elsewhere)].filter((url) => !url.endsWith('/favicon.ico'))).to.deep.equal([`${foreign.origin}/forge`, `${CROSS_SITE_ORIGIN}/forge`]);
      expectOnlyOwnRequests(owner, [foreign.origin, CROSS_SITE_ORIGIN]);
    } finally {
      await owner.context.close();
    }
  });
});
