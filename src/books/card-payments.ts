import { type Clock, nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { one, run } from '../db/statements.js';
import { validationFailed } from '../errors.js';
import { type Currency, CURRENCIES } from '../money.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { findInvoice } from './invoices.js';

/**
 * Card payments the processor took, as Daybook learned of them: stored once per Checkout
 * Session, `received` until posted to the books as a payment of their invoice.
 */

export const CARD_PAYMENT_SOURCES = ['webhook', 'return', 'job'] as const;
/** A card payment is received, then posted to the books. */
export const CARD_PAYMENT_STATES = ['received', 'posted'] as const;
export type CardPaymentSource = (typeof CARD_PAYMENT_SOURCES)[number];

/** A paid Checkout Session, as the processor reported it. */
export interface PaidSession {
  sessionId: string;
  invoiceId: string;
  /** In the session's currency's cents (all five currencies have two decimals). */
  amountCents: bigint;
  /** As the processor writes it (lower case). */
  currency: string;
  /** The UTC day the processor took the payment. */
  paidOn: string;
  paymentIntentId: string | null;
  via: CardPaymentSource;
}

/**
 * Stores a paid session once: a second delivery of it (a repeated webhook, the return page
 * racing the webhook) stores nothing and says so. Refuses a session whose currency is not its
 * invoice's: Daybook made the session in the invoice's currency.
 */
export function receiveCardPayment(db: Db, clock: Clock, actor: Actor, paid: PaidSession): { received: boolean } {
  assertInTransaction(db, 'receiveCardPayment');
  const invoice = findInvoice(db, paid.invoiceId);
  if (!invoice) throw validationFailed('invoiceId', 'names no invoice');
  const currency = paid.currency.toUpperCase();
  if (!(CURRENCIES as readonly string[]).includes(currency) || currency !== invoice.currency) {
    throw validationFailed('currency', `is ${paid.currency}; invoice ${invoice.number} is in ${invoice.currency}`);
  }
  if (paid.amountCents <= 0n) throw validationFailed('amountCents', 'must be greater than zero');
  const { changes } = run(
    db,
    `INSERT INTO card_payments (session_id, business_id, invoice_id, amount_cents, currency, paid_on, payment_intent_id, received_via, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (business_id, session_id) DO NOTHING`,
    paid.sessionId,
    invoice.businessId,
    invoice.id,
    paid.amountCents,
    currency as Currency,
    paid.paidOn,
    paid.paymentIntentId,
    paid.via,
    nowIso(clock),
  );
  if (changes === 0) {
    // Known already: the same delivery again, or the return page racing the webhook. A session
    // id stored for another invoice is no repeat: someone else's signature named it.
    const existing = one<{ invoice_id: string }>(db, 'SELECT invoice_id FROM card_payments WHERE business_id = ? AND session_id = ?', invoice.businessId, paid.sessionId)!;
    if (existing.invoice_id !== invoice.id) throw validationFailed('sessionId', 'is stored for another invoice already; nothing recorded');
    return { received: false };
  }
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'card_payment.receive',
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: { sessionId: paid.sessionId, amountCents: paid.amountCents.toString(), currency, paidOn: paid.paidOn, via: paid.via },
  });
  return { received: true };
}

/** Whether a card payment of this invoice is stored but not yet posted: a second one must not start meanwhile. */
export function hasReceivedCardPayment(db: Db, invoiceId: string): boolean {
  return one<{ found: bigint }>(db, "SELECT 1 AS found FROM card_payments WHERE invoice_id = ? AND state = 'received' LIMIT 1", invoiceId) !== undefined;
}
