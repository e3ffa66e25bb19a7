import type { Clock } from '../clock.js';
import { nowIso, todayUtc } from '../clock.js';
import { addDays, daysBetween } from '../dates.js';
import { type Db, inTransaction } from '../db/connection.js';
import { all, int, one, run } from '../db/statements.js';
import { type ForeignCurrency, formatMoney, usd } from '../money.js';
import type { Business } from './businesses.js';
import { rateOnOrBefore } from './fx.js';
import { newId } from '../ids.js';
import { lockedThrough } from './periods.js';
import { getTenant } from './tenants.js';
import { cardDisputes, cardPaymentsWaiting, cardRefunds, customerDeposits } from './today-cards.js';
import { type FoundSignal, invoiceUrl, plural, type Rule, type Severity, SIGNAL_SEVERITIES, type TodayContext } from './today-signal.js';

export { type Evidence, type FoundSignal, SIGNAL_SEVERITIES, type Severity, type TodayContext } from './today-signal.js';

/**
 * Today: what needs the firm's attention in one business, worked out from the books by the rule
 * set in docs/today.md. Each rule yields signals with a severity, a sentence, an action and
 * evidence. Reading Today refreshes the stored signals (when each was last seen; the ones that no
 * longer apply are closed), as opening the Today page does; nothing else in the books changes.
 */

export interface Signal extends FoundSignal {
  id: string;
  firstSeenAt: string;
  lastSeenAt: string;
}

export interface TodayFeed {
  headline: string;
  signals: Signal[];
}

const OVERDUE_URGENT_DAYS = 30;
const REVIEW_URGENT_DAYS = 7;
const DUE_SOON_DAYS = 7;
const KEY_EXPIRY_DAYS = 14;
const PAYMENTS_RECENT_DAYS = 7;

const billingPastDue: Rule = (db, business) => {
  if (getTenant(db, business.tenantId).billingState !== 'past_due') return [];
  return [
    {
      kind: 'billing_past_due',
      subjectId: null,
      severity: 'blocking',
      sentence: 'Billing is past due, so the books are read only: expenses, invoice sends, payments and accepts are refused.',
      action: 'Settle the subscription; writes that post work again at once.',
      evidence: [{ label: 'Account billing state: past due' }],
    },
  ];
};

const draftWithoutRate: Rule = (db, business, _today, context) =>
  all<{ id: string; number: string; currency: ForeignCurrency; issue_date: string }>(
    db,
    "SELECT id, number, currency, issue_date FROM invoices WHERE business_id = ? AND status = 'draft' AND currency <> 'USD' ORDER BY issue_date, number",
    business.id,
  )
    .filter((invoice) => !rateOnOrBefore(db, invoice.currency, invoice.issue_date))
    .map((invoice) => ({
      kind: 'draft_without_rate',
      subjectId: invoice.id,
      severity: 'blocking' as const,
      sentence: `Draft ${invoice.number} is in ${invoice.currency}, and no ${invoice.currency} exchange rate is stored for its issue date, ${invoice.issue_date}.`,
      action: `Set a rate with daybook rate set --currency ${invoice.currency} --date ${invoice.issue_date}, or send it while the rate provider can be reached.`,
      evidence: [{ label: `Invoice ${invoice.number}`, url: invoiceUrl(context, invoice.id) }],
    }));

/** A draft dated on or before the lock can never be sent: send posts on its issue date, and no closed period reopens. */
const draftInClosedPeriod: Rule = (db, business, _today, context) => {
  const through = lockedThrough(db, business.id);
  if (through === null) return [];
  return all<{ id: string; number: string; issue_date: string }>(
    db,
    "SELECT id, number, issue_date FROM invoices WHERE business_id = ? AND status = 'draft' AND issue_date <= ? ORDER BY issue_date, number",
    business.id,
    through,
  ).map((invoice) => ({
    kind: 'draft_in_closed_period',
    subjectId: invoice.id,
    severity: 'attention' as const,
    sentence: `Draft ${invoice.number} cannot be sent: period closed (it is dated ${invoice.issue_date}, and the books are locked through ${through}).`,
    action: `Void it with daybook invoice void --id ${invoice.id}, then draft it again with an issue date after ${through}.`,
    evidence: [{ label: `Invoice ${invoice.number}, issued ${invoice.issue_date}`, url: invoiceUrl(context, invoice.id) }],
  }));
};

interface OwedInvoice {
  id: string;
  number: string;
  customer: string;
  due_date: string;
  currency: 'USD' | ForeignCurrency;
  total_cents: bigint;
  paid_cents: bigint;
}

function owedInvoices(db: Db, businessId: string, where: string, ...params: unknown[]): OwedInvoice[] {
  return all<OwedInvoice>(
    db,
    `SELECT i.id, i.number, c.name AS customer, i.due_date, i.currency, i.total_cents, i.paid_cents
     FROM invoices i JOIN customers c ON c.id = i.customer_id
     WHERE i.business_id = ? AND i.status IN ('sent', 'viewed', 'partially_paid', 'overdue') AND ${where}
     ORDER BY i.due_date, i.number`,
    businessId,
    ...params,
  );
}

const balanceText = (invoice: OwedInvoice) => formatMoney(invoice.total_cents - invoice.paid_cents, invoice.currency);

const longOverdue: Rule = (db, business, today, context) =>
  owedInvoices(db, business.id, 'i.due_date < ?', addDays(today, -OVERDUE_URGENT_DAYS)).map((invoice) => ({
    kind: 'invoice_overdue_30',
    subjectId: invoice.id,
    severity: 'urgent' as const,
    sentence: `${invoice.customer} owes ${balanceText(invoice)} on ${invoice.number}, ${daysBetween(invoice.due_date, today)} days past due.`,
    action: 'Remind the customer (POST /invoices/{id}/remind), or call them.',
    evidence: [{ label: `Invoice ${invoice.number}, due ${invoice.due_date}`, url: invoiceUrl(context, invoice.id) }],
  }));

const recentlyOverdue: Rule = (db, business, today, context) =>
  owedInvoices(db, business.id, 'i.due_date >= ? AND i.due_date < ?', addDays(today, -OVERDUE_URGENT_DAYS), today).map((invoice) => ({
    kind: 'invoice_overdue',
    subjectId: invoice.id,
    severity: 'attention' as const,
    sentence: `${invoice.customer} owes ${balanceText(invoice)} on ${invoice.number}, ${plural(daysBetween(invoice.due_date, today), 'day')} past due.`,
    action: 'Remind the customer (POST /invoices/{id}/remind).',
    evidence: [{ label: `Invoice ${invoice.number}, due ${invoice.due_date}`, url: invoiceUrl(context, invoice.id) }],
  }));

const dueSoon: Rule = (db, business, today, context) =>
  owedInvoices(db, business.id, 'i.due_date >= ? AND i.due_date <= ?', today, addDays(today, DUE_SOON_DAYS)).map((invoice) => ({
    kind: 'invoice_due_soon',
    subjectId: invoice.id,
    severity: 'attention' as const,
    sentence:
      invoice.due_date === today
        ? `${invoice.number} from ${invoice.customer} (${balanceText(invoice)}) is due today.`
        : `${invoice.number} from ${invoice.customer} (${balanceText(invoice)}) is due in ${plural(daysBetween(today, invoice.due_date), 'day')}, on ${invoice.due_date}.`,
    action: 'Nothing yet; a reminder can go out if it is not paid on time.',
    evidence: [{ label: `Invoice ${invoice.number}, due ${invoice.due_date}`, url: invoiceUrl(context, invoice.id) }],
  }));

function waitingItems(db: Db, businessId: string, before?: string): { count: number; oldest: string | null } {
  const row = one<{ n: bigint; oldest: string | null }>(
    db,
    `SELECT count(*) AS n, min(t.txn_date) AS oldest FROM review_queue_items q JOIN transactions t ON t.id = q.transaction_id
     WHERE q.business_id = ? AND q.accepted_at IS NULL ${before ? 'AND q.created_at < ?' : ''}`,
    ...(before ? [businessId, before] : [businessId]),
  );
  return { count: int(row?.n ?? 0n) ?? 0, oldest: row?.oldest ?? null };
}

const reviewWaitingLong: Rule = (db, business, today, context) => {
  const { count, oldest } = waitingItems(db, business.id, `${addDays(today, -REVIEW_URGENT_DAYS)}T00:00:00.000Z`);
  if (count === 0) return [];
  return [
    {
      kind: 'review_waiting_long',
      subjectId: null,
      severity: 'urgent',
      sentence: `${plural(count, 'bank transaction')} ${count === 1 ? 'has' : 'have'} waited in the review queue for more than ${REVIEW_URGENT_DAYS} days.`,
      action: 'Accept them (POST /review-queue/{id}/accept), choosing the account where the proposal is wrong.',
      evidence: [{ label: `Oldest from ${oldest}`, url: reviewUrl(context, business.id) }],
    },
  ];
};

const reviewWaiting: Rule = (db, business, _today, context) => {
  const { count, oldest } = waitingItems(db, business.id);
  if (count === 0) return [];
  return [
    {
      kind: 'review_waiting',
      subjectId: null,
      severity: 'attention',
      sentence: `${plural(count, 'bank transaction')} ${count === 1 ? 'waits' : 'wait'} in the review queue.`,
      action: 'Review the proposals and accept them.',
      evidence: [{ label: `${plural(count, 'item')}, oldest from ${oldest}`, url: reviewUrl(context, business.id) }],
    },
  ];
};

const keyExpiring: Rule = (db, business, today) =>
  all<{ id: string; name: string; expires_on: string }>(
    db,
    `SELECT k.id, k.name, k.expires_on FROM api_keys k
     WHERE k.tenant_id = ? AND k.revoked_at IS NULL AND k.expires_on IS NOT NULL AND k.expires_on >= ? AND k.expires_on <= ?
       AND (NOT EXISTS (SELECT 1 FROM api_key_businesses g WHERE g.api_key_id = k.id)
            OR EXISTS (SELECT 1 FROM api_key_businesses g WHERE g.api_key_id = k.id AND g.business_id = ?))
     ORDER BY k.expires_on, k.name`,
    business.tenantId,
    today,
    addDays(today, KEY_EXPIRY_DAYS),
    business.id,
  ).map((key) => ({
    kind: 'key_expiring',
    subjectId: key.id,
    severity: 'attention' as const,
    sentence:
      key.expires_on === today
        ? `The API key "${key.name}" stops working at the end of today.`
        : `The API key "${key.name}" stops working after ${key.expires_on}, in ${plural(daysBetween(today, key.expires_on), 'day')}.`,
    action: 'Create its replacement (daybook key create), switch the software to it, then revoke the old key.',
    evidence: [{ label: `Key ${key.name}, expires ${key.expires_on}` }],
  }));

const paymentsReceived: Rule = (db, business, today) => {
  const row = one<{ n: bigint; usd: bigint | null }>(
    db,
    `SELECT count(*) AS n, sum(p.usd_cents) AS usd FROM invoice_payments p JOIN invoices i ON i.id = p.invoice_id
     WHERE i.business_id = ? AND p.paid_at > ? AND p.paid_at <= ?`,
    business.id,
    addDays(today, -PAYMENTS_RECENT_DAYS),
    today,
  );
  const count = int(row?.n ?? 0n) ?? 0;
  if (count === 0) return [];
  return [
    {
      kind: 'payments_received',
      subjectId: null,
      severity: 'informational',
      sentence: `${plural(count, 'invoice payment')} came in over the last ${PAYMENTS_RECENT_DAYS} days, ${usd(row?.usd ?? 0n).formatted} in all.`,
      action: 'Nothing to do.',
      evidence: [{ label: `${plural(count, 'payment')} since ${addDays(today, -PAYMENTS_RECENT_DAYS + 1)}` }],
    },
  ];
};

const emailsFailed: Rule = (db, business, _today, context) =>
  all<{ id: string; to_address: string; subject: string; invoice_id: string | null; last_error: string | null }>(
    db,
    "SELECT id, to_address, subject, invoice_id, last_error FROM email_outbox WHERE business_id = ? AND status = 'failed' ORDER BY created_at, id",
    business.id,
  ).map((email) => ({
    kind: 'email_failed',
    subjectId: email.id,
    severity: 'urgent' as const,
    sentence: `An email to ${email.to_address} ("${email.subject}") could not be delivered: the mail server refused it, or every retry failed.`,
    action: 'Check the mail server settings (DAYBOOK_SMTP_URL) and the address, then send the invoice link another way.',
    evidence: [
      { label: `Last error: ${email.last_error ?? 'unknown'}`.slice(0, 300) },
      ...(email.invoice_id ? [{ label: 'The invoice', url: invoiceUrl(context, email.invoice_id) }] : []),
    ],
  }));

/** Every rule, in the order docs/today.md lists them. */
export const TODAY_RULES: readonly Rule[] = [
  billingPastDue,
  cardPaymentsWaiting,
  draftWithoutRate,
  emailsFailed,
  cardDisputes,
  longOverdue,
  reviewWaitingLong,
  reviewWaiting,
  recentlyOverdue,
  draftInClosedPeriod,
  dueSoon,
  cardRefunds,
  customerDeposits,
  keyExpiring,
  paymentsReceived,
];


function reviewUrl(context: TodayContext, businessId: string): string {
  return `${context.siteUrl}/api/v1/review-queue?entityId=${businessId}`;
}

/** What every rule finds in the business today. Reads only. */
export function findSignals(db: Db, business: Business, today: string, context: TodayContext): FoundSignal[] {
  return TODAY_RULES.flatMap((rule) => rule(db, business, today, context));
}

interface StoredSignal {
  id: string;
  kind: string;
  subject_id: string | null;
  first_seen_at: string;
}

/**
 * Today for one business: finds the signals, keeps the id and first-seen time of each one that
 * was already open (refreshing its last-seen time and wording), opens the new ones and closes
 * the ones that no longer apply, in one transaction that writes today_signals only.
 */
export function refreshToday(db: Db, clock: Clock, business: Business, context: TodayContext): TodayFeed {
  const found = findSignals(db, business, todayUtc(clock), context);
  const now = nowIso(clock);
  const signals = inTransaction(db, () => {
    const open = new Map(
      all<StoredSignal>(db, 'SELECT id, kind, subject_id, first_seen_at FROM today_signals WHERE business_id = ? AND closed_at IS NULL', business.id).map(
        (row) => [signalKey(row.kind, row.subject_id), row],
      ),
    );
    const kept = found.map((signal): Signal => {
      const key = signalKey(signal.kind, signal.subjectId);
      const existing = open.get(key);
      open.delete(key);
      if (existing) {
        run(
          db,
          'UPDATE today_signals SET severity = ?, sentence = ?, action = ?, evidence_json = ?, last_seen_at = ? WHERE id = ?',
          signal.severity,
          signal.sentence,
          signal.action,
          JSON.stringify(signal.evidence),
          now,
          existing.id,
        );
        return { ...signal, id: existing.id, firstSeenAt: existing.first_seen_at, lastSeenAt: now };
      }
      const id = newId();
      run(
        db,
        `INSERT INTO today_signals (id, business_id, kind, subject_id, severity, sentence, action, evidence_json, first_seen_at, last_seen_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        business.id,
        signal.kind,
        signal.subjectId,
        signal.severity,
        signal.sentence,
        signal.action,
        JSON.stringify(signal.evidence),
        now,
        now,
      );
      return { ...signal, id, firstSeenAt: now, lastSeenAt: now };
    });
    for (const gone of open.values()) run(db, 'UPDATE today_signals SET closed_at = ? WHERE id = ?', now, gone.id);
    return kept;
  });
  const ordered = bySeverity(signals);
  return { headline: headlineOf(ordered), signals: ordered };
}

/** Most severe first (blocking, urgent, attention, informational); the rules' order within a severity. */
export function bySeverity<T extends Pick<Signal, 'severity'>>(signals: readonly T[]): T[] {
  return [...signals].sort((a, b) => SIGNAL_SEVERITIES.indexOf(a.severity) - SIGNAL_SEVERITIES.indexOf(b.severity));
}

function signalKey(kind: string, subjectId: string | null): string {
  return `${kind}\u0000${subjectId ?? ''}`;
}

/**
 * One sentence for the most severe open signals: the single most severe one's own sentence when
 * it stands alone, else how many of that severity there are, and how many more follow.
 */
export function headlineOf(signals: readonly Pick<Signal, 'severity' | 'sentence'>[]): string {
  if (signals.length === 0) return 'Nothing needs you today.';
  const top = signals[0]!.severity;
  const topCount = signals.filter((signal) => signal.severity === top).length;
  const rest = signals.length - topCount;
  const more = rest === 0 ? '' : ` (and ${plural(rest, 'thing')} of less weight)`;
  const lead: Record<Severity, string> = {
    blocking: `${plural(topCount, 'thing')} ${topCount === 1 ? 'blocks' : 'block'} the books`,
    urgent: `${plural(topCount, 'thing')} ${topCount === 1 ? 'is' : 'are'} urgent`,
    attention: `${plural(topCount, 'thing')} ${topCount === 1 ? 'needs' : 'need'} attention`,
    informational: `${plural(topCount, 'piece')} of news`,
  };
  if (topCount === 1) return `${signals[0]!.sentence.replace(/\.$/, '')}${more}.`;
  return `${lead[top]}${more}.`;
}
