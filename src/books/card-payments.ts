import { type Clock, nowIso, todayUtc } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { addDays } from '../dates.js';
import { convertToUsdCents, type Currency, CURRENCIES, isCurrency } from '../money.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { systemAccountId } from './chart.js';
import { effectiveRate, FRESH_RATE_DAYS } from './fx.js';
import { allocate } from './invoice-math.js';
import { applyPayment, usdPerUnitOn } from './invoice-posting.js';
import { findInvoice, invoiceBalanceCents, UNPAID_STATUSES } from './invoices.js';
import { assertPostingAllowed, type JournalLineDraft, postEntry, withPostingFields } from './ledger.js';
import { lockedThrough } from './periods.js';

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

/** What the processor's balance transaction says a card payment settled as, in its account's currency. */
export interface Settlement {
  balanceTransactionId: string;
  /** The processor account's currency, upper case: USD for a US account. */
  currency: string;
  grossCents: bigint;
  feeCents: bigint;
}

/** A stored card payment, as the posting step and Today read it. */
export interface StoredCardPayment {
  sessionId: string;
  businessId: string;
  invoiceId: string;
  amountCents: bigint;
  currency: Currency;
  paidOn: string;
  paymentIntentId: string | null;
  receivedVia: CardPaymentSource;
  receivedAt: string;
  state: (typeof CARD_PAYMENT_STATES)[number];
}

interface CardPaymentRow {
  session_id: string;
  business_id: string;
  invoice_id: string;
  amount_cents: bigint;
  currency: Currency;
  paid_on: string;
  payment_intent_id: string | null;
  received_via: CardPaymentSource;
  received_at: string;
  state: (typeof CARD_PAYMENT_STATES)[number];
}

const toStored = (row: CardPaymentRow): StoredCardPayment => ({
  sessionId: row.session_id,
  businessId: row.business_id,
  invoiceId: row.invoice_id,
  amountCents: row.amount_cents,
  currency: row.currency,
  paidOn: row.paid_on,
  paymentIntentId: row.payment_intent_id,
  receivedVia: row.received_via,
  receivedAt: row.received_at,
  state: row.state,
});

export function findCardPayment(db: Db, businessId: string, sessionId: string): StoredCardPayment | undefined {
  const row = one<CardPaymentRow>(db, 'SELECT * FROM card_payments WHERE business_id = ? AND session_id = ?', businessId, sessionId);
  return row && toStored(row);
}

/** Card payments received and not yet posted, oldest first: what the posting step still owes the books. */
export function unpostedCardPayments(db: Db, businessId?: string): StoredCardPayment[] {
  const rows =
    businessId === undefined
      ? all<CardPaymentRow>(db, "SELECT * FROM card_payments WHERE state = 'received' ORDER BY received_at, session_id")
      : all<CardPaymentRow>(db, "SELECT * FROM card_payments WHERE state = 'received' AND business_id = ? ORDER BY received_at, session_id", businessId);
  return rows.map(toStored);
}

export interface PostedCardPayment {
  /** False when it was posted already (the webhook and the return page racing): nothing was written. */
  posted: boolean;
  invoiceId: string;
  /** The invoice payment, when part of the amount applied to the invoice. */
  paymentId: string | null;
  /** In the invoice's currency: what the invoice still owed, at most the amount. */
  appliedCents: bigint;
  grossUsdCents: bigint;
  feeUsdCents: bigint;
  /** What the invoice did not owe, held for the customer. */
  depositUsdCents: bigint;
}

/**
 * Posts a received card payment to the books, dated the day the processor took it:
 * - the clearing account receives the US dollars the processor credited (its balance
 *   transaction; an account settling in another of the five currencies is converted at that
 *   day's stored rate, by the rules of every other payment);
 * - the part of the amount the invoice still owes is applied to it as a payment of method
 *   `stripe`: the receivable relieved, any difference realised FX gain or loss;
 * - the rest (the invoice was paid or voided while the customer was paying) goes to customer
 *   deposits, to be refunded or applied by the firm;
 * - the fee is an expense against the clearing account, which then holds what the processor
 *   will pay out.
 * A payment taken on a day in a closed period is posted on the first day after the lock (when
 * that day has come). Billing past due refuses it as for any posting; it stays received and the
 * job tries again. Posted already: nothing is written.
 */
export function postCardPayment(
  db: Db,
  clock: Clock,
  actor: Actor,
  key: { businessId: string; sessionId: string },
  settlement: Settlement,
  rateMaxAgeDays = FRESH_RATE_DAYS,
): PostedCardPayment {
  assertInTransaction(db, 'postCardPayment');
  const stored = findCardPayment(db, key.businessId, key.sessionId);
  if (!stored) throw notFound(`no card payment ${key.sessionId} is stored for this business`);
  const invoice = findInvoice(db, stored.invoiceId, todayUtc(clock))!;
  const nothing = { posted: false, invoiceId: invoice.id, paymentId: null, appliedCents: 0n, grossUsdCents: 0n, feeUsdCents: 0n, depositUsdCents: 0n };
  if (stored.state === 'posted') return nothing;
  const { postOn, why } = postingDay(db, stored, invoice.issueDate);
  if (postOn > todayUtc(clock)) throw new ApiError('period_locked', `paidOn: the payment taken on ${stored.paidOn} is posted on ${postOn} (${why}), which has not come yet`);
  withPostingFields({ period_locked: 'paidOn' }, () => assertPostingAllowed(db, stored.businessId, postOn));
  const { grossUsdCents, feeUsdCents } = settlementInUsd(db, clock, settlement, postOn, rateMaxAgeDays);
  const owed = UNPAID_STATUSES.includes(invoice.status) ? invoiceBalanceCents(invoice) : 0n;
  const appliedCents = stored.amountCents < owed ? stored.amountCents : owed;
  const [appliedUsdCents, depositUsdCents] = allocate(grossUsdCents, [appliedCents, stored.amountCents - appliedCents]) as [bigint, bigint];
  const account = (role: Parameters<typeof systemAccountId>[2]) => systemAccountId(db, stored.businessId, role);
  const heldAndFees: JournalLineDraft[] = [
    { accountId: account('card_clearing'), direction: 'debit', amountCents: depositUsdCents, basis: 'both' },
    { accountId: account('customer_deposits'), direction: 'credit', amountCents: depositUsdCents, basis: 'both' },
    { accountId: account('payment_fees'), direction: 'debit', amountCents: feeUsdCents, basis: 'both' },
    { accountId: account('card_clearing'), direction: 'credit', amountCents: feeUsdCents, basis: 'both' },
  ];
  let paymentId: string | null = null;
  let entryId: string | null;
  if (appliedCents > 0n) {
    const cash = { accountRole: 'card_clearing' as const, usdCents: appliedUsdCents, usdPerUnit: effectiveRate(appliedUsdCents, appliedCents) };
    const taken = postOn === stored.paidOn ? '' : `, taken on ${stored.paidOn} ${why}`;
    const payment = { amountCents: appliedCents, method: 'stripe' as const, paidAt: postOn, memo: `Card payment ${stored.sessionId}${taken}` };
    ({ paymentId, entryId } = applyPayment(db, clock, actor, invoice, payment, cash, heldAndFees));
  } else {
    // All of it is held (deposit = gross): the clearing account against Customer Deposits, and the fee.
    const lines = heldAndFees;
    entryId = postEntry(db, clock, actor, {
      businessId: stored.businessId,
      date: postOn,
      memo: `Card payment ${stored.sessionId} on invoice ${invoice.number}, which owed nothing: held as a customer deposit`,
      sourceType: 'card_payment',
      sourceId: stored.sessionId,
      lines: lines.filter((line) => line.amountCents > 0n),
    }).id;
  }
  run(
    db,
    `UPDATE card_payments SET state = 'posted', posted_at = ?, payment_id = ?, journal_entry_id = ?, balance_transaction_id = ?, settlement_currency = ?,
       gross_usd_cents = ?, fee_usd_cents = ?, applied_cents = ?, deposit_usd_cents = ?
     WHERE business_id = ? AND session_id = ?`,
    nowIso(clock),
    paymentId,
    entryId,
    settlement.balanceTransactionId,
    settlement.currency,
    grossUsdCents,
    feeUsdCents,
    appliedCents,
    depositUsdCents,
    stored.businessId,
    stored.sessionId,
  );
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'card_payment.post',
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: {
      sessionId: stored.sessionId,
      balanceTransactionId: settlement.balanceTransactionId,
      appliedCents: appliedCents.toString(),
      grossUsdCents: grossUsdCents.toString(),
      feeUsdCents: feeUsdCents.toString(),
      depositUsdCents: depositUsdCents.toString(),
      paymentId,
    },
  });
  return { posted: true, invoiceId: invoice.id, paymentId, appliedCents, grossUsdCents, feeUsdCents, depositUsdCents };
}

/**
 * The day a card payment posts on: the day the processor took it, but never before its
 * invoice's issue date (an invoice sent ahead of its date can be paid at once; the receivable
 * is not in the books before then), and, when that day is in a closed period, the first day
 * after the lock: the money arrived, a closed period must not keep it out of the books, and
 * locks only move forward. `why` says what moved it.
 */
export function postingDay(db: Db, payment: Pick<StoredCardPayment, 'businessId' | 'paidOn'>, issueDate: string): { postOn: string; why: string } {
  const early = payment.paidOn < issueDate;
  const day = early ? issueDate : payment.paidOn;
  const through = lockedThrough(db, payment.businessId);
  if (through !== null && day <= through) return { postOn: addDays(through, 1), why: 'in a closed period' };
  return { postOn: day, why: early ? "before the invoice's issue date" : '' };
}

/** The day a stored card payment will post on (postingDay), for what must be ready by then: a rate. */
export function cardPaymentPostingDay(db: Db, businessId: string, sessionId: string): string | undefined {
  const stored = findCardPayment(db, businessId, sessionId);
  const invoice = stored && findInvoice(db, stored.invoiceId);
  return stored && invoice ? postingDay(db, stored, invoice.issueDate).postOn : undefined;
}

/** The gross and fee in US cents: as credited for a US-dollar account, else at the day's stored rate. */
function settlementInUsd(db: Db, clock: Clock, settlement: Settlement, paidOn: string, rateMaxAgeDays: number): { grossUsdCents: bigint; feeUsdCents: bigint } {
  if (settlement.grossCents <= 0n || settlement.feeCents < 0n || settlement.feeCents > settlement.grossCents) {
    throw validationFailed('settlement', `the processor reported a gross of ${settlement.grossCents} and a fee of ${settlement.feeCents}`);
  }
  const currency = settlement.currency.toUpperCase();
  if (!isCurrency(currency)) throw validationFailed('settlement', `the processor's account settles in ${currency}, which Daybook cannot convert to US dollars`);
  const usdPerUnit = usdPerUnitOn(db, clock, currency, paidOn, 'paidOn', rateMaxAgeDays);
  if (currency === 'USD') return { grossUsdCents: settlement.grossCents, feeUsdCents: settlement.feeCents };
  return { grossUsdCents: convertToUsdCents(settlement.grossCents, usdPerUnit), feeUsdCents: convertToUsdCents(settlement.feeCents, usdPerUnit) };
}

/** The kinds of thing the processor reports after a payment that Daybook keeps but does not post. */
export const CARD_NOTICE_KINDS = ['refund', 'dispute'] as const;

/** A refund or dispute of a card payment, as the processor reported it. */
export interface CardNotice {
  eventId: string;
  kind: (typeof CARD_NOTICE_KINDS)[number];
  invoiceId: string;
  paymentIntentId: string;
  /**
   * In `currency`'s cents: what was disputed; for a refund, what the charge has had refunded
   * in all so far (the processor reports the running total with each refund).
   */
  amountCents: bigint;
  currency: string;
  reportedOn: string;
}

/** The stored card payment of a payment intent, within one business. */
export function cardPaymentByIntent(db: Db, businessId: string, paymentIntentId: string): StoredCardPayment | undefined {
  const row = one<CardPaymentRow>(db, 'SELECT * FROM card_payments WHERE business_id = ? AND payment_intent_id = ? LIMIT 1', businessId, paymentIntentId);
  return row && toStored(row);
}

/**
 * Keeps a refund or dispute once (the same event again keeps nothing) for Today to raise.
 * Nothing is posted: the firm decides how to book it (docs/payments.md).
 */
export function recordCardNotice(db: Db, clock: Clock, actor: Actor, notice: CardNotice): { recorded: boolean } {
  assertInTransaction(db, 'recordCardNotice');
  const invoice = findInvoice(db, notice.invoiceId);
  if (!invoice) throw notFound('invoice');
  // A refund is kept as what it adds to the refunds kept before: two refunds of 100 arrive as
  // totals of 100 and 200, and the firm must book 100 twice, not 100 and then 200. A total no
  // larger than what is kept (a repeat, or an earlier total arriving late) adds nothing.
  const amountCents = notice.kind === 'refund' ? notice.amountCents - refundedBefore(db, invoice.businessId, notice.paymentIntentId) : notice.amountCents;
  if (amountCents <= 0n) return { recorded: false };
  const { changes } = run(
    db,
    `INSERT INTO card_notices (event_id, business_id, kind, payment_intent_id, invoice_id, amount_cents, currency, reported_on, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (business_id, event_id) DO NOTHING`,
    notice.eventId,
    invoice.businessId,
    notice.kind,
    notice.paymentIntentId,
    invoice.id,
    amountCents,
    notice.currency.toUpperCase(),
    notice.reportedOn,
    nowIso(clock),
  );
  if (changes === 0) return { recorded: false };
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: `card_payment.${notice.kind}`,
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: { eventId: notice.eventId, paymentIntentId: notice.paymentIntentId, amountCents: amountCents.toString(), currency: notice.currency.toUpperCase() },
  });
  return { recorded: true };
}

/** The refunds of a payment intent kept so far, in all. */
function refundedBefore(db: Db, businessId: string, paymentIntentId: string): bigint {
  const row = one<{ total: bigint | null }>(
    db,
    "SELECT sum(amount_cents) AS total FROM card_notices WHERE business_id = ? AND payment_intent_id = ? AND kind = 'refund'",
    businessId,
    paymentIntentId,
  );
  return row?.total ?? 0n;
}
