import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { setRate } from '../../src/books/fx.js';
import { voidInvoice } from '../../src/books/invoice-posting.js';
import { inTransaction } from '../../src/db/connection.js';
import type { TestApp, TestResponse } from '../support/app.js';
import { expectError, useAppAt, withoutRequestId } from '../support/api.js';
import { TEST_ACTOR } from '../support/factories.js';
import { type Books, getInvoice, issueInvoice, newBooks, payInvoice } from '../support/invoicing.js';

/**
 * The customer's pay page, GET {payUrl}: no key, the link is the key. It shows the invoice as
 * plain HTML under a strict Content-Security-Policy, marks a sent invoice viewed the first time
 * it opens, and answers every link that leads nowhere with one 404 page that tells nothing.
 */

const START = '2026-03-15T12:00:00.000Z';
const HOSTILE = '<script>alert(1)</script> &amp;';
const HOSTILE_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp;';

let counter = 0;

async function statusOf(app: TestApp, books: Books, invoiceId: string): Promise<string> {
  return (await getInvoice(app, books.key, invoiceId)).status;
}

function viewAudits(app: TestApp, invoiceId: string): { actor_type: string; actor_name: string; at: string; business_id: string }[] {
  return app.db
    .prepare("SELECT actor_type, actor_name, at, business_id FROM audit_log WHERE action = 'invoice.view' AND subject_id = ? ORDER BY id")
    .all(invoiceId) as { actor_type: string; actor_name: string; at: string; business_id: string }[];
}

const SECURITY_HEADERS = ['content-security-policy', 'x-content-type-options', 'referrer-policy', 'cache-control', 'x-frame-options'] as const;

/** The page headers every pay-page answer carries, 200 or 404. */
function expectPageHeaders(res: TestResponse): void {
  expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
  expect(res.headers['x-content-type-options']).to.equal('nosniff');
  expect(res.headers['referrer-policy']).to.equal('no-referrer');
  expect(res.headers['cache-control']).to.equal('no-store');
  expect(res.headers['x-frame-options']).to.equal('DENY');
  expect(res.headers['set-cookie'], 'no cookie').to.equal(undefined);
  const csp = cspDirectives(String(res.headers['content-security-policy']));
  expect(csp.get('default-src')).to.deep.equal(["'none'"]);
  const styles = [...res.text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1]!);
  expect(styles, 'one inline stylesheet').to.have.lengthOf(1);
  const hash = createHash('sha256').update(styles[0]!, 'utf8').digest('base64');
  expect(csp.get('style-src'), 'style-src allows only the page’s own <style>, by its hash').to.deep.equal([`'sha256-${hash}'`]);
  for (const [directive, sources] of csp) {
    if (directive !== 'style-src') expect(sources, directive).to.deep.equal(["'none'"]);
  }
  expect(csp.has('script-src'), 'scripts fall back to default-src none').to.equal(false);
  expect(csp.get('frame-ancestors')).to.deep.equal(["'none'"]);
  expect(csp.get('form-action')).to.deep.equal(["'none'"]);
}

function cspDirectives(header: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of header.split(';').map((p) => p.trim()).filter((p) => p !== '')) {
    const [name, ...sources] = part.split(/\s+/);
    expect(directives.has(name!), `directive ${name} given once`).to.equal(false);
    directives.set(name!.toLowerCase(), sources);
  }
  return directives;
}

/** The one link a pay page holds: its own PDF, relative to the page, so on the same server. */
const PDF_LINK = /<a href="[A-Za-z0-9_-]{43}\/invoice\.pdf">Download PDF<\/a>/g;

/** No script, no form, nothing fetched from anywhere; no link but the PDF's. */
function expectSelfContained(page: string): void {
  const html = page.replace(PDF_LINK, '');
  expect(html).to.not.match(/<script/i);
  expect(html).to.not.match(/<(link|img|iframe|frame|object|embed|form|base|input|button|svg|video|audio|source)\b/i);
  expect(html).to.not.match(/\s(src|href|action|srcset|formaction|style)\s*=/i);
  expect(html).to.not.match(/url\(|@import|http-equiv/i);
  expect(html).to.not.include('://');
}

/** What a reader sees: the body's text, tags dropped, entities decoded, white space collapsed. */
function visibleText(html: string): string {
  const body = html.slice(html.indexOf('<body>'));
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

describe('GET /pay/{token} (the pay page, no key)', () => {
  let app: TestApp;
  useAppAt(START, (started) => (app = started));

  describe('a sent invoice', () => {
    it('answers 200 text/html with the security headers; the CSP allows only the page’s own stylesheet, by its hash', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      expectPageHeaders(res);
      expectSelfContained(res.text);
      expect(res.headers['access-control-allow-origin']).to.equal(undefined);
    });

    it('links to the invoice’s PDF: "Download PDF", relative to the page, leading to /pay/{token}/invoice.pdf', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      const hrefs = [...res.text.matchAll(/<a href="([^"]*)">Download PDF<\/a>/g)].map((match) => match[1]!);
      expect(hrefs).to.deep.equal([`${invoice.token}/invoice.pdf`]);
      expect(new URL(hrefs[0]!, `${app.url}${invoice.payPath}`).pathname).to.equal(`${invoice.payPath}/invoice.pdf`);
      const download = await fetch(new URL(hrefs[0]!, `${app.url}${invoice.payPath}`));
      expect(download.status).to.equal(200);
      expect(download.headers.get('content-type')).to.equal('application/pdf');
    });

    it('shows the business, number, customer, lines, totals and balance due in the invoice’s currency', async () => {
      const books = newBooks(app);
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.08' });
      const invoice = await issueInvoice(app, books, {
        customer: { name: 'Marta Kowalski' },
        currency: 'EUR',
        taxRatePercent: '10',
        lines: [
          { description: 'Design work', quantity: '10', unitPriceCents: '12000' },
          { description: 'Hosting', quantity: '1.5', unitPriceCents: '5000' },
        ],
      });

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      const shown = visibleText(res.text);
      expect(shown).to.include(books.businessName);
      expect(shown).to.include(`Invoice ${invoice.number}`);
      expect(shown).to.include('For Marta Kowalski');
      expect(shown).to.include('issued 2026-03-15');
      expect(shown).to.include('due 2026-04-14');
      expect(shown).to.include('Design work 10 €120.00 €1,200.00');
      expect(shown).to.include('Hosting 1.5 €50.00 €75.00');
      expect(shown).to.include('Subtotal €1,275.00 Tax €127.50 Total €1,402.50 Paid €0.00 Balance €1,402.50');
      expect(shown).to.include('Amount due: €1,402.50 by 2026-04-14');
      expect(shown).to.not.include('$');
      expect(res.text).to.include(`<title>Invoice ${invoice.number} from ${books.businessName}</title>`);
    });

    it('escapes every stored text: a line description, the memo, and the business and customer names', async () => {
      const businessName = `Acme <b>&"' Ltd ${++counter}`;
      const books = newBooks(app, businessName);
      const invoice = await issueInvoice(app, books, {
        customer: { name: `Jo <b>&"' Customer` },
        memo: `Memo ${HOSTILE}`,
        lines: [{ description: `Line ${HOSTILE}`, quantity: '1', unitPriceCents: '1000' }],
      });

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      expectSelfContained(res.text);
      expect(res.text).to.include(`Line ${HOSTILE_ESCAPED}`);
      expect(res.text).to.include(`Memo ${HOSTILE_ESCAPED}`);
      expect(res.text).to.include('Acme &lt;b&gt;&amp;&quot;&#39; Ltd');
      expect(res.text).to.include('Jo &lt;b&gt;&amp;&quot;&#39; Customer');
      expect(res.text).to.not.include('<b>');
      expect(res.text).to.not.include(`&"'`);
      const shown = visibleText(res.text);
      expect(shown).to.include(`Line ${HOSTILE}`);
      expect(shown).to.include(`Memo ${HOSTILE}`);
    });
  });

  describe('marking viewed', () => {
    it('the first open marks a sent invoice viewed, with one invoice.view audit row; later opens change nothing', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      expect(await statusOf(app, books, invoice.id)).to.equal('sent');
      expect(viewAudits(app, invoice.id)).to.deep.equal([]);

      app.clock.set('2026-03-16T08:00:00.000Z');
      const first = await app.get(invoice.payPath, null);

      expect(first.status).to.equal(200);
      expect(await statusOf(app, books, invoice.id)).to.equal('viewed');
      expect(viewAudits(app, invoice.id)).to.deep.equal([
        { actor_type: 'pay_page', actor_name: 'pay page', at: '2026-03-16T08:00:00.000Z', business_id: books.businessId },
      ]);
      const viewedAt = () => (app.db.prepare('SELECT viewed_at FROM invoices WHERE id = ?').get(invoice.id) as { viewed_at: string }).viewed_at;
      expect(viewedAt()).to.equal('2026-03-16T08:00:00.000Z');

      app.clock.set('2026-03-17T09:00:00.000Z');
      const second = await app.get(invoice.payPath, null);
      const third = await app.get(invoice.payPath, null);

      expect(second.status).to.equal(200);
      expect(second.text).to.equal(first.text);
      expect(third.text).to.equal(first.text);
      expect(await statusOf(app, books, invoice.id)).to.equal('viewed');
      expect(viewAudits(app, invoice.id)).to.have.lengthOf(1);
      expect(viewedAt(), 'the first view is kept').to.equal('2026-03-16T08:00:00.000Z');
    });

    it('opening a partially paid invoice keeps its status and shows what was paid and what is left', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      const paid = await app.post(`/api/v1/invoices/${invoice.id}/payments`, books.key, { amountCents: '40000', method: 'wire' });
      expect(paid.status, paid.text).to.equal(201);
      expect(paid.body.status).to.equal('partially_paid');

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      expect(await statusOf(app, books, invoice.id)).to.equal('partially_paid');
      expect(viewAudits(app, invoice.id)).to.deep.equal([]);
      const shown = visibleText(res.text);
      expect(shown).to.include('Total $1,000.00 Paid $400.00 Balance $600.00');
      expect(shown).to.include('Amount due: $600.00 by 2026-04-14');
      expect(shown).to.include('$400.00 received on 2026-03-15 (wire)');
    });

    it('opening a paid invoice keeps it paid and says it is paid in full', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      await payInvoice(app, books.key, invoice.id, '100000');
      expect(await statusOf(app, books, invoice.id)).to.equal('paid');

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      expectPageHeaders(res);
      expect(await statusOf(app, books, invoice.id)).to.equal('paid');
      expect(viewAudits(app, invoice.id)).to.deep.equal([]);
      const shown = visibleText(res.text);
      expect(shown).to.include('This invoice is paid in full.');
      expect(shown).to.include('Balance $0.00');
      expect(shown).to.not.include('Amount due');
    });

    it('opening an overdue invoice keeps it overdue', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      app.clock.set('2026-04-20T12:00:00.000Z');
      // As the overdue sweep leaves it (the status alone moves; nothing is posted).
      app.db.prepare("UPDATE invoices SET status = 'overdue' WHERE id = ?").run(invoice.id);
      expect(await statusOf(app, books, invoice.id)).to.equal('overdue');

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      expect(await statusOf(app, books, invoice.id)).to.equal('overdue');
      expect(visibleText(res.text)).to.include('Amount due: $1,000.00 by 2026-04-14');
    });

    it('a void invoice’s page says it was voided and owes nothing; opening it changes nothing', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, invoice.id));

      const res = await app.get(invoice.payPath, null);

      expect(res.status).to.equal(200);
      expectPageHeaders(res);
      expect(await statusOf(app, books, invoice.id)).to.equal('void');
      expect(viewAudits(app, invoice.id)).to.deep.equal([]);
      const shown = visibleText(res.text);
      expect(shown).to.include('This invoice was voided. Nothing is owed on it.');
      expect(shown).to.not.include('Amount due');
      // The balance the API gives a void invoice, not its total.
      expect((await app.get(`/api/v1/invoices/${invoice.id}`, books.key)).body.balance.cents).to.equal('0');
      expect(shown).to.match(/Balance\s*\$0\.00/);
    });
  });

  describe('links that lead nowhere', () => {
    it('a draft’s link, an unknown token, malformed tokens and a token with one character changed all get the same 404 page, revealing nothing', async () => {
      const businessName = `Secretive Holdings ${++counter}`;
      const books = newBooks(app, businessName);
      const draft = await issueInvoice(app, books, { draft: true, customer: { name: 'Hidden Customer' } });
      const sent = await issueInvoice(app, books, { customer: { name: 'Other Customer' } });
      const flipped = (sent.token[0] === 'A' ? 'B' : 'A') + sent.token.slice(1);
      const paths = {
        draft: draft.payPath,
        unknown: `/pay/${randomBytes(32).toString('base64url')}`,
        tooShort: '/pay/abc',
        tooLong: `${sent.payPath}A`,
        badCharacter: `/pay/${sent.token.slice(0, 42)}.`,
        percentEncoded: `/pay/${encodeURIComponent('<script>alert(1)</script>')}`,
        oneCharacterChanged: `/pay/${flipped}`,
      };
      expect(paths.unknown.length).to.equal(paths.draft.length);

      const answers: Record<string, TestResponse> = {};
      for (const [name, path] of Object.entries(paths)) answers[name] = await app.get(path, null);

      const reference = answers.unknown!;
      expect(reference.status).to.equal(404);
      expectPageHeaders(reference);
      expectSelfContained(reference.text);
      for (const [name, res] of Object.entries(answers)) {
        expect(res.status, name).to.equal(404);
        expect(res.text, `${name}: the same bytes`).to.equal(reference.text);
        for (const header of SECURITY_HEADERS) expect(res.headers[header], `${name}: ${header}`).to.equal(reference.headers[header]);
        expect(res.headers['content-type'], name).to.equal('text/html; charset=utf-8');
        for (const secret of [draft.number, sent.number, 'INV-', businessName, 'Hidden Customer', 'Other Customer', draft.token, sent.token]) {
          expect(res.text, `${name} must not show ${secret}`).to.not.include(secret);
        }
      }
      expect(visibleText(reference.text)).to.equal('Not found There is no page at this address.');

      expect(await statusOf(app, books, draft.id), 'the draft stays a draft').to.equal('draft');
      expect(await statusOf(app, books, sent.id), 'the near-miss token marks nothing').to.equal('sent');
      expect(viewAudits(app, draft.id)).to.deep.equal([]);
      expect(viewAudits(app, sent.id)).to.deep.equal([]);
    });
  });

  describe('methods other than GET', () => {
    it('POST, PUT, PATCH and DELETE on a pay link answer the JSON 404 not_found of an unknown path (HEAD a bare 404), and mark nothing viewed', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      const unknownPath = await app.request('POST', '/nowhere-at-all');
      expectError(unknownPath, 404, 'not_found');

      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const res = await app.request(method, invoice.payPath, { body: {} });
        expectError(res, 404, 'not_found');
        expect(withoutRequestId(res), method).to.equal(withoutRequestId(unknownPath));
        expect(res.headers['content-security-policy'], `${method}: not the page`).to.equal(undefined);
      }
      const head = await app.request('HEAD', invoice.payPath);
      expect(head.status).to.equal(404);
      expect(head.text).to.equal('');

      expect(await statusOf(app, books, invoice.id)).to.equal('sent');
      expect(viewAudits(app, invoice.id)).to.deep.equal([]);
    });
  });
});
