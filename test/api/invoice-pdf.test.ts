import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { setRate } from '../../src/books/fx.js';
import type { TestApp } from '../support/app.js';
import { expectError, useAppAt, withoutRequestId } from '../support/api.js';
import { getInvoice, type InvoiceDetail, type IssuedInvoice, issueInvoice, type Money, newBooks, payInvoice } from '../support/invoicing.js';
import { expectEmbeddedFontsOnly, type ReadPdf, readPdf } from '../support/pdf.js';

/**
 * GET /pay/{token}/invoice.pdf: the invoice as a PDF, under the pay page's rules (no key, the
 * link is the key; a link that leads nowhere gets the page's own 404). What it says is read
 * back from the file (pdf.js, through unpdf) and checked against GET /invoices/{id}, figure by
 * figure.
 */

const START = '2026-03-15T12:00:00.000Z';

interface Download {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

async function download(app: TestApp, path: string): Promise<Download> {
  const res = await fetch(`${app.url}${path}`);
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function invoicePdf(app: TestApp, invoice: IssuedInvoice): Promise<{ bytes: Uint8Array; pdf: ReadPdf }> {
  const res = await download(app, `${invoice.payPath}/invoice.pdf`);
  expect(res.status).to.equal(200);
  return { bytes: res.bytes, pdf: await readPdf(res.bytes) };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Every fact and figure of the detail, each where it belongs in the PDF's reading order: a
 * figure beside its label or in its line's row, never just somewhere in the file.
 */
function expectPdfShowsDetail(pdf: ReadPdf, detail: InvoiceDetail, businessName: string): void {
  expect(pdf.text).to.include(`${businessName} Invoice ${detail.number}`);
  expect(pdf.text).to.include(`Bill to ${detail.customer.name}`);
  const terms = detail.terms === null ? '' : ` Terms ${detail.terms}`;
  expect(pdf.text).to.include(`Invoice number ${detail.number} Issue date ${detail.issueDate} Due date ${detail.dueDate}${terms} Currency ${detail.currency}`);
  for (const [index, line] of detail.lines.entries()) {
    expect(pdf.text, `line ${index}`).to.include(`${line.description} ${line.quantity} ${line.unitPrice.formatted} ${line.amount.formatted}`);
  }
  const money = (label: string, amount: Money) => `${label} ${escapeRegExp(amount.formatted)}`;
  const totals = [money('Subtotal', detail.subtotal), money('Tax(?: \\([0-9.]+%\\))?', detail.tax), money('Total', detail.total), money('Paid', detail.paid), money('Balance due', detail.balance)];
  expect(pdf.text).to.match(new RegExp(totals.join(' ')));
  for (const payment of detail.payments) expect(pdf.text).to.include(`${payment.amount.formatted} received on ${payment.paidAt} (${payment.method})`);
  if (detail.memo !== null) expect(pdf.text).to.include(`Note ${detail.memo}`);
  expect(pdf.text).to.include(`Pay online ${detail.payUrl}`);
  expect(pdf.links, 'the pay link is a link').to.deep.equal([detail.payUrl]);
  for (const amount of [detail.subtotal, detail.tax, detail.total, detail.paid, detail.balance]) expect(amount.currency).to.equal(detail.currency);
}

const PAGE_HEADERS = ['content-security-policy', 'x-content-type-options', 'referrer-policy', 'cache-control', 'x-frame-options'] as const;

describe('GET /pay/{token}/invoice.pdf (the invoice as a PDF, no key)', () => {
  let app: TestApp;
  useAppAt(START, (started) => (app = started));

  describe('what it says', () => {
    it('a USD invoice: every fact and figure of GET /invoices/{id}, the customer’s address, a long description whole, on Letter paper', async () => {
      const books = newBooks(app);
      const longDescription = Array.from({ length: 90 }, (_, index) => `task${index + 1}`).join(' ');
      const invoice = await issueInvoice(app, books, {
        customer: { name: 'Acme Corp', addressLine1: '12 Main Street', city: 'Springfield', state: 'IL', postalCode: '62704' },
        memo: 'Thank you for your business.',
        lines: [
          { description: 'Strategy workshop', quantity: '3', unitPriceCents: '150000' },
          { description: longDescription, quantity: '12.5', unitPriceCents: '9999' },
        ],
      });
      const detail = await getInvoice(app, books.key, invoice.id);
      expect(detail.total.formatted, 'the figures checked below').to.equal('$5,749.88');

      const { bytes, pdf } = await invoicePdf(app, invoice);

      expectPdfShowsDetail(pdf, detail, books.businessName);
      expect(pdf.text).to.include('Bill to Acme Corp 12 Main Street Springfield, IL 62704');
      expect(pdf.text).to.include('Subtotal $5,749.88 Tax $0.00 Total $5,749.88 Paid $0.00 Balance due $5,749.88');
      expect(pdf.text, 'the long description whole, in order, then its figures').to.include(`${longDescription} 12.5 $99.99 $1,249.88`);
      const runs = pdf.items[0]!.filter((item) => /task\d/.test(item.str));
      expect(new Set(runs.map((item) => Math.round(item.y))).size, 'the description wraps over several lines').to.be.greaterThan(2);
      for (const run of runs) expect(run.x + run.width, `"${run.str}" inside the right margin`).to.be.at.most(612 - 54);
      expect(pdf.pageSizes).to.deep.equal([{ width: 612, height: 792 }]);
      expectEmbeddedFontsOnly(bytes);
    });

    it('a EUR invoice with tax and a partial payment: every figure as GET /invoices/{id} gives it, in euros, on A4 paper', async () => {
      const books = newBooks(app);
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.08' });
      const invoice = await issueInvoice(app, books, {
        customer: { name: 'Łódź Studio Sp. z o.o.' },
        currency: 'EUR',
        taxRatePercent: '10',
        memo: 'Zahlung bitte innerhalb von 30 Tagen. Merci beaucoup, à bientôt.',
        lines: [
          { description: 'Design work', quantity: '10', unitPriceCents: '12000' },
          { description: 'Hosting (café server)', quantity: '1.5', unitPriceCents: '5000' },
        ],
      });
      // Downloaded before the payment: rendered PDFs are kept, and the payment must not find this one.
      const unpaid = await invoicePdf(app, invoice);
      expect(unpaid.pdf.text).to.include('Balance due €1,402.50');
      app.clock.set('2026-03-20T10:00:00.000Z');
      // A payment converts at a rate of its own date (or a few days older).
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-20', usdPerUnit: '1.08' });
      await payInvoice(app, books.key, invoice.id, '40000', '2026-03-20');
      const detail = await getInvoice(app, books.key, invoice.id);
      expect(detail.status).to.equal('partially_paid');
      expect([detail.subtotal, detail.tax, detail.total, detail.paid, detail.balance].map((amount) => amount.formatted)).to.deep.equal([
        '€1,275.00',
        '€127.50',
        '€1,402.50',
        '€400.00',
        '€1,002.50',
      ]);

      const { bytes, pdf } = await invoicePdf(app, invoice);

      expectPdfShowsDetail(pdf, detail, books.businessName);
      expect(pdf.text).to.include('Design work 10 €120.00 €1,200.00');
      expect(pdf.text).to.include('Hosting (café server) 1.5 €50.00 €75.00');
      expect(pdf.text).to.include('Subtotal €1,275.00 Tax (10%) €127.50 Total €1,402.50 Paid €400.00 Balance due €1,002.50');
      expect(pdf.text).to.include('€400.00 received on 2026-03-20 (check)');
      expect(pdf.text).to.include('Bill to Łódź Studio Sp. z o.o.');
      expect(pdf.text, 'no dollar figure on a euro invoice').to.not.include('$');
      expect(pdf.pageSizes).to.deep.equal([{ width: 595.28, height: 841.89 }]);
      expectEmbeddedFontsOnly(bytes);
    });

    it('many lines flow onto further pages and every one is there, the totals after the last', async () => {
      const books = newBooks(app);
      const lines = Array.from({ length: 90 }, (_, index) => ({ description: `Session ${index + 1}`, quantity: '1', unitPriceCents: String(1000 + index) }));
      const invoice = await issueInvoice(app, books, { lines });
      const detail = await getInvoice(app, books.key, invoice.id);

      const { pdf } = await invoicePdf(app, invoice);

      expect(pdf.pageCount).to.be.greaterThan(1);
      expectPdfShowsDetail(pdf, detail, books.businessName);
      expect(pdf.pageTexts[pdf.pageCount - 1]).to.include(`Balance due ${detail.balance.formatted}`);
    });
  });

  describe('the answer', () => {
    it('answers 200 application/pdf as an attachment named after the invoice number, with the pay page’s security headers', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      const page = await app.get(invoice.payPath, null);

      const res = await download(app, `${invoice.payPath}/invoice.pdf`);

      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/pdf');
      expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="${invoice.number}.pdf"`);
      expect(res.headers.get('content-length')).to.equal(String(res.bytes.length));
      for (const header of PAGE_HEADERS) expect(res.headers.get(header), header).to.equal(page.headers[header]);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(res.headers.get('set-cookie')).to.equal(null);
      expect(Buffer.from(res.bytes.subarray(0, 5)).toString('latin1')).to.equal('%PDF-');
    });

    it('changes nothing: a sent invoice stays sent (only its page marks it viewed), and the same invoice gives the same bytes', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);

      const first = await download(app, `${invoice.payPath}/invoice.pdf`);
      app.clock.set('2026-03-18T09:00:00.000Z');
      const second = await download(app, `${invoice.payPath}/invoice.pdf`);

      expect((await getInvoice(app, books.key, invoice.id)).status).to.equal('sent');
      const views = app.db.prepare("SELECT count(*) AS n FROM audit_log WHERE action = 'invoice.view' AND subject_id = ?").get(invoice.id) as { n: bigint };
      expect(views.n).to.equal(0n);
      expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).to.equal(true);
    });

    it('a draft’s link, an unknown token, a malformed one and one with a character changed all get the pay page’s own 404, byte for byte', async () => {
      const books = newBooks(app);
      const draft = await issueInvoice(app, books, { draft: true, customer: { name: 'Hidden Customer' } });
      const sent = await issueInvoice(app, books);
      const flipped = (sent.token[0] === 'A' ? 'B' : 'A') + sent.token.slice(1);
      const pageNotFound = await app.get(`/pay/${randomBytes(32).toString('base64url')}`, null);
      expect(pageNotFound.status).to.equal(404);
      const paths = {
        draft: `${draft.payPath}/invoice.pdf`,
        unknown: `/pay/${randomBytes(32).toString('base64url')}/invoice.pdf`,
        tooShort: '/pay/abc/invoice.pdf',
        badCharacter: `/pay/${sent.token.slice(0, 42)}./invoice.pdf`,
        oneCharacterChanged: `/pay/${flipped}/invoice.pdf`,
      };

      for (const [name, path] of Object.entries(paths)) {
        const res = await app.get(path, null);
        expect(res.status, name).to.equal(404);
        expect(res.headers['content-type'], name).to.equal('text/html; charset=utf-8');
        expect(res.headers['content-disposition'], name).to.equal(undefined);
        expect(res.text, `${name}: the page's 404`).to.equal(pageNotFound.text);
        for (const header of PAGE_HEADERS) expect(res.headers[header], `${name}: ${header}`).to.equal(pageNotFound.headers[header]);
        for (const secret of [draft.number, 'Hidden Customer', books.businessName]) expect(res.text, `${name} must not show ${secret}`).to.not.include(secret);
      }
      expect((await getInvoice(app, books.key, draft.id)).status).to.equal('draft');
    });

    it('POST and other methods answer the JSON 404 not_found of an unknown path', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      const unknownPath = await app.request('POST', '/nowhere-at-all');

      for (const method of ['POST', 'PUT', 'DELETE']) {
        const res = await app.request(method, `${invoice.payPath}/invoice.pdf`, { body: {} });
        expectError(res, 404, 'not_found');
        expect(withoutRequestId(res), method).to.equal(withoutRequestId(unknownPath));
      }
    });
  });
});
