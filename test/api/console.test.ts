import { expect } from 'chai';
import { inTransaction } from '../../src/db/connection.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { createSignInLink, csrfToken } from '../../src/store/console-sessions.js';
import { createLogger } from '../../src/log.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { type Books, newBooks } from '../support/invoicing.js';

/**
 * The owner's console over HTTP (issue: the owner's console): a one-time sign-in link starts a
 * session whose cookie is HttpOnly, SameSite=Strict and never read by the API; every form
 * carries the session's CSRF token and a cross-site post is refused; keys are created (the value
 * shown once) and revoked through the write door, under the console's actor.
 */

const NOW = '2026-03-16T08:00:00.000Z';

describe('the owner’s console: signing in, keys, and what protects them', () => {
  let app: TestApp;
  const logged: string[] = [];
  before(async () => {
    app = await startTestApp(NOW, { log: createLogger('info', { write: (line: string) => void logged.push(line) }) });
  });
  after(() => app.close());

  function link(books: Books, minutes = 15): string {
    return inTransaction(app.db, () => createSignInLink(app.db, app.clock, CLI_ACTOR, books.tenantId, minutes)).token;
  }

  const form = (fields: Record<string, string | string[]>) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) params.append(name, one);
    return params.toString();
  };

  function post(path: string, cookie: string | null, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<TestResponse> {
    return app.request('POST', path, {
      rawBody: form(fields),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    });
  }

  /** Signs in with a fresh link: the cookie to send back, and the session's CSRF token. */
  async function signIn(books: Books): Promise<{ cookie: string; csrf: string }> {
    const token = link(books);
    const res = await post(`/console/sign-in/${token}`, null, {});
    expect(res.status).to.equal(303);
    const setCookie = [res.headers['set-cookie']].flat()[0]!;
    const cookie = setCookie.split(';')[0]!;
    return { cookie, csrf: csrfToken(cookie.split('=')[1]!) };
  }

  it('shows a sign-in button without using the link, and signs in once when it is pressed', async () => {
    const books = newBooks(app);
    const token = link(books);
    const shown = await app.get(`/console/sign-in/${token}`);
    expect(shown.status).to.equal(200);
    expect(shown.text).to.contain('<button type="submit">Sign in</button>');
    expect(shown.headers['set-cookie']).to.equal(undefined);
    // Opening it again (a mail scanner, a preview) changes nothing.
    expect((await app.get(`/console/sign-in/${token}`)).status).to.equal(200);

    const signedIn = await post(`/console/sign-in/${token}`, null, {});
    expect(signedIn.status).to.equal(303);
    expect(signedIn.headers.location).to.equal('/console/today');
    const setCookie = [signedIn.headers['set-cookie']].flat()[0]!;
    expect(setCookie).to.match(/^daybook_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800$/);

    // The access log names the route, never the token or the session's id.
    const secret = setCookie.split(';')[0]!.split('=')[1]!;
    const lines = logged.filter((line) => line.includes('/console/sign-in'));
    expect(lines.length).to.be.greaterThan(0);
    for (const line of logged) expect(line).to.not.contain(token).and.not.contain(secret);
    expect(lines.some((line) => line.includes('"route":"/console/sign-in/:token"'))).to.equal(true);
    const again = await post(`/console/sign-in/${token}`, null, {});
    expect(again.status).to.equal(404);
    expect(again.headers['set-cookie']).to.equal(undefined);
    expect((await app.get(`/console/sign-in/${token}`)).status).to.equal(404);
    const audit = app.db.prepare("SELECT action, actor_type FROM audit_log WHERE tenant_id = ? AND action LIKE 'console.%' ORDER BY id").all(books.tenantId);
    expect(audit).to.deep.equal([
      { action: 'console.link', actor_type: 'cli' },
      { action: 'console.sign_in', actor_type: 'console' },
    ]);
  });

  it('refuses an expired link, and stores neither the link nor the session in the clear', async () => {
    const books = newBooks(app);
    const token = link(books, 1);
    app.clock.advanceMs(61_000);
    try {
      expect((await post(`/console/sign-in/${token}`, null, {})).status).to.equal(404);
    } finally {
      app.clock.set(NOW);
    }
    const { cookie } = await signIn(books);
    const secret = cookie.split('=')[1]!;
    const stored = JSON.stringify([app.db.prepare('SELECT * FROM console_sign_in_links').all(), app.db.prepare('SELECT * FROM console_sessions').all()]);
    expect(stored).to.not.contain(token);
    expect(stored).to.not.contain(secret);
  });

  it('creates a key that works on the API, shown once, and revokes it after a confirmation', async () => {
    const books = newBooks(app);
    const { cookie, csrf } = await signIn(books);
    const keys = await app.request('GET', '/console/keys', { headers: { cookie } });
    expect(keys.status).to.equal(200);
    expect(keys.headers['content-security-policy']).to.contain("default-src 'none'");

    const created = await post('/console/keys', cookie, { _csrf: csrf, name: 'nightly export', access: 'read' });
    expect(created.status).to.equal(201);
    expect(created.headers['cache-control']).to.equal('no-store');
    const value = /<p class="secret" id="new-key">([^<]+)<\/p>/.exec(created.text)![1]!;
    expect((await app.get('/api/v1/businesses', value)).status).to.equal(200);
    // Shown once: the keys page never shows a value again; it shows the day the key was last used.
    const listed = await app.request('GET', '/console/keys', { headers: { cookie } });
    expect(listed.text).to.not.contain(value);
    expect(listed.text).to.match(/<td>nightly export<\/td><td>Read only<\/td><td>All businesses<\/td><td>Never<\/td><td>2026-03-16<\/td><td>2026-03-16<\/td><td>Active<\/td>/);

    const keyId = (app.db.prepare("SELECT id FROM api_keys WHERE tenant_id = ? AND name = 'nightly export'").get(books.tenantId) as { id: string }).id;
    const confirm = await app.request('GET', `/console/keys/${keyId}/revoke`, { headers: { cookie } });
    expect(confirm.text).to.contain('Revoke "nightly export"');
    const revoked = await post(`/console/keys/${keyId}/revoke`, cookie, { _csrf: csrf });
    expect(revoked.status).to.equal(303);
    expect((await app.get('/api/v1/businesses', value)).status).to.equal(401);
    const audit = app.db.prepare("SELECT action, actor_type, actor_id FROM audit_log WHERE tenant_id = ? AND action LIKE 'api_key.%' ORDER BY id").all(books.tenantId) as {
      actor_type: string;
    }[];
    expect(audit.map((row) => row.actor_type)).to.deep.equal(['cli', 'console', 'console']);
  });

  it('refuses a form without the session’s CSRF token, or posted from another site, and writes nothing', async () => {
    const books = newBooks(app);
    const { cookie, csrf } = await signIn(books);
    const count = () => app.db.prepare('SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?').get(books.tenantId);
    const before = count();
    for (const [what, res] of [
      ['no token', await post('/console/keys', cookie, { name: 'a', access: 'read' })],
      ['another token', await post('/console/keys', cookie, { _csrf: csrfToken('x'.repeat(43)), name: 'b', access: 'read' })],
      ['cross-site', await post('/console/keys', cookie, { _csrf: csrf, name: 'c', access: 'read' }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })],
      ['same site, another origin', await post('/console/keys', cookie, { _csrf: csrf, name: 'd', access: 'read' }, { 'sec-fetch-site': 'same-site' })],
      ['an opaque origin, nothing else said', await post('/console/keys', cookie, { _csrf: csrf, name: 'e', access: 'read' }, { origin: 'null' })],
    ] as const) {
      expect(res.status, what).to.equal(403);
    }
    expect(count()).to.deep.equal(before);
    // What a browser sends from the console's own form: Sec-Fetch-Site decides.
    const own = await post('/console/keys', cookie, { _csrf: csrf, name: 'from the page', access: 'read' }, { origin: `http://${new URL(app.url).host}`, 'sec-fetch-site': 'same-origin' });
    expect(own.status).to.equal(201);
  });

  it('never lets the API read the console’s cookie: a request with it and no key is the same 401', async () => {
    const books = newBooks(app);
    const { cookie } = await signIn(books);
    const withCookie = await app.request('GET', '/api/v1/businesses', { headers: { cookie } });
    const without = await app.request('GET', '/api/v1/businesses');
    expect(withCookie.status).to.equal(401);
    expect({ ...withCookie.body, error: { ...withCookie.body.error, requestId: null } }).to.deep.equal({ ...without.body, error: { ...without.body.error, requestId: null } });
  });

  it('signs out: the cookie no longer signs in', async () => {
    const books = newBooks(app);
    const { cookie, csrf } = await signIn(books);
    const out = await post('/console/sign-out', cookie, { _csrf: csrf });
    expect(out.status).to.equal(303);
    expect([out.headers['set-cookie']].flat()[0]).to.match(/^daybook_console=; .*Max-Age=0/);
    expect((await app.request('GET', '/console/keys', { headers: { cookie } })).status).to.equal(401);
  });

  it('ends a session after 12 hours without a request', async () => {
    const books = newBooks(app);
    const { cookie } = await signIn(books);
    app.clock.advanceMs(12 * 60 * 60 * 1000 + 1000);
    try {
      expect((await app.request('GET', '/console/keys', { headers: { cookie } })).status).to.equal(401);
    } finally {
      app.clock.set(NOW);
    }
  });

  it('limits sign-in attempts per client address: past 30 in the window, 429', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 31; attempt += 1) {
      statuses.push((await app.request('GET', `/console/sign-in/${'A'.repeat(43)}`, { localAddress: '127.0.0.77' })).status);
    }
    expect(statuses.slice(0, 30).every((status) => status === 404)).to.equal(true);
    expect(statuses[30]).to.equal(429);
    // Another address is not held back.
    expect((await app.request('GET', `/console/sign-in/${'A'.repeat(43)}`, { localAddress: '127.0.0.78' })).status).to.equal(404);
  });

  it('over https (behind a trusted proxy) sets a Secure, __Host- cookie, and reads only that one', async () => {
    const proxied = await startTestApp(NOW, { config: { trustProxy: ['127.0.0.1'] } });
    try {
      const books = newBooks(proxied);
      const token = inTransaction(proxied.db, () => createSignInLink(proxied.db, proxied.clock, CLI_ACTOR, books.tenantId, 15)).token;
      const https = { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https' };
      const res = await proxied.request('POST', `/console/sign-in/${token}`, { rawBody: '', headers: { 'content-type': 'application/x-www-form-urlencoded', ...https } });
      expect(res.status).to.equal(303);
      const setCookie = [res.headers['set-cookie']].flat()[0]!;
      expect(setCookie).to.match(/^__Host-daybook_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800; Secure$/);
      const secret = setCookie.split(';')[0]!.split('=')[1]!;
      expect((await proxied.request('GET', '/console/keys', { headers: { cookie: `__Host-daybook_console=${secret}`, ...https } })).status).to.equal(200);
      // The same value under the plain name is not the https cookie.
      expect((await proxied.request('GET', '/console/keys', { headers: { cookie: `daybook_console=${secret}`, ...https } })).status).to.equal(401);
    } finally {
      await proxied.close();
    }
  });

  it('answers a page while another process holds the books: marking the session used is skipped, not waited for', async () => {
    const books = newBooks(app);
    const { cookie } = await signIn(books);
    app.clock.advanceMs(2 * 60 * 1000);
    // The test's own connection plays the other process (a backup, an import) holding the write lock.
    app.db.exec('BEGIN IMMEDIATE');
    try {
      const keys = await app.request('GET', '/console/keys', { headers: { cookie } });
      expect(keys.status).to.equal(200);
    } finally {
      app.db.exec('ROLLBACK');
      app.clock.set(NOW);
    }
  });
});
