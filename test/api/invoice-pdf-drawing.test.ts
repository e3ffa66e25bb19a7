import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { voidInvoice } from '../../src/books/invoice-posting.js';
import { relinkInvoice } from '../../src/books/invoices.js';
import { inTransaction } from '../../src/db/connection.js';
import { PAY_PAGE_REQUESTS_PER_WINDOW } from '../../src/pages/pay-route.js';
import { holdPdfRenders, RenderThread } from '../../src/pdf/renderer.js';
import type { TestApp } from '../support/app.js';
import { useAppAt } from '../support/api.js';
import { getInvoice, type IssuedInvoice, issueInvoice, newBooks } from '../support/invoicing.js';
import { buildInput } from '../support/invoice-pdf-input.js';
import { readPdf } from '../support/pdf.js';

/**
 * Invoice PDFs cannot stall the server: they are drawn on their own thread, once per state of
 * the invoice, and kept in the books; pay-page requests are budgeted per client address; a void
 * invoice's PDF is a one-page notice; a pay link can be replaced. Nothing here is timed: a
 * render is held on its thread (holdPdfRenders) while other requests are answered.
 */

const START = '2026-03-15T12:00:00.000Z';

async function download(app: TestApp, path: string, localAddress?: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await app.request('GET', path, { ...(localAddress ? { localAddress } : {}) });
  return { status: res.status, bytes: Buffer.from(res.text, 'latin1') };
}

async function pdfBytes(app: TestApp, invoice: IssuedInvoice): Promise<Uint8Array> {
  const res = await fetch(`${app.url}${invoice.payPath}/invoice.pdf`);
  expect(res.status).to.equal(200);
  return new Uint8Array(await res.arrayBuffer());
}

function keptDocument(app: TestApp, invoiceId: string): { stateKey: string; pdf: Buffer } | undefined {
  return app.db.prepare('SELECT state_key AS stateKey, pdf FROM invoice_documents WHERE invoice_id = ?').get(invoiceId) as { stateKey: string; pdf: Buffer } | undefined;
}

describe('invoice PDFs: drawn off the request thread, once per state, and kept', () => {
  let app: TestApp;
  useAppAt(START, (started) => (app = started));

  it('answers GET /healthz and an API read while an invoice PDF is being drawn', async () => {
    const books = newBooks(app);
    const invoice = await issueInvoice(app, books);
    // Nothing kept: this download must draw.
    app.db.prepare('DELETE FROM invoice_documents WHERE invoice_id = ?').run(invoice.id);
    const release = holdPdfRenders();
    let settled = false;
    const pdf = fetch(`${app.url}${invoice.payPath}/invoice.pdf`).then(async (res) => {
      settled = true;
      return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
    });
    try {
      const health = await app.get('/healthz', null);
      const detail = await app.get(`/api/v1/invoices/${invoice.id}`, books.key);
      expect(health.status).to.equal(200);
      expect(detail.status).to.equal(200);
      expect(detail.body.number).to.equal(invoice.number);
      expect(settled, 'the PDF is still being drawn').to.equal(false);
    } finally {
      release();
    }
    const drawn = await pdf;
    expect(drawn.status).to.equal(200);
    expect((await readPdf(drawn.bytes)).text).to.include(`Invoice ${invoice.number}`);
  });

  it('keeps the drawn PDF in the books, and the pay page’s first view (sent to viewed) does not make it drawn again', async () => {
    const books = newBooks(app);
    const invoice = await issueInvoice(app, books);
    const first = await pdfBytes(app, invoice);
    const kept = keptDocument(app, invoice.id);
    expect(kept, 'kept after the first download').to.not.equal(undefined);
    expect(Buffer.from(first).equals(kept!.pdf)).to.equal(true);

    expect((await app.get(invoice.payPath, null)).status).to.equal(200);
    expect((await getInvoice(app, books.key, invoice.id)).status).to.equal('viewed');
    const second = await pdfBytes(app, invoice);

    expect(keptDocument(app, invoice.id)!.stateKey, 'the same state').to.equal(kept!.stateKey);
    expect(Buffer.from(second).equals(Buffer.from(first))).to.equal(true);
  });

  it('a void invoice’s PDF is one page saying it was voided and nothing is owed, without its lines', async () => {
    const books = newBooks(app);
    const invoice = await issueInvoice(app, books, { lines: [{ description: 'Landscape survey, north field', quantity: '1', unitPriceCents: '90000' }] });
    inTransaction(app.db, () => voidInvoice(app.db, app.clock, CLI_ACTOR, invoice.id));

    const pdf = await readPdf(await pdfBytes(app, invoice));

    expect(pdf.pageCount).to.equal(1);
    expect(pdf.text).to.include(`Invoice ${invoice.number}`);
    expect(pdf.text).to.include('This invoice was voided. Nothing is owed on it.');
    expect(pdf.text).to.not.include('Landscape survey');
    expect(pdf.text).to.not.include('Balance due');
  });

  it(`past ${PAY_PAGE_REQUESTS_PER_WINDOW} pay-page requests from one address in a window, answers 429 with retry-after; another address is still served`, async () => {
    const path = () => `/pay/${randomBytes(32).toString('base64url')}/invoice.pdf`;
    for (let n = 0; n < PAY_PAGE_REQUESTS_PER_WINDOW; n += 1) {
      expect((await download(app, path(), '127.0.0.3')).status, `request ${n + 1}`).to.equal(404);
    }

    const refused = await app.request('GET', path(), { localAddress: '127.0.0.3' });
    const page = await app.request('GET', `/pay/${randomBytes(32).toString('base64url')}`, { localAddress: '127.0.0.3' });
    const other = await download(app, path(), '127.0.0.4');

    expect(refused.status).to.equal(429);
    expect(Number(refused.headers['retry-after'])).to.be.within(1, 600);
    expect(refused.text).to.include('Try again later');
    expect(page.status, 'the page shares the budget').to.equal(429);
    expect(other.status).to.equal(404);
    app.clock.advanceMs(600_000);
    expect((await download(app, path(), '127.0.0.3')).status, 'the next window').to.equal(404);
  });

  describe('a new pay link (daybook invoice relink)', () => {
    it('the old link answers the plain 404, the new one the invoice; the kept PDF (which printed the old link) is dropped; audited', async () => {
      const books = newBooks(app);
      const invoice = await issueInvoice(app, books);
      await pdfBytes(app, invoice);
      const before = await getInvoice(app, books.key, invoice.id);

      // The send's email, as if its delivery were still to come (a retry).
      app.db.prepare(
        `INSERT INTO email_outbox (id, tenant_id, business_id, kind, invoice_id, to_address, subject, body_text, body_html, status, attempts, next_attempt_at, created_at)
         SELECT 'pending-copy', tenant_id, business_id, kind, invoice_id, to_address, subject, body_text, body_html, 'pending', 0, next_attempt_at, created_at
         FROM email_outbox WHERE invoice_id = ?`,
      ).run(invoice.id);
      inTransaction(app.db, () => relinkInvoice(app.db, app.clock, CLI_ACTOR, invoice.id));

      const after = await getInvoice(app, books.key, invoice.id);
      expect(after.payUrl).to.not.equal(before.payUrl);
      expect(keptDocument(app, invoice.id)).to.equal(undefined);
      const oldPage = await app.get(invoice.payPath, null);
      const notFound = await app.get(`/pay/${randomBytes(32).toString('base64url')}`, null);
      expect(oldPage.status).to.equal(404);
      expect(oldPage.text).to.equal(notFound.text);
      expect((await app.get(`${invoice.payPath}/invoice.pdf`, null)).status).to.equal(404);
      const newPath = new URL(after.payUrl).pathname;
      expect((await app.get(newPath, null)).status).to.equal(200);
      const pdf = await readPdf(await pdfBytes(app, { ...invoice, payPath: newPath }));
      expect(pdf.links).to.deep.equal([after.payUrl]);
      const audit = app.db.prepare("SELECT actor_type AS actor, detail_json AS detail FROM audit_log WHERE action = 'invoice.relink' AND subject_id = ?").all(invoice.id);
      const pending = app.db.prepare("SELECT body_text AS text FROM email_outbox WHERE invoice_id = ? AND status = 'pending'").all(invoice.id) as { text: string }[];
      expect(pending).to.have.length(1);
      for (const email of pending) {
        expect(email.text, 'an email not yet delivered').to.include(after.payUrl);
        expect(email.text).to.not.include(invoice.token);
      }
      expect(audit).to.deep.equal([{ actor: 'cli', detail: JSON.stringify({ number: invoice.number, payLinkVersion: 1 }) }]);
    });
  });
});

describe('the PDF thread (src/pdf/renderer.ts)', () => {
  const input = (number: string) => buildInput({ id: `invoice-${number}`, number });

  it('stops a render that runs past its time limit, and the next render, on a new thread, gets its own PDF', async () => {
    const thread = new RenderThread({ timeLimitMs: 3_000 });
    const release = thread.hold();
    const stopped = thread.render({ kind: 'invoice', input: input('INV-0001') }).then(
      () => 'drawn',
      (error: unknown) => String(error),
    );
    const next = thread.render({ kind: 'invoice', input: input('INV-0002') });
    expect(await stopped).to.match(/PdfRenderFailed: drawing the PDF took over 3000 ms/);
    release();
    const pdf = await readPdf(await next);
    expect(pdf.text).to.include('Invoice INV-0002');
    expect(pdf.text).to.not.include('INV-0001');
    await thread.close();
  });
});
