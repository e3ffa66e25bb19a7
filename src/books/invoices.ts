import type { Clock } from '../clock.js';
import { nowIso, todayUtc } from '../clock.js';
import { addDays, isIsoDate } from '../dates.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, int, one, run } from '../db/statements.js';
import { ApiError, validationFailed } from '../errors.js';
import type { Currency } from '../money.js';
import { type Actor, recordAudit } from '../store/audit.js';
import type { Business } from './businesses.js';
import { findLedgerAccount } from './chart.js';
import { newId } from '../ids.js';
import { InvoiceMathError, priceInvoice } from './invoice-math.js';
import { type ListScope, type Page, type PageRequest, pageOf, pageStart } from '../store/paging.js';
import { payToken, payTokenAtVersion, payTokenFingerprint } from './pay-links.js';
import { lockedThrough } from './periods.js';
import { getTenant } from './tenants.js';

/**
 * Invoices and their payments. The lists below are the invoices and invoice_payments
 * tables' CHECK lists; test/db/closed-lists.test.ts keeps the two in step.
 */

/** Where an invoice stands (the spec's closed list). */
export const INVOICE_STATUSES = ['draft', 'sent', 'viewed', 'partially_paid', 'paid', 'overdue', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** How a payment was made: the four the API records, and stripe for payments taken on the pay page. */
export const PAYMENT_METHODS = ['check', 'cash', 'wire', 'other', 'stripe'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** Statuses with money still owed on a sent invoice. */
export const UNPAID_STATUSES: readonly InvoiceStatus[] = ['sent', 'viewed', 'partially_paid', 'overdue'];

/** At most this many lines on one invoice. */
export const MAX_INVOICE_LINES = 500;

export interface NewInvoiceLine {
  description: string;
  quantity: string;
  unitPriceCents: bigint;
  accountId: string;
}

export interface NewInvoice {
  business: Business;
  customerId: string;
  issueDate?: string;
  dueDate?: string;
  paymentTermsDays?: number;
  currency?: Currency;
  taxRatePercent?: string;
  memo?: string;
  lines: NewInvoiceLine[];
}

export interface CreatedInvoice {
  invoiceId: string;
  invoiceNumber: string;
  payToken: string;
}

/** INV-0001: a business's invoices are numbered one after another, never reusing a number. */
export function invoiceNumber(sequence: number): string {
  return `INV-${String(sequence).padStart(4, '0')}`;
}

/**
 * A draft: priced exactly, numbered, due on the date sent or after the payment terms (from
 * the request, the customer, the business, then the account), in the currency sent (USD by
 * default; never the customer's). Nothing is posted or emailed. The caller holds the
 * transaction, so a refusal leaves no invoice and uses no number.
 */
export function createInvoice(db: Db, clock: Clock, actor: Actor, input: NewInvoice): CreatedInvoice {
  assertInTransaction(db, 'createInvoice');
  const { business } = input;
  if (input.lines.length > MAX_INVOICE_LINES) throw validationFailed('lines', `must have at most ${MAX_INVOICE_LINES} items`);
  const customer = invoiceCustomer(db, business.tenantId, input.customerId);
  input.lines.forEach((line, index) => assertRevenueAccount(db, business, line.accountId, `lines.${index}.accountId`));
  const priced = priceOrRefuse(input);
  const issueDate = input.issueDate ?? todayUtc(clock);
  const terms = input.paymentTermsDays ?? customer.paymentTermsDays ?? business.paymentTermsDays ?? getTenant(db, business.tenantId).paymentTermsDays;
  const dueDate = input.dueDate ?? addDays(issueDate, terms);
  // Terms can carry a late issue date past the calendar's last day.
  if (!isIsoDate(dueDate)) throw validationFailed(input.paymentTermsDays !== undefined ? 'paymentTermsDays' : 'issueDate', 'puts the due date past 9999-12-31');
  if (dueDate < issueDate) throw validationFailed('dueDate', `must not be before issueDate (${issueDate})`);
  assertIssueDateOpen(db, business.id, issueDate);
  const id = newId();
  const number = invoiceNumber(takeInvoiceNumber(db, business.id));
  const token = payToken(db, id);
  run(
    db,
    `INSERT INTO invoices (id, business_id, customer_id, number, status, currency, issue_date, due_date, payment_terms_days, tax_rate_percent,
       subtotal_cents, tax_cents, total_cents, memo, pay_token, created_at)
     VALUES (?, ?, ?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id,
    business.id,
    customer.id,
    number,
    input.currency ?? 'USD',
    issueDate,
    dueDate,
    storedTerms(input, issueDate, dueDate, terms),
    input.taxRatePercent ?? null,
    priced.subtotalCents,
    priced.taxCents,
    priced.totalCents,
    input.memo ?? null,
    payTokenFingerprint(token),
    nowIso(clock),
  );
  input.lines.forEach((line, index) => {
    run(
      db,
      `INSERT INTO invoice_lines (id, invoice_id, line_no, description, quantity, unit_price_cents, amount_cents, ledger_account_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      newId(),
      id,
      index + 1,
      line.description,
      line.quantity,
      line.unitPriceCents,
      priced.lineAmountsCents[index],
      line.accountId,
    );
  });
  recordAudit(db, clock, actor, {
    tenantId: business.tenantId,
    businessId: business.id,
    action: 'invoice.create',
    subjectType: 'invoice',
    subjectId: id,
    detail: { number, customerId: customer.id, currency: input.currency ?? 'USD', totalCents: priced.totalCents.toString() },
  });
  return { invoiceId: id, invoiceNumber: number, payToken: token };
}

/**
 * The terms the invoice states: the ones its due date came from. A due date sent explicitly
 * states terms only when the request's terms agree with it ("Net 30" beside a due date five
 * days out would mislead the customer).
 */
function storedTerms(input: NewInvoice, issueDate: string, dueDate: string, terms: number): number | null {
  if (input.dueDate === undefined) return terms;
  if (input.paymentTermsDays !== undefined && addDays(issueDate, input.paymentTermsDays) === dueDate) return input.paymentTermsDays;
  return null;
}

function priceOrRefuse(input: NewInvoice) {
  try {
    return priceInvoice(
      input.lines.map((line) => ({ quantity: line.quantity, unitPriceCents: line.unitPriceCents })),
      input.taxRatePercent,
    );
  } catch (error) {
    if (error instanceof InvoiceMathError) throw validationFailed(error.field, error.problem);
    throw error;
  }
}

function takeInvoiceNumber(db: Db, businessId: string): number {
  const row = one<{ n: bigint }>(db, 'UPDATE businesses SET next_invoice_number = next_invoice_number + 1 WHERE id = ? RETURNING next_invoice_number - 1 AS n', businessId);
  if (!row) throw new Error(`takeInvoiceNumber: no business ${businessId}`);
  return int(row.n)!;
}

interface InvoiceCustomer {
  id: string;
  name: string;
  email: string | null;
  paymentTermsDays: number | null;
}

function invoiceCustomer(db: Db, tenantId: string, customerId: string): InvoiceCustomer {
  const row = one<{ id: string; name: string; email: string | null; payment_terms_days: bigint | null; archived: bigint }>(
    db,
    'SELECT id, name, email, payment_terms_days, archived FROM customers WHERE id = ? AND tenant_id = ?',
    customerId,
    tenantId,
  );
  if (!row) throw new ApiError('not_found', 'customerId: no such customer.');
  if (row.archived === 1n) throw validationFailed('customerId', 'is an archived customer');
  return { id: row.id, name: row.name, email: row.email, paymentTermsDays: int(row.payment_terms_days) };
}

/**
 * An invoice line earns revenue: its account must be a postable, non-archived revenue account
 * of this business. One the business does not have is not_found, like any record the key
 * cannot reach.
 */
function assertRevenueAccount(db: Db, business: Business, accountId: string, field: string): void {
  const account = findLedgerAccount(db, accountId);
  if (!account || account.businessId !== business.id) throw new ApiError('not_found', `${field}: no such account in this business.`);
  if (account.isHeading) throw validationFailed(field, 'is a heading; choose one of the accounts GET /accounts?type=revenue lists');
  if (account.archived) throw validationFailed(field, 'is archived; choose one of the accounts GET /accounts?type=revenue lists');
  if (account.type !== 'revenue') throw validationFailed(field, `must be a revenue account (this one is ${account.type})`);
}

/** An invoice as the books hold it, with its lines and payments. */
export interface Invoice {
  id: string;
  businessId: string;
  tenantId: string;
  number: string;
  status: InvoiceStatus;
  currency: Currency;
  customer: { id: string; name: string; email: string | null };
  issueDate: string;
  dueDate: string;
  paymentTermsDays: number | null;
  taxRatePercent: string | null;
  subtotalCents: bigint;
  taxCents: bigint;
  totalCents: bigint;
  paidCents: bigint;
  memo: string | null;
  usdPerUnit: string | null;
  subtotalUsdCents: bigint | null;
  taxUsdCents: bigint | null;
  journalEntryId: string | null;
  sentAt: string | null;
  lines: InvoiceLine[];
  payments: InvoicePayment[];
}

export interface InvoiceLine {
  description: string;
  quantity: string;
  unitPriceCents: bigint;
  amountCents: bigint;
  accountId: string;
  account: string;
}

export interface InvoicePayment {
  id: string;
  amountCents: bigint;
  method: PaymentMethod;
  paidAt: string;
  usdCents: bigint;
  receivableUsdCents: bigint;
}

interface InvoiceRow {
  id: string;
  business_id: string;
  tenant_id: string;
  number: string;
  status: InvoiceStatus;
  currency: Currency;
  customer_id: string;
  customer_name: string;
  customer_email: string | null;
  issue_date: string;
  due_date: string;
  payment_terms_days: bigint | null;
  tax_rate_percent: string | null;
  subtotal_cents: bigint;
  tax_cents: bigint;
  total_cents: bigint;
  paid_cents: bigint;
  memo: string | null;
  usd_per_unit: string | null;
  subtotal_usd_cents: bigint | null;
  tax_usd_cents: bigint | null;
  journal_entry_id: string | null;
  sent_at: string | null;
}

/**
 * The one status rule (DESIGN.md), as SQL over invoices `i`, taking today's date as its one
 * parameter: void > paid > overdue (due before today with a balance, part-paid or not) >
 * partially_paid > viewed > sent. The stored status records what happened (drafted, sent,
 * viewed, paid, voided, and the sweep's overdue); overdue is worked out here, when read, so no
 * answer waits for the sweep.
 */
const STATUS_SQL = `CASE
    WHEN i.status IN ('draft', 'void', 'paid') THEN i.status
    WHEN i.due_date < ? AND i.total_cents > i.paid_cents THEN 'overdue'
    WHEN i.paid_cents > 0 THEN 'partially_paid'
    WHEN i.viewed_at IS NOT NULL THEN 'viewed'
    ELSE 'sent'
  END`;

/** The select of one invoice: status by the rule when today is known, else as stored (it lags until the sweep runs). */
function invoiceSelect(today: string | undefined): { sql: string; params: unknown[] } {
  return {
    sql: `SELECT i.*, ${today === undefined ? 'i.status' : STATUS_SQL} AS status, b.tenant_id, c.name AS customer_name, c.email AS customer_email
  FROM invoices i JOIN businesses b ON b.id = i.business_id JOIN customers c ON c.id = i.customer_id`,
    params: today === undefined ? [] : [today],
  };
}

/** The invoice with this id, its lines and payments, or undefined; its status as of `today` (see invoiceSelect). */
export function findInvoice(db: Db, id: string, today?: string): Invoice | undefined {
  const select = invoiceSelect(today);
  const row = one<InvoiceRow>(db, `${select.sql} WHERE i.id = ?`, ...select.params, id);
  return row && withDetails(db, row);
}

/** The invoice a pay link's token names, or undefined; its status as findInvoice's. */
export function findInvoiceByPayToken(db: Db, token: string, today?: string): Invoice | undefined {
  const select = invoiceSelect(today);
  const row = one<InvoiceRow>(db, `${select.sql} WHERE i.pay_token = ?`, ...select.params, payTokenFingerprint(token));
  return row && withDetails(db, row);
}

function withDetails(db: Db, row: InvoiceRow): Invoice {
  const lines = all<{ description: string; quantity: string; unit_price_cents: bigint; amount_cents: bigint; ledger_account_id: string; account: string }>(
    db,
    `SELECT l.description, l.quantity, l.unit_price_cents, l.amount_cents, l.ledger_account_id, a.name AS account
     FROM invoice_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id WHERE l.invoice_id = ? ORDER BY l.line_no`,
    row.id,
  );
  const payments = all<{ id: string; amount_cents: bigint; method: PaymentMethod; paid_at: string; usd_cents: bigint; receivable_usd_cents: bigint }>(
    db,
    'SELECT id, amount_cents, method, paid_at, usd_cents, receivable_usd_cents FROM invoice_payments WHERE invoice_id = ? ORDER BY paid_at, created_at, id',
    row.id,
  );
  return {
    id: row.id,
    businessId: row.business_id,
    tenantId: row.tenant_id,
    number: row.number,
    status: row.status,
    currency: row.currency,
    customer: { id: row.customer_id, name: row.customer_name, email: row.customer_email },
    issueDate: row.issue_date,
    dueDate: row.due_date,
    paymentTermsDays: int(row.payment_terms_days),
    taxRatePercent: row.tax_rate_percent,
    subtotalCents: row.subtotal_cents,
    taxCents: row.tax_cents,
    totalCents: row.total_cents,
    paidCents: row.paid_cents,
    memo: row.memo,
    usdPerUnit: row.usd_per_unit,
    subtotalUsdCents: row.subtotal_usd_cents,
    taxUsdCents: row.tax_usd_cents,
    journalEntryId: row.journal_entry_id,
    sentAt: row.sent_at,
    lines: lines.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unitPriceCents: line.unit_price_cents,
      amountCents: line.amount_cents,
      accountId: line.ledger_account_id,
      account: line.account,
    })),
    payments: payments.map((payment) => ({
      id: payment.id,
      amountCents: payment.amount_cents,
      method: payment.method,
      paidAt: payment.paid_at,
      usdCents: payment.usd_cents,
      receivableUsdCents: payment.receivable_usd_cents,
    })),
  };
}

/**
 * A draft dated in a closed period could never be sent (send posts on the issue date), so it
 * is refused when written. Only the lock is checked: drafting posts nothing, so it still works
 * while billing is past due (spec, Errors rule 3).
 */
function assertIssueDateOpen(db: Db, businessId: string, issueDate: string): void {
  const through = lockedThrough(db, businessId);
  if (through !== null && issueDate <= through) {
    throw new ApiError('period_locked', `issueDate: ${issueDate} falls in a closed period (locked through ${through}); date the invoice after ${through}`);
  }
}

/**
 * Gives the invoice a new pay link: the old one then answers the pay page's plain 404, and the
 * PDF kept for it (which prints the old link) is dropped, and emails not yet delivered carry the
 * new link. Emails already sent still carry the old one: anyone who should pay needs the new
 * one. Audited as invoice.relink.
 */
export function relinkInvoice(db: Db, clock: Clock, actor: Actor, invoiceId: string): Invoice {
  assertInTransaction(db, 'relinkInvoice');
  const invoice = findInvoice(db, invoiceId);
  if (!invoice) throw new ApiError('not_found', 'No such invoice.');
  const row = one<{ version: bigint }>(db, 'SELECT pay_link_version AS version FROM invoices WHERE id = ?', invoice.id)!;
  const version = Number(row.version) + 1;
  const [oldToken, newToken] = [payTokenAtVersion(db, invoice.id, version - 1), payTokenAtVersion(db, invoice.id, version)];
  run(db, 'UPDATE invoices SET pay_link_version = ?, pay_token = ? WHERE id = ?', version, payTokenFingerprint(newToken), invoice.id);
  run(db, 'DELETE FROM invoice_documents WHERE invoice_id = ?', invoice.id);
  // Emails not yet delivered go out with the new link, not one that now leads nowhere.
  run(
    db,
    `UPDATE email_outbox SET body_text = replace(body_text, ?, ?), body_html = replace(body_html, ?, ?)
     WHERE invoice_id = ? AND status = 'pending'`,
    `/pay/${oldToken}`,
    `/pay/${newToken}`,
    `/pay/${oldToken}`,
    `/pay/${newToken}`,
    invoice.id,
  );
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'invoice.relink',
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: { number: invoice.number, payLinkVersion: version },
  });
  return invoice;
}

/** "Net 30", or null when the due date was given without terms. */
export function termsText(paymentTermsDays: number | null): string | null {
  if (paymentTermsDays === null) return null;
  return paymentTermsDays === 0 ? 'Due on receipt' : `Net ${paymentTermsDays}`;
}

/** What is still owed: nothing on a void invoice, whatever was paid before. */
export function invoiceBalanceCents(invoice: { status: InvoiceStatus; totalCents: bigint; paidCents: bigint }): bigint {
  return invoice.status === 'void' ? 0n : invoice.totalCents - invoice.paidCents;
}

/** Whether money is owed and the due date has passed, as of `today`. */
export function isOverdue(invoice: { status: InvoiceStatus; dueDate: string }, today: string): boolean {
  return UNPAID_STATUSES.includes(invoice.status) && invoice.dueDate < today;
}

/** An invoice as the list shows it. */
export interface InvoiceSummary {
  id: string;
  number: string;
  status: InvoiceStatus;
  customer: string;
  issueDate: string;
  dueDate: string;
  totalCents: bigint;
  paidCents: bigint;
  currency: Currency;
}

export interface InvoiceFilters {
  status?: InvoiceStatus;
  customerId?: string;
  /** Inclusive, on the issue date. */
  dateFrom?: string;
  dateTo?: string;
  /** Filters the page served, not the whole list (spec read rule 2). */
  overdueOnly?: boolean;
}

interface SummaryRow {
  id: string;
  number: string;
  status: InvoiceStatus;
  customer: string;
  issue_date: string;
  due_date: string;
  total_cents: bigint;
  paid_cents: bigint;
  currency: Currency;
  created_at: string;
}

/**
 * The invoice list's query: newest first by issue date, then creation, then id; one row more
 * than the page. Status, shown and filtered on, follows the status rule as of `today`.
 */
export function invoiceListQuery(businessId: string, filters: InvoiceFilters, after: readonly string[] | null, limit: number, today: string) {
  const where = ['i.business_id = ?'];
  const params: unknown[] = [today, businessId];
  const add = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filters.status !== undefined) add(`${STATUS_SQL} = ?`, today, filters.status);
  if (filters.customerId !== undefined) add('i.customer_id = ?', filters.customerId);
  if (filters.dateFrom !== undefined) add('i.issue_date >= ?', filters.dateFrom);
  if (filters.dateTo !== undefined) add('i.issue_date <= ?', filters.dateTo);
  if (after) add('(i.issue_date, i.created_at, i.id) < (?, ?, ?)', ...after);
  return {
    sql: `SELECT i.id, i.number, ${STATUS_SQL} AS status, c.name AS customer, i.issue_date, i.due_date, i.total_cents, i.paid_cents, i.currency, i.created_at
     FROM invoices i JOIN customers c ON c.id = i.customer_id
     WHERE ${where.join(' AND ')}
     ORDER BY i.issue_date DESC, i.created_at DESC, i.id DESC LIMIT ?`,
    params: [...params, limit + 1],
  };
}

/**
 * A page of a business's invoices. overdueOnly is applied to the page after it is cut, as read
 * rule 2 says: a page may then hold fewer rows than the limit, or none, while nextCursor is set.
 */
export function listInvoices(db: Db, businessId: string, filters: InvoiceFilters, request: PageRequest, today: string): Page<InvoiceSummary> {
  const { overdueOnly, ...listFilters } = filters;
  const scope: ListScope = { list: 'invoices', filters: { businessId, ...listFilters, overdueOnly: overdueOnly ?? false } };
  const query = invoiceListQuery(businessId, listFilters, pageStart(db, scope, request), request.limit, today);
  const page = pageOf(db, scope, request, all<SummaryRow>(db, query.sql, ...query.params), (row) => [row.issue_date, row.created_at, row.id]);
  const rows = page.rows
    .map((row) => ({
      id: row.id,
      number: row.number,
      status: row.status,
      customer: row.customer,
      issueDate: row.issue_date,
      dueDate: row.due_date,
      totalCents: row.total_cents,
      paidCents: row.paid_cents,
      currency: row.currency,
    }))
    .filter((row) => !overdueOnly || isOverdue(row, today));
  return { rows, nextCursor: page.nextCursor };
}
