import { expect } from 'chai';
import type { NewCustomer } from '../../src/books/customers.js';
import { loadConfig } from '../../src/config.js';
import type { TestApp, TestResponse } from './app.js';
import { countRows } from './api.js';
import { accountIdByName } from './factories.js';
import { addCustomer, UUID } from './register.js';

/** Small builders shared by the invoice tests: customers to bill, valid bodies, and what a create leaves behind. */

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
