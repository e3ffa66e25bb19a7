import { markOverdueInvoices, markViewed, recordPayment, remindInvoice, sendInvoice, voidInvoice, type NewPayment } from '../../books/invoice-posting.js';
import { createInvoice, findInvoice, type NewInvoice, relinkInvoice, UNPAID_STATUSES } from '../../books/invoices.js';
import { todayUtc } from '../../clock.js';
import { deliverEmails } from '../../email/deliver.js';
import { pendingEmailIds } from '../../store/outbox.js';
import { type DoorServices, defineCommand } from '../door.js';
import { ensureRate } from '../ensure-rate.js';

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

/** The overdue job: invoices with money owed past their due date are recorded as overdue. */
export const markOverdueCommand = defineCommand({
  name: 'invoice.overdue',
  scope: () => ({ installation: true }),
  run: ({ db, clock }) => markOverdueInvoices(db, clock),
  leavesNoRowWhen: (moved) => moved === 0,
});

/** Emails written by a write are delivered after its commit; a failure leaves them for the retries. */
async function deliver(services: DoorServices, invoiceId: string): Promise<void> {
  const { db, clock, mailer, log } = services;
  // Without a mailer (the admin CLI) the outbox job delivers them.
  if (!mailer || !log) return;
  const ids = pendingEmailIds(db, invoiceId);
  if (ids.length > 0) await deliverEmails(db, clock, mailer, log, ids);
}
