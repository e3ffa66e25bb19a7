import { Type } from '@sinclair/typebox';
import { findInvoice, type Invoice, invoiceBalanceCents, INVOICE_STATUSES, type InvoiceSummary, listInvoices as listBusinessInvoices, termsText } from '../../books/invoices.js';
import { payToken, payUrl } from '../../books/pay-links.js';
import { todayUtc } from '../../clock.js';
import type { Db } from '../../db/connection.js';
import { notFound, validationFailed } from '../../errors.js';
import { defineRead, defineWrite } from '../../http/operation.js';
import { money, parseCents } from '../../money.js';
import { createInvoiceCommand, recordPaymentCommand, remindInvoiceCommand, sendInvoiceCommand } from '../../door/commands/invoices.js';
import {
  BooleanParam,
  CurrencyCode,
  CursorParam,
  DigitString,
  EntityId,
  IsoDate,
  LimitParam,
  Money,
  Nullable,
  PositiveCents,
  Strict,
  StringEnum,
  Text,
  Uuid,
} from '../schemas/common.js';
import { pageRequestOf } from './paging.js';

/** The four methods the API records; the fifth (stripe) is the pay page's. */
const API_PAYMENT_METHODS = ['check', 'cash', 'wire', 'other'] as const;

/**
 * A decimal greater than zero: a decimal, with a digit other than 0 in it. Two patterns rather
 * than one with a lookahead, which Go's and other RE2-style engines cannot read.
 */
const QUANTITY_RULE = 'must be a number greater than zero with up to 6 decimals, such as 2 or 1.5';
const Quantity = Type.Unsafe<string>({
  type: 'string',
  pattern: '^[0-9]{1,30}(\\.[0-9]{1,6})?$',
  'x-error': QUANTITY_RULE,
  allOf: [{ type: 'string', pattern: '^[0.]*[1-9][0-9.]*$', 'x-error': QUANTITY_RULE }],
  description: 'a decimal greater than zero, up to 6 decimal places',
});

/**
 * A percentage from 0 to 100 with up to 6 decimals, as src/books/invoice-math.ts holds it. The
 * allOf (checked first) keeps the message for a malformed rate, the pattern the one for a rate
 * above 100.
 */
const TaxRate = Type.Unsafe<string>({
  type: 'string',
  allOf: [{ type: 'string', pattern: '^[0-9]{1,3}(\\.[0-9]{1,6})?$', 'x-error': 'must be a percentage from 0 to 100 with up to 6 decimals, such as 8.875' }],
  pattern: '^(?:0?[0-9]{1,2}(?:\\.[0-9]{1,6})?|100(?:\\.0{1,6})?)$',
  'x-error': 'must be between 0 and 100',
  description: '0 to 100, up to 6 decimal places',
});

export const InvoiceSummarySchema = Strict(
  {
    id: Uuid,
    number: Type.String(),
    status: StringEnum(INVOICE_STATUSES),
    customer: Type.String({ description: 'customer name' }),
    issueDate: IsoDate,
    dueDate: IsoDate,
    total: Money,
    paid: Money,
    balance: Money,
    currency: CurrencyCode,
  },
  { title: 'InvoiceSummary' },
);

export const InvoiceDetailSchema = Strict(
  {
    id: Uuid,
    number: Type.String(),
    status: StringEnum(INVOICE_STATUSES),
    issueDate: IsoDate,
    dueDate: IsoDate,
    currency: CurrencyCode,
    customer: Strict({ id: Uuid, name: Type.String() }),
    terms: Nullable(Type.String()),
    subtotal: Money,
    tax: Money,
    total: Money,
    paid: Money,
    balance: Money,
    memo: Nullable(Type.String()),
    lines: Type.Array(
      Strict({ description: Type.String(), quantity: Type.String(), unitPrice: Money, amount: Money, account: Type.String({ description: 'account name' }) }),
    ),
    payments: Type.Array(Strict({ amount: Money, method: Type.String(), paidAt: IsoDate })),
    payUrl: Type.String({
      description:
        "the customer's own pay page: anyone with the link can open and pay the invoice. `{payUrl}/invoice.pdf` is the invoice as a PDF; one PDF prints line descriptions up to 200,000 characters in all, then says how many more lines the page lists, with the whole invoice's totals",
    }),
  },
  { title: 'InvoiceDetail' },
);

function presentSummary(invoice: InvoiceSummary) {
  const of = (cents: bigint) => money(cents, invoice.currency);
  return {
    id: invoice.id,
    number: invoice.number,
    status: invoice.status,
    customer: invoice.customer,
    issueDate: invoice.issueDate,
    dueDate: invoice.dueDate,
    total: of(invoice.totalCents),
    paid: of(invoice.paidCents),
    balance: of(invoiceBalanceCents(invoice)),
    currency: invoice.currency,
  };
}

export function presentInvoice(db: Db, siteUrl: string, invoice: Invoice) {
  const of = (cents: bigint) => money(cents, invoice.currency);
  return {
    id: invoice.id,
    number: invoice.number,
    status: invoice.status,
    issueDate: invoice.issueDate,
    dueDate: invoice.dueDate,
    currency: invoice.currency,
    customer: { id: invoice.customer.id, name: invoice.customer.name },
    terms: termsText(invoice.paymentTermsDays),
    subtotal: of(invoice.subtotalCents),
    tax: of(invoice.taxCents),
    total: of(invoice.totalCents),
    paid: of(invoice.paidCents),
    balance: of(invoiceBalanceCents(invoice)),
    memo: invoice.memo,
    lines: invoice.lines.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unitPrice: of(line.unitPriceCents),
      amount: of(line.amountCents),
      account: line.account,
    })),
    payments: invoice.payments.map((payment) => ({ amount: of(payment.amountCents), method: payment.method, paidAt: payment.paidAt })),
    payUrl: payUrl(siteUrl, payToken(db, invoice.id)),
  };
}

const NewLine = Strict({
  description: Text(2000, { minLength: 1 }),
  quantity: Quantity,
  unitPriceCents: DigitString,
  accountId: Uuid,
});

export const createInvoice = defineWrite({
  id: 'invoices.create',
  method: 'POST',
  path: '/invoices',
  permission: 'invoices:write',
  summary: 'Create a draft invoice',
  description:
    'A draft: numbered, priced exactly, due on dueDate or after the payment terms (the request, the customer, the business, then the account). Nothing is sent, emailed or posted.',
  params: Strict({}),
  query: Strict({}),
  body: Strict({
    entityId: Type.Optional(EntityId),
    customerId: Uuid,
    issueDate: Type.Optional(IsoDate),
    paymentTermsDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
    dueDate: Type.Optional(IsoDate),
    lines: Type.Array(NewLine, { minItems: 1, maxItems: 500 }),
    currency: Type.Optional(CurrencyCode),
    taxRatePercent: Type.Optional(TaxRate),
    memo: Type.Optional(Text(2000)),
  }),
  responses: {
    201: { description: 'The draft', schema: Strict({ invoiceId: Uuid, invoiceNumber: Type.String(), webUrl: Type.String() }) },
  },
  errors: ['entity_not_allowed', 'not_found', 'conflict', 'period_locked'],
  command: createInvoiceCommand,
  input: ({ body }) => ({
    entityId: body.entityId,
    invoice: {
      customerId: body.customerId,
      lines: body.lines.map((line) => ({ ...line, unitPriceCents: parseCents(line.unitPriceCents) })),
      ...(body.issueDate !== undefined ? { issueDate: body.issueDate } : {}),
      ...(body.dueDate !== undefined ? { dueDate: body.dueDate } : {}),
      ...(body.paymentTermsDays !== undefined ? { paymentTermsDays: body.paymentTermsDays } : {}),
      ...(body.currency !== undefined ? { currency: body.currency } : {}),
      ...(body.taxRatePercent !== undefined ? { taxRatePercent: body.taxRatePercent } : {}),
      ...(body.memo !== undefined ? { memo: body.memo } : {}),
    },
  }),
  reply: (created, { services }) => ({
    status: 201,
    body: { invoiceId: created.invoiceId, invoiceNumber: created.invoiceNumber, webUrl: payUrl(services.config.siteUrl, created.payToken) },
  }),
});

export const listInvoices = defineRead({
  id: 'invoices.list',
  method: 'GET',
  path: '/invoices',
  permission: 'invoices:read',
  summary: 'List the invoices of a business, newest first',
  description:
    'Newest first by issue date. overdueOnly filters the page requested, not the whole list: a page may hold fewer rows than limit, or none, while nextCursor is set; keep following nextCursor until it is null.',
  params: Strict({}),
  query: Strict({
    entityId: Type.Optional(EntityId),
    status: Type.Optional(StringEnum(INVOICE_STATUSES)),
    customerId: Type.Optional(Uuid),
    dateFrom: Type.Optional(IsoDate),
    dateTo: Type.Optional(IsoDate),
    overdueOnly: Type.Optional(BooleanParam),
    cursor: Type.Optional(CursorParam),
    limit: Type.Optional(LimitParam),
  }),
  body: Strict({}),
  responses: {
    200: { description: 'A page of invoices', schema: Strict({ invoices: Type.Array(InvoiceSummarySchema), nextCursor: Nullable(Type.String()) }) },
  },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, query, reached }) {
    const business = reached.business!;
    if (query.dateFrom !== undefined && query.dateTo !== undefined && query.dateTo < query.dateFrom) {
      throw validationFailed('dateTo', 'must not be before dateFrom');
    }
    const page = listBusinessInvoices(
      services.db,
      business.id,
      { status: query.status, customerId: query.customerId, dateFrom: query.dateFrom, dateTo: query.dateTo, overdueOnly: query.overdueOnly },
      pageRequestOf(query),
      todayUtc(services.clock),
    );
    return { status: 200, body: { invoices: page.rows.map(presentSummary), nextCursor: page.nextCursor } };
  },
});

export const getInvoice = defineRead({
  id: 'invoices.get',
  method: 'GET',
  path: '/invoices/:id',
  permission: 'invoices:read',
  summary: 'Get one invoice',
  description: 'The customer, lines, payments, totals and balance in the invoice\'s currency, and the customer\'s pay link.',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({}),
  responses: { 200: { description: 'The invoice', schema: InvoiceDetailSchema } },
  errors: ['not_found'],
  scope: ({ params }) => ({ invoice: params.id }),
  handle({ services, params }) {
    const invoice = findInvoice(services.db, params.id, todayUtc(services.clock));
    if (!invoice) throw notFound('invoice');
    return { status: 200, body: presentInvoice(services.db, services.config.siteUrl, invoice) };
  },
});

export const sendInvoiceOperation = defineWrite({
  id: 'invoices.send',
  method: 'POST',
  path: '/invoices/:id/send',
  permission: 'invoices:write',
  summary: 'Send a draft: post it and email it',
  description:
    'Posts the invoice (a foreign one converted once at its issue date\'s rate) and emails the customer before answering; cannot be undone through the API. Only a draft can be sent (409 otherwise). Without a rate for the issue date, 422 and the draft stays as it was.',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({}),
  responses: { 200: { description: 'The invoice, now sent', schema: InvoiceDetailSchema } },
  errors: ['not_found', 'conflict', 'period_locked', 'read_only_billing_state'],
  command: sendInvoiceCommand,
  input: ({ params, services }) => ({ invoiceId: params.id, siteUrl: services.config.siteUrl, rateMaxAgeDays: services.config.rateMaxAgeDays }),
  reply: (sent, { services }) => ({ status: 200, body: presentInvoice(services.db, services.config.siteUrl, sent.invoice) }),
});

export const remindInvoiceOperation = defineWrite({
  id: 'invoices.remind',
  method: 'POST',
  path: '/invoices/:id/remind',
  permission: 'invoices:write',
  summary: 'Email the customer a reminder',
  description:
    'For a sent, viewed, partially paid or overdue invoice; nothing is posted, so it works while billing is past due. A second reminder within 24 hours is 409. No body (an empty object is accepted).',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({}),
  responses: { 200: { description: 'The reminder went out', schema: Strict({ invoiceId: Uuid, remindedAt: Type.String({ description: 'ISO 8601 instant' }) }) } },
  errors: ['not_found', 'conflict'],
  command: remindInvoiceCommand,
  input: ({ params, services }) => ({ invoiceId: params.id, siteUrl: services.config.siteUrl }),
  reply: (reminder) => ({ status: 200, body: { invoiceId: reminder.invoiceId, remindedAt: reminder.remindedAt } }),
});

export const recordPaymentOperation = defineWrite({
  id: 'invoices.recordPayment',
  method: 'POST',
  path: '/invoices/:id/payments',
  permission: 'invoices:write',
  summary: 'Record a payment against a sent invoice',
  description:
    'The state is checked before the amount: a draft, void or paid invoice is 409; an amount over the balance is 422. A foreign payment is converted at its own date\'s rate, and the difference from the issue date\'s rate posts to realised FX gain or loss.',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({
    amountCents: PositiveCents,
    method: StringEnum(API_PAYMENT_METHODS),
    paidAt: Type.Optional(IsoDate),
    memo: Type.Optional(Text(2000)),
  }),
  responses: {
    201: {
      description: 'The payment, and where the invoice stands',
      schema: Strict({ paymentId: Uuid, invoiceId: Uuid, status: StringEnum(INVOICE_STATUSES), balance: Money }),
    },
  },
  errors: ['not_found', 'conflict', 'period_locked', 'read_only_billing_state'],
  command: recordPaymentCommand,
  input: ({ params, body, services }) => ({
    invoiceId: params.id,
    amountCents: parseCents(body.amountCents),
    method: body.method,
    paidAt: body.paidAt ?? todayUtc(services.clock),
    ...(body.memo !== undefined ? { memo: body.memo } : {}),
    rateMaxAgeDays: services.config.rateMaxAgeDays,
  }),
  reply: ({ paymentId, invoice }) => ({
    status: 201,
    body: { paymentId, invoiceId: invoice.id, status: invoice.status, balance: money(invoiceBalanceCents(invoice), invoice.currency) },
  }),
});
