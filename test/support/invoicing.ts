import { expect } from 'chai';
import type { NewCustomer } from '../../src/books/customers.js';
import { loadConfig } from '../../src/config.js';
import type { TestApp, TestResponse } from './app.js';
import { countRows } from './api.js';
import { accountIdByName, buildBusiness, buildKey, buildTenant } from './factories.js';
import { addCustomer, UUID } from './register.js';

/**
 * Small builders shared by the invoice tests: customers to bill, valid bodies, what a create
 * leaves behind, and books to issue whole invoices from (with their pay links and detail).
 */

/** The site URL the test app serves pay links under (startTestApp reads no environment). */
export const TEST_SITE_URL = loadConfig({}).siteUrl;

/** A pay link: `{siteUrl}/pay/{token}`, the token 43 base64url characters (256 bits). */
export const PAY_URL = new RegExp(`^${TEST_SITE_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/pay/[A-Za-z0-9_-]{43}$`);

let counter = 0;

/** A customer of the tenant with an email address and a name no other test uses; returns its id. */
export function addBilledCustomer(app: TestApp, tenantId: string, overrides: Partial<NewCustomer> = {}): string {
  const n = ++counter;
  return addCustomer(app, tenantId, { name: `Billed Customer ${n}`, email: `billing${n}@customer.example`, ...overrides });
}

/** One valid line: 2 x $125.00 of Service Revenue. An override of `undefined` leaves the field out. */
export function invoiceLine(app: TestApp, businessId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description: 'Consulting',
    quantity: '2',
    unitPriceCents: '12500',
    accountId: accountIdByName(app.db, businessId, 'Service Revenue'),
    ...overrides,
  };
}

/** A valid POST /invoices body with one line (invoiceLine); an override of `undefined` leaves the field out. */
export function invoiceBody(app: TestApp, businessId: string, customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { customerId, lines: [invoiceLine(app, businessId)], ...overrides };
}

export interface CreatedInvoiceReply {
  invoiceId: string;
  invoiceNumber: string;
  webUrl: string;
}

/** A 201 {invoiceId, invoiceNumber, webUrl}: exactly those keys, a uuid, INV-nnnn and a pay link. */
export function expectInvoiceCreated(res: TestResponse): CreatedInvoiceReply {
  expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(201);
  expect(Object.keys(res.body).sort()).to.deep.equal(['invoiceId', 'invoiceNumber', 'webUrl']);
  expect(res.body.invoiceId).to.match(UUID);
  expect(res.body.invoiceNumber).to.match(/^INV-[0-9]{4,}$/);
  expect(res.body.webUrl).to.match(PAY_URL);
  return res.body as CreatedInvoiceReply;
}

/** POST /invoices, asserting the 201. */
export async function createInvoice(app: TestApp, key: string, body: Record<string, unknown>): Promise<CreatedInvoiceReply> {
  return expectInvoiceCreated(await app.post('/api/v1/invoices', key, body));
}

/** POST /invoices/{id}/send, asserting it answered 200 with the invoice now sent. */
export async function sendInvoice(app: TestApp, key: string, invoiceId: string): Promise<void> {
  const res = await app.post(`/api/v1/invoices/${invoiceId}/send`, key);
  expect(res.status, `send ${invoiceId} (body: ${res.text.slice(0, 300)})`).to.equal(200);
  expect(res.body.status).to.equal('sent');
}

/** POST /invoices/{id}/payments, asserting the 201. */
export async function payInvoice(app: TestApp, key: string, invoiceId: string, amountCents: string, paidAt?: string): Promise<void> {
  const res = await app.post(`/api/v1/invoices/${invoiceId}/payments`, key, { amountCents, method: 'check', ...(paidAt ? { paidAt } : {}) });
  expect(res.status, `payment on ${invoiceId} (body: ${res.text.slice(0, 300)})`).to.equal(201);
}

/** A tenant with one business and one read-write key: what an invoice is issued from. */
export interface Books {
  tenantId: string;
  businessId: string;
  businessName: string;
  key: string;
}

let businessCount = 0;

/** A tenant (large plan) with one business, named as asked or with a name no other test uses, and one read-write key. */
export function newBooks(app: TestApp, businessName = `Harbor Design ${++businessCount}`): Books {
  const tenant = buildTenant(app.db, app.clock, { plan: 'large' });
  const business = buildBusiness(app.db, app.clock, { tenantId: tenant.id, name: businessName });
  const { key } = buildKey(app.db, app.clock, { tenantId: tenant.id });
  return { tenantId: tenant.id, businessId: business.id, businessName, key };
}

export interface IssueInvoiceOptions {
  /** Whom to bill (default: a fresh customer, addBilledCustomer). */
  customer?: NewCustomer;
  currency?: string;
  taxRatePercent?: string;
  memo?: string;
  /** Priced on Service Revenue (default: one line, 2 x $500.00). */
  lines?: { description: string; quantity: string; unitPriceCents: string }[];
  /** Leave it a draft (default: send it). */
  draft?: boolean;
}

/** What a test needs of an issued invoice to reach it: by id over the API, or by its pay link. */
export interface IssuedInvoice {
  id: string;
  number: string;
  /** The path of the pay link, /pay/{token}. */
  payPath: string;
  token: string;
}

/**
 * An invoice issued 2026-03-15 on Net 30 terms, so due 2026-04-14, sent unless asked to stay a
 * draft. Asserts that its detail shows the pay link the create answered.
 */
export async function issueInvoice(app: TestApp, books: Books, options: IssueInvoiceOptions = {}): Promise<IssuedInvoice> {
  const customerId = addBilledCustomer(app, books.tenantId, options.customer ?? {});
  const lines = (options.lines ?? [{ description: 'Consulting', quantity: '2', unitPriceCents: '50000' }]).map((line) => invoiceLine(app, books.businessId, line));
  const created = await createInvoice(
    app,
    books.key,
    invoiceBody(app, books.businessId, customerId, {
      issueDate: '2026-03-15',
      paymentTermsDays: 30,
      lines,
      currency: options.currency,
      taxRatePercent: options.taxRatePercent,
      memo: options.memo,
    }),
  );
  if (!options.draft) await sendInvoice(app, books.key, created.invoiceId);
  const detail = await getInvoice(app, books.key, created.invoiceId);
  expect(detail.payUrl, 'the detail shows the link the create answered').to.equal(created.webUrl);
  const payPath = new URL(created.webUrl).pathname;
  return { id: created.invoiceId, number: created.invoiceNumber, payPath, token: payPath.slice('/pay/'.length) };
}

/** An amount as the API writes it: bigint cents as a string, formatted in its currency. */
export interface Money {
  cents: string;
  formatted: string;
  currency: string;
}

/** GET /invoices/{id}: the fields the tests read (spec/ has them all). */
export interface InvoiceDetail {
  id: string;
  number: string;
  status: string;
  issueDate: string;
  dueDate: string;
  currency: string;
  customer: { name: string };
  terms: string | null;
  subtotal: Money;
  tax: Money;
  total: Money;
  paid: Money;
  balance: Money;
  memo: string | null;
  lines: { description: string; quantity: string; unitPrice: Money; amount: Money }[];
  payments: { amount: Money; method: string; paidAt: string }[];
  payUrl: string;
}

/** GET /invoices/{id}, asserting the 200. */
export async function getInvoice(app: TestApp, key: string, invoiceId: string): Promise<InvoiceDetail> {
  const res = await app.get(`/api/v1/invoices/${invoiceId}`, key);
  expect(res.status, `invoice ${invoiceId} (body: ${res.text.slice(0, 300)})`).to.equal(200);
  return res.body as InvoiceDetail;
}

/** What a POST /invoices may leave behind in one business, and the number its next invoice would take. */
export interface InvoiceWrites {
  invoices: number;
  lines: number;
  auditRows: number;
  nextInvoiceNumber: number;
}

export function invoiceWrites(app: TestApp, businessId: string): InvoiceWrites {
  return {
    invoices: countRows(app.db, 'SELECT count(*) FROM invoices WHERE business_id = ?', businessId),
    lines: countRows(app.db, 'SELECT count(*) FROM invoice_lines WHERE invoice_id IN (SELECT id FROM invoices WHERE business_id = ?)', businessId),
    auditRows: countRows(app.db, 'SELECT count(*) FROM audit_log WHERE business_id = ?', businessId),
    nextInvoiceNumber: countRows(app.db, 'SELECT next_invoice_number FROM businesses WHERE id = ?', businessId),
  };
}
