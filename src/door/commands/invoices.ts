import { type PaidSession, receiveCardPayment } from '../../books/card-payments.js';
import { markOverdueInvoices, markViewed, recordPayment, remindInvoice, sendInvoice, voidInvoice, type NewPayment } from '../../books/invoice-posting.js';
import { createInvoice, findInvoice, type NewInvoice, relinkInvoice, UNPAID_STATUSES } from '../../books/invoices.js';
import { todayUtc } from '../../clock.js';
import { deliverEmails } from '../../email/deliver.js';
import type { Currency, ForeignCurrency } from '../../money.js';
import type { FxProvider } from '../../config.js';
import { lookUpRate } from '../../rates/look-up.js';
import type { QuotedRates } from '../../rates/provider.js';
import { pendingEmailIds } from '../../store/outbox.js';
import { type DoorServices, defineCommand, type Writer, writeNow } from '../door.js';
import { INSTALLATION_REACH } from '../reach.js';
import { storeQuoteCommand } from './installation.js';

/** Invoices: drafted, sent, reminded, paid, viewed, voided, relinked, and found overdue. */

/** Where links in emails point (DAYBOOK_SITE_URL), and how old a stored rate may be (DAYBOOK_RATE_MAX_AGE_DAYS). */
interface InvoiceSettings {
  siteUrl: string;
  rateMaxAgeDays?: number;
}

export const createInvoiceCommand = defineCommand({
  name: 'invoice.create',
  /** `entityId` undefined: the only business the key reaches. */
  scope: (input: { entityId: string | undefined; invoice: Omit<NewInvoice, 'business'> }) => ({ business: input.entityId }),
  run: ({ db, clock, actor, reached }, input) => createInvoice(db, clock, actor, { ...input.invoice, business: reached.business! }),
});

export const sendInvoiceCommand = defineCommand({
  name: 'invoice.send',
  scope: (input: { invoiceId: string } & InvoiceSettings) => ({ invoice: input.invoiceId }),
  async prepare(services, writer, input) {
    const invoice = findInvoice(services.db, input.invoiceId, todayUtc(services.clock));
    if (invoice?.status === 'draft') await ensureRate(services, writer, invoice.currency, invoice.issueDate);
  },
  run: ({ db, clock, actor }, input) => sendInvoice(db, clock, actor, input.invoiceId, { siteUrl: input.siteUrl }, input.rateMaxAgeDays),
  afterCommit: (services, sent) => deliver(services, sent.invoice.id),
});

export const remindInvoiceCommand = defineCommand({
  name: 'invoice.remind',
  scope: (input: { invoiceId: string } & InvoiceSettings) => ({ invoice: input.invoiceId }),
  run: ({ db, clock, actor }, input) => remindInvoice(db, clock, actor, input.invoiceId, { siteUrl: input.siteUrl }),
  afterCommit: (services, reminder) => deliver(services, reminder.invoiceId),
});

export const recordPaymentCommand = defineCommand({
  name: 'invoice.recordPayment',
  scope: (input: NewPayment) => ({ invoice: input.invoiceId }),
  async prepare(services, writer, input) {
    const invoice = findInvoice(services.db, input.invoiceId, todayUtc(services.clock));
    // Nothing to convert on an invoice that cannot take a payment: the work answers 409 for it.
    if (invoice && UNPAID_STATUSES.includes(invoice.status)) await ensureRate(services, writer, invoice.currency, input.paidAt);
  },
  run: ({ db, clock, actor }, input) => recordPayment(db, clock, actor, input),
});

export const voidInvoiceCommand = defineCommand({
  name: 'invoice.void',
  scope: (input: { invoiceId: string }) => ({ invoice: input.invoiceId }),
  run: ({ db, clock, actor }, input) => {
    const before = findInvoice(db, input.invoiceId)?.status;
    return { before, after: voidInvoice(db, clock, actor, input.invoiceId) };
  },
});

export const relinkInvoiceCommand = defineCommand({
  name: 'invoice.relink',
  scope: (input: { invoiceId: string }) => ({ invoice: input.invoiceId }),
  run: ({ db, clock, actor }, input) => relinkInvoice(db, clock, actor, input.invoiceId),
});

/** The customer opens the pay page of a sent invoice: it becomes viewed, once. */
export const markViewedCommand = defineCommand({
  name: 'invoice.view',
  scope: (input: { invoiceId: string }) => ({ invoice: input.invoiceId }),
  run: ({ db, clock }, input) => markViewed(db, clock, input.invoiceId),
  leavesNoRowWhen: (changed) => !changed,
});

/** A paid Checkout Session, stored once as a card payment `received` (posting it is a step of its own). */
export const receiveCardPaymentCommand = defineCommand({
  name: 'card_payment.receive',
  scope: (input: PaidSession) => ({ invoice: input.invoiceId }),
  run: ({ db, clock, actor }, input) => receiveCardPayment(db, clock, actor, input),
  // The same session delivered again stores nothing.
  leavesNoRowWhen: (result) => !result.received,
});

/** The overdue job: invoices with money owed past their due date are recorded as overdue. */
export const markOverdueCommand = defineCommand({
  name: 'invoice.overdue',
  scope: () => ({ installation: true }),
  run: ({ db, clock }) => markOverdueInvoices(db, clock),
  leavesNoRowWhen: (moved) => moved === 0,
});

/**
 * A foreign invoice posts at a stored rate. When none is stored for the date, the configured
 * provider is asked once, before the write's transaction; its rates are stored through the
 * door under the writer that asked. What it could not give is said in the 422 the write then
 * answers.
 */
async function ensureRate(services: DoorServices, writer: Writer, currency: Currency, date: string): Promise<void> {
  if (currency === 'USD') return;
  const { config, log } = services;
  if (!config) throw new Error('write door: looking up a rate needs the server’s settings');
  const provider = { kind: config.fxProvider, url: config.fxProviderUrl };
  const storer: Writer = { actor: writer.actor, reach: INSTALLATION_REACH };
  const store = (source: FxProvider, quoted: QuotedRates) => writeNow(services, storer, storeQuoteCommand, { source, quoted });
  const found = await lookUpRate(services.db, services.clock, store, provider, currency as ForeignCurrency, date, {
    maxAgeDays: config.rateMaxAgeDays,
  });
  if (found.problem) log?.warn({ currency, date, problem: found.problem }, found.rate ? 'using an older exchange rate' : 'no exchange rate to be had');
}

/** Emails written by a write are delivered after its commit; a failure leaves them for the retries. */
async function deliver(services: DoorServices, invoiceId: string): Promise<void> {
  const { db, clock, mailer, log } = services;
  // Without a mailer (the admin CLI) the outbox job delivers them.
  if (!mailer || !log) return;
  const ids = pendingEmailIds(db, invoiceId);
  if (ids.length > 0) await deliverEmails(db, clock, mailer, log, ids);
}
