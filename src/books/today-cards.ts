import { addDays } from '../dates.js';
import { all } from '../db/statements.js';
import { type Currency, formatMoney, isCurrency, usd } from '../money.js';
import { findCardProcessor } from './card-processors.js';
import { postingDay } from './card-payments.js';
import { getTenant } from './tenants.js';
import { invoiceUrl, type Rule } from './today-signal.js';

/**
 * Today's rules for card payments (docs/today.md): a payment the processor took that is not
 * yet in the books, money held for a customer because a card payment was more than the invoice
 * owed, and refunds and disputes the processor reported, which Daybook does not post.
 */

/** How long a deposit, refund or dispute stays on Today after it happened. */
export const CARD_NOTICE_DAYS = 30;

interface WaitingRow {
  session_id: string;
  invoice_id: string;
  number: string;
  issue_date: string;
  received_at: string;
  amount_cents: bigint;
  currency: Currency;
  paid_on: string;
}

/** Received and not posted: blocking until it is, because the books are missing money the firm has. */
export const cardPaymentsWaiting: Rule = (db, business, today, context) => {
  const rows = all<WaitingRow>(
    db,
    `SELECT c.session_id, c.invoice_id, i.number, i.issue_date, c.received_at, c.amount_cents, c.currency, c.paid_on FROM card_payments c JOIN invoices i ON i.id = c.invoice_id
     WHERE c.business_id = ? AND c.state = 'received' ORDER BY c.received_at, c.session_id`,
    business.id,
  );
  if (rows.length === 0) return [];
  const pastDue = getTenant(db, business.tenantId).billingState === 'past_due';
  const connected = findCardProcessor(db, business.id) !== undefined;
  return rows.map((row) => {
    const { postOn, why } = postingDay(db, { businessId: business.id, paidOn: row.paid_on }, row.issue_date);
    const blocker =
      postOn > today
        ? { why: `it is posted on ${postOn} (taken ${why}), which has not come yet`, action: `Nothing: the card-payments job posts it on ${postOn}.` }
        : pastDue
          ? { why: 'billing is past due, so nothing is posted', action: 'Settle the subscription; the card-payments job then posts it.' }
          : !connected
            ? { why: 'the business is no longer connected to its card processor, which Daybook asks what the payment settled as', action: 'Connect it again (daybook business set-payments); the card-payments job then posts it.' }
            : {
                why: 'Daybook has not yet learned from the processor what it settled as (the charge not yet booked to its balance, the processor unreachable, or a key it refuses), or no exchange rate is stored for the day',
                action: `The card-payments job tries every 10 minutes. Received at ${row.received_at}: if it stays, the server log says why on each try ("card payment received, not posted yet"); a key the processor refuses needs the permissions in docs/payments.md.`,
              };
    return {
      kind: 'card_payment_waiting',
      subjectId: row.session_id,
      severity: 'blocking' as const,
      sentence: `A card payment of ${formatMoney(row.amount_cents, row.currency)} for ${row.number}, taken on ${row.paid_on}, is received but not in the books: ${blocker.why}.`,
      action: blocker.action,
      evidence: [{ label: `Invoice ${row.number}, Checkout Session ${row.session_id}`, url: invoiceUrl(context, row.invoice_id) }],
    };
  });
};

/** A card payment larger than what the invoice owed: the excess is held in Customer deposits (shown for 30 days from its posting). */
export const customerDeposits: Rule = (db, business, today, context) =>
  all<{ session_id: string; invoice_id: string; number: string; deposit_usd_cents: bigint; paid_on: string }>(
    db,
    `SELECT c.session_id, c.invoice_id, i.number, c.deposit_usd_cents, c.paid_on FROM card_payments c JOIN invoices i ON i.id = c.invoice_id
     WHERE c.business_id = ? AND c.state = 'posted' AND c.deposit_usd_cents > 0 AND substr(c.posted_at, 1, 10) > ? ORDER BY c.posted_at, c.session_id`,
    business.id,
    addDays(today, -CARD_NOTICE_DAYS),
  ).map((row) => ({
    kind: 'customer_deposit',
    subjectId: row.session_id,
    severity: 'attention' as const,
    sentence: `A card payment on ${row.number} (${row.paid_on}) was more than the invoice still owed: ${usd(row.deposit_usd_cents).formatted} is held in Customer Deposits.`,
    action: 'Refund the excess through the card processor, or apply it to another invoice of the customer with a journal entry from Customer Deposits.',
    evidence: [{ label: `Invoice ${row.number}, Checkout Session ${row.session_id}`, url: invoiceUrl(context, row.invoice_id) }],
  }));

function notices(kind: 'refund' | 'dispute'): Rule {
  return (db, business, today, context) =>
    all<{ event_id: string; invoice_id: string; number: string; amount_cents: bigint; currency: string; reported_on: string }>(
      db,
      `SELECT n.event_id, n.invoice_id, i.number, n.amount_cents, n.currency, n.reported_on FROM card_notices n JOIN invoices i ON i.id = n.invoice_id
       WHERE n.business_id = ? AND n.kind = ? AND n.reported_on > ? ORDER BY n.reported_on, n.event_id`,
      business.id,
      kind,
      addDays(today, -CARD_NOTICE_DAYS),
    ).map((row) => {
      const amount = isCurrency(row.currency) ? formatMoney(row.amount_cents, row.currency) : `${row.amount_cents} ${row.currency} cents`;
      return {
        kind: `card_${kind}`,
        subjectId: row.event_id,
        severity: kind === 'dispute' ? ('urgent' as const) : ('attention' as const),
        sentence:
          kind === 'dispute'
            ? `The customer disputed the card payment on ${row.number}: ${amount}, reported on ${row.reported_on}. Daybook has not posted anything for it.`
            : `The card processor refunded ${amount} of the payment on ${row.number}, reported on ${row.reported_on}. Daybook has not posted the refund.`,
        action:
          kind === 'dispute'
            ? "Answer the dispute in the processor's dashboard; once it is decided, book the outcome with a journal entry."
            : 'Book the refund with a journal entry (the clearing account against the invoice’s revenue or Customer Deposits).',
        evidence: [{ label: `Invoice ${row.number}, event ${row.event_id}`, url: invoiceUrl(context, row.invoice_id) }],
      };
    });
}

export const cardRefunds = notices('refund');
export const cardDisputes = notices('dispute');
