import { cardPaymentByIntent, findCardPayment, type StoredCardPayment } from '../books/card-payments.js';
import { NotSettled, ProcessorRefused, ProcessorUnavailable, type SessionReport } from '../cards/sessions.js';
import type { ChargeNoticeEvent } from '../cards/webhook-events.js';
import { ApiError } from '../errors.js';
import { postCardPaymentCommand, receiveCardPaymentCommand, recordCardNoticeCommand } from './commands/cards.js';
import { type DoorServices, type Writer, write, writeNow } from './door.js';

/**
 * How a card payment the processor took reaches the books, whoever learns of it first (the
 * webhook, the page the customer returns to, or the card-payments job): it is stored, then
 * posted. Storing is what must never fail to happen; posting may wait (the processor has not
 * booked the charge, a closed period, billing past due, no rate) and is tried again by the job.
 */

export type StoreOutcome = 'stored' | 'known' | 'refused';

/**
 * Stores a paid session of one of `businessId`'s invoices once. A session this business could
 * not have made (another business's invoice, another currency, an id stored for another
 * invoice) is refused: nothing a retry would change, so it is logged and not stored.
 */
export function storePaidSession(services: DoorServices, writer: Writer, report: SessionReport & { paidOn: string; invoiceId: string }, via: 'webhook' | 'return' | 'job'): StoreOutcome {
  try {
    const { received } = writeNow(services, writer, receiveCardPaymentCommand, {
      sessionId: report.sessionId,
      invoiceId: report.invoiceId,
      amountCents: report.amountCents,
      currency: report.currency,
      paidOn: report.paidOn,
      paymentIntentId: report.paymentIntentId,
      via,
    });
    return received ? 'stored' : 'known';
  } catch (error) {
    if (!isRefusal(error)) throw error;
    services.log?.warn({ sessionId: report.sessionId, reason: (error as Error).message }, 'card payment not stored');
    return 'refused';
  }
}

export type PostOutcome = 'posted' | 'posted_already' | 'waiting';

/**
 * Posts a stored card payment. When it cannot be posted yet it stays received: the reason is
 * logged, Today raises it, and the job tries again. Only a bug is thrown.
 */
export async function postStoredCardPayment(services: DoorServices, writer: Writer, stored: Pick<StoredCardPayment, 'businessId' | 'sessionId' | 'invoiceId'>): Promise<PostOutcome> {
  const input = { businessId: stored.businessId, sessionId: stored.sessionId, invoiceId: stored.invoiceId, rateMaxAgeDays: services.config?.rateMaxAgeDays };
  try {
    const { result } = (await write(services, writer, postCardPaymentCommand, input)) as { result: { posted: boolean } };
    return result.posted ? 'posted' : 'posted_already';
  } catch (error) {
    if (!isRefusal(error) && !(error instanceof NotSettled) && !(error instanceof ProcessorUnavailable) && !(error instanceof ProcessorRefused)) throw error;
    const level = error instanceof ProcessorRefused ? 'error' : 'warn';
    services.log?.[level]({ businessId: stored.businessId, sessionId: stored.sessionId, reason: (error as Error).message }, 'card payment received, not posted yet');
    return 'waiting';
  }
}

/** Stores a paid session and posts it: the return page and the job. */
export async function recordPaidSession(services: DoorServices, writer: Writer, businessId: string, report: SessionReport, via: 'return' | 'job'): Promise<PostOutcome | StoreOutcome | 'not_paid'> {
  if (!report.paid || report.invoiceId === null || report.paidOn === null) return 'not_paid';
  const stored = storePaidSession(services, writer, { ...report, invoiceId: report.invoiceId, paidOn: report.paidOn }, via);
  if (stored === 'refused') return stored;
  const found = findCardPayment(services.db, businessId, report.sessionId);
  if (!found || found.state === 'posted') return 'posted_already';
  return postStoredCardPayment(services, writer, found);
}

/** Keeps a refund or dispute of one of the business's card payments; one of a payment Daybook never stored is only logged. */
export function storeChargeNotice(services: DoorServices, writer: Writer, businessId: string, notice: ChargeNoticeEvent): boolean {
  const payment = notice.paymentIntentId === null ? undefined : cardPaymentByIntent(services.db, businessId, notice.paymentIntentId);
  if (!payment) {
    services.log?.warn({ businessId, eventId: notice.eventId, notice: notice.notice }, 'card notice for a payment Daybook never stored; nothing kept');
    return false;
  }
  return writeNow(services, writer, recordCardNoticeCommand, {
    eventId: notice.eventId,
    kind: notice.notice,
    invoiceId: payment.invoiceId,
    paymentIntentId: notice.paymentIntentId!,
    amountCents: notice.amountCents,
    currency: notice.currency,
    reportedOn: notice.reportedOn,
  }).recorded;
}

/** A refusal the books made on purpose (an ApiError), as against a bug. */
function isRefusal(error: unknown): boolean {
  return error instanceof ApiError;
}
