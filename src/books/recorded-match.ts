import type { Db } from '../db/connection.js';
import { all } from '../db/statements.js';
import { daysBetween } from '../dates.js';
import { RECORDED_MATCH_DAYS } from './import/bank-import.js';

/**
 * How sure an "already recorded as expense X" proposal is (src/books/expenses.ts): a bank line
 * waiting in the review queue has the amount of an expense just recorded, is dated within
 * RECORDED_MATCH_DAYS of it, and names the same vendor or none. Such a match is wrong when the
 * line is another payment of the same amount (to the same vendor, when it names one) in that
 * window: a twin. So its confidence is the share of the business's booked payments that have
 * no twin, measured on its latest MAX_MEASURED_PAYMENTS once there are MIN_MEASURED_PAYMENTS
 * of them; before, the fixed RECORDED_MATCH_CONFIDENCE.
 */

/** The confidence before the books can measure it: a line naming its vendor agrees on three things, one without on two. */
export const RECORDED_MATCH_CONFIDENCE = { vendorNamed: 0.95, noVendor: 0.8 } as const;
/** The payments to measure twins on: at least, and at most the latest. */
export const MIN_MEASURED_PAYMENTS = 30;
const MAX_MEASURED_PAYMENTS = 2000;

interface Payment {
  date: string;
  amountCents: bigint;
  vendorId: string | null;
}

/**
 * The confidence of a match for a line that names its vendor (`vendorNamed`) or not, in this
 * business, when `candidates` waiting lines fit the expense (the nearest was taken): with more
 * than one, the match is a choice among them and is worth at most 1 / candidates, whatever the
 * books say of twins in general.
 */
export function recordedMatchConfidence(db: Db, businessId: string, vendorNamed: boolean, candidates = 1): number {
  const measured = bookedPayments(db, businessId).filter((payment) => !vendorNamed || payment.vendorId !== null);
  const likely =
    measured.length >= MIN_MEASURED_PAYMENTS
      ? (measured.length - withTwins(measured, vendorNamed)) / measured.length
      : vendorNamed
        ? RECORDED_MATCH_CONFIDENCE.vendorNamed
        : RECORDED_MATCH_CONFIDENCE.noVendor;
  return Math.floor(Math.min(likely, 1 / Math.max(1, candidates)) * 100 + 1e-9) / 100;
}

/**
 * The business's latest booked payments, each once: a bank line linked to an expense shares
 * the expense's journal entry and is the same payment, not its twin.
 */
function bookedPayments(db: Db, businessId: string): Payment[] {
  // A linked bank line and its expense are two rows of one payment: twice the rows, grouped,
  // then the latest MAX_MEASURED_PAYMENTS of the payments.
  return all<{ txn_date: string; amount_cents: bigint; vendor_id: string | null }>(db, BOOKED_PAYMENTS_SQL, businessId, 2 * MAX_MEASURED_PAYMENTS)
    .map((row) => ({ date: row.txn_date, amountCents: row.amount_cents, vendorId: row.vendor_id }))
    .sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0))
    .slice(0, MAX_MEASURED_PAYMENTS);
}

/** The latest booked money out of a business (its register index, newest first), one row per journal entry. */
export const BOOKED_PAYMENTS_SQL = `SELECT min(txn_date) AS txn_date, amount_cents, max(vendor_id) AS vendor_id
  FROM (SELECT txn_date, amount_cents, vendor_id, journal_entry_id
        FROM transactions
        WHERE business_id = ? AND direction = 'out' AND journal_entry_id IS NOT NULL
        ORDER BY txn_date DESC, created_at DESC, id DESC
        LIMIT ?)
  GROUP BY journal_entry_id`;

/** How many of `payments` have another of the same amount (and vendor, `sameVendor`) within RECORDED_MATCH_DAYS. */
export function withTwins(payments: readonly Payment[], sameVendor: boolean): number {
  const groups = new Map<string, string[]>();
  for (const payment of payments) {
    const key = sameVendor ? `${payment.amountCents} ${payment.vendorId}` : String(payment.amountCents);
    const dates = groups.get(key);
    if (dates) dates.push(payment.date);
    else groups.set(key, [payment.date]);
  }
  let twins = 0;
  for (const dates of groups.values()) {
    dates.sort();
    dates.forEach((date, index) => {
      const near = (other: string | undefined) => other !== undefined && Math.abs(daysBetween(other, date)) <= RECORDED_MATCH_DAYS;
      if (near(dates[index - 1]) || near(dates[index + 1])) twins += 1;
    });
  }
  return twins;
}
