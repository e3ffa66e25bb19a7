import { expect } from 'chai';
import { markOverdueInvoices } from '../../src/books/invoice-posting.js';
import { inTransaction } from '../../src/db/connection.js';
import { throwawayBooks, type ThrowawayBooks } from '../../src/db/throwaway-books.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { countRows } from '../support/api.js';
import { type Books, getInvoice, issueInvoice, newBooks, payInvoice } from '../support/invoicing.js';

/**
 * The one status rule (DESIGN.md): void > paid > overdue (due date before today, UTC, by the
 * clock, with a balance, part-paid or not) > partially_paid > viewed > sent, worked out when
 * read, so no answer waits for the overdue sweep. Invoices here are issued 2026-03-15 on Net 30
 * (due 2026-04-14) for $1,000.00.
 */

const START = '2026-03-15T12:00:00.000Z';
const LAST_INSTANT_DUE = '2026-04-14T23:59:59.999Z';
const FIRST_INSTANT_OVERDUE = '2026-04-15T00:00:00.000Z';

/** What GET /invoices answers for one invoice: its status in the whole list, and the status filters it passes. */
async function listed(app: TestApp, books: Books, invoiceId: string): Promise<{ status: string | undefined; filters: string[] }> {
  const all = await app.get(`/api/v1/invoices?entityId=${books.businessId}&limit=100`, books.key);
  expect(all.status).to.equal(200);
  const row = (all.body.invoices as { id: string; status: string }[]).find((invoice) => invoice.id === invoiceId);
  const filters: string[] = [];
  for (const status of ['sent', 'viewed', 'partially_paid', 'paid', 'overdue', 'void']) {
    const res = await app.get(`/api/v1/invoices?entityId=${books.businessId}&status=${status}&limit=100`, books.key);
    expect(res.status).to.equal(200);
    if ((res.body.invoices as { id: string }[]).some((invoice) => invoice.id === invoiceId)) filters.push(status);
  }
  return { status: row?.status, filters };
}

function sweep(app: TestApp): number {
  return inTransaction(app.db, () => markOverdueInvoices(app.db, app.clock));
}

function overdueAuditRows(app: TestApp, invoiceId: string): number {
  return countRows(app.db, "SELECT count(*) FROM audit_log WHERE action = 'invoice.overdue' AND subject_id = ?", invoiceId);
}

describe('invoice status rule: overdue is worked out when read', () => {
  let app: TestApp;
  let books: Books;

  beforeEach(async () => {
    app = await startTestApp(START);
    books = newBooks(app);
  });

  afterEach(async () => {
    await app.close();
  });

  it('turns overdue at midnight UTC after the due date, with no sweep run (list, its status filter and get)', async () => {
    const invoice = await issueInvoice(app, books);
    app.clock.set(LAST_INSTANT_DUE);
    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'sent', filters: ['sent'] });

    app.clock.set(FIRST_INSTANT_OVERDUE);
    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'overdue', filters: ['overdue'] });
    expect((await getInvoice(app, books.key, invoice.id)).status, 'GET /invoices/{id}').to.equal('overdue');
    expect(overdueAuditRows(app, invoice.id), 'no sweep ran').to.equal(0);
  });

  it('keeps a part-paid overdue invoice overdue across the payment (list, filter and get)', async () => {
    const invoice = await issueInvoice(app, books);
    app.clock.set('2026-04-20T09:00:00.000Z');
    expect(sweep(app)).to.equal(1);

    await payInvoice(app, books.key, invoice.id, '25000');

    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'overdue', filters: ['overdue'] });
    const detail = await getInvoice(app, books.key, invoice.id);
    expect(detail.status).to.equal('overdue');
    expect(detail.balance.cents).to.equal('75000');
    // The sweep then finds nothing new: the invoice went overdue once.
    expect(sweep(app)).to.equal(0);
    expect(overdueAuditRows(app, invoice.id)).to.equal(1);
  });

  it('puts overdue above partially paid when part was paid before the due date (no sweep run)', async () => {
    const invoice = await issueInvoice(app, books);
    app.clock.set('2026-03-20T09:00:00.000Z');
    await payInvoice(app, books.key, invoice.id, '40000');
    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'partially_paid', filters: ['partially_paid'] });

    app.clock.set(FIRST_INSTANT_OVERDUE);
    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'overdue', filters: ['overdue'] });
  });

  it('answers the same before and after the sweep, which still records the move once in the audit trail', async () => {
    const invoice = await issueInvoice(app, books);
    app.clock.set('2026-04-16T08:00:00.000Z');
    const before = await listed(app, books, invoice.id);
    expect(sweep(app)).to.equal(1);
    const after = await listed(app, books, invoice.id);
    expect(before).to.deep.equal({ status: 'overdue', filters: ['overdue'] });
    expect(after).to.deep.equal(before);
    expect(overdueAuditRows(app, invoice.id)).to.equal(1);
  });

  it('keeps an invoice part-paid after its due date overdue (no sweep run) until it is paid, then paid', async () => {
    const invoice = await issueInvoice(app, books);
    app.clock.set('2026-04-20T09:00:00.000Z');
    await payInvoice(app, books.key, invoice.id, '30000');
    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'overdue', filters: ['overdue'] });
    await payInvoice(app, books.key, invoice.id, '70000');
    expect(await listed(app, books, invoice.id)).to.deep.equal({ status: 'paid', filters: ['paid'] });
  });
});

describe('invoice status rule: across a restart', () => {
  let books: ThrowawayBooks;
  let app: TestApp | undefined;

  beforeEach(async () => {
    books = await throwawayBooks('daybook-status-rule-');
  });

  afterEach(async () => {
    await app?.close();
    books.remove();
  });

  it('is overdue after a restart past the due date, before any sweep runs', async () => {
    app = await startTestApp(START, { dbPath: books.path });
    const owner = newBooks(app);
    const invoice = await issueInvoice(app, owner);
    await payInvoice(app, owner.key, invoice.id, '10000');
    await app.close();

    app = await startTestApp(FIRST_INSTANT_OVERDUE, { dbPath: books.path });
    expect(await listed(app, owner, invoice.id)).to.deep.equal({ status: 'overdue', filters: ['overdue'] });
    expect(overdueAuditRows(app, invoice.id), 'no sweep ran').to.equal(0);
  });
});
