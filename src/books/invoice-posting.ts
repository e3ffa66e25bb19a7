import type { Clock } from '../clock.js';
import { nowIso, todayUtc } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { ApiError, conflict, validationFailed } from '../errors.js';
import { AMOUNT_CEILING_CENTS, type ForeignCurrency, formatMoney } from '../money.js';
import { invoiceEmail, reminderEmail } from './invoice-mail.js';
import { type Actor, jobActor, PAY_PAGE_ACTOR, recordAudit } from '../store/audit.js';
import { FRESH_RATE_DAYS, usableRate } from './fx.js';
import { getBusiness } from './businesses.js';
import { findLedgerAccount, systemAccountId } from './chart.js';
import { newId } from '../ids.js';
import { allocate, cashRecognition, cashUsdCents, convertInvoice, receivableCleared } from './invoice-math.js';
import { findInvoice, type Invoice, invoiceBalanceCents, type InvoiceStatus, type PaymentMethod, UNPAID_STATUSES } from './invoices.js';
import { assertPostingAllowed, type JournalLineDraft, postEntry, reverseEntry, withPostingFields } from './ledger.js';
import { enqueueEmail } from '../store/outbox.js';
import { payToken, payUrl } from './pay-links.js';
import { daysBetween } from '../dates.js';

/**
 * What happens to an invoice after it is drafted: sent (posted and emailed), paid (cash
 * against the receivable, revenue recognised on the cash basis, realised FX differences),
 * reminded, viewed on its pay page, and voided. Every function runs inside the caller's
 * transaction (the write door), so a refusal leaves nothing behind.
 *
 * Both bases are always posted, each line marked with the view that reads it: the accrual
 * view sees the receivable and revenue when the invoice is sent, the cash view sees revenue
 * and sales tax as money arrives. Each business's reports read its own basis.
 */

/** Where emails link to and what they are signed with. */
export interface InvoiceMailContext {
  siteUrl: string;
}

export interface SentInvoice {
  invoice: Invoice;
  /** Outbox rows to deliver once the transaction commits. */
  emailIds: string[];
}

/** A draft can be sent; anything else is a conflict (spec send: 409 for a non-draft). */
function assertStatus(invoice: Invoice, allowed: readonly InvoiceStatus[], action: string): void {
  if (!allowed.includes(invoice.status)) {
    throw conflict(`invoice ${invoice.number} is ${invoice.status.replace('_', ' ')}; it cannot be ${action}`);
  }
}

/** The USD value of one unit of the invoice's currency on `date`: the stored rate usableRate allows (never a stale one). */
export function usdPerUnitOn(db: Db, clock: Clock, currency: Invoice['currency'], date: string, field: string, maxAgeDays: number): string {
  if (currency === 'USD') return '1';
  const found = usableRate(db, clock, currency as ForeignCurrency, date, maxAgeDays);
  if (!found.rate) throw validationFailed(field, found.problem);
  return found.rate.usdPerUnit;
}

/** The invoice's revenue accounts in line order, each with the invoice-currency amount its lines earn. */
function revenueByAccount(invoice: Invoice): { accountId: string; amountCents: bigint }[] {
  const byAccount = new Map<string, bigint>();
  for (const line of invoice.lines) byAccount.set(line.accountId, (byAccount.get(line.accountId) ?? 0n) + line.amountCents);
  return [...byAccount].map(([accountId, amountCents]) => ({ accountId, amountCents }));
}

/** `usdCents` spread over the revenue accounts in proportion to what each earns, as credits of `basis`. */
function revenueCredits(invoice: Invoice, usdCents: bigint, basis: 'accrual' | 'cash'): JournalLineDraft[] {
  const accounts = revenueByAccount(invoice);
  const shares = allocate(usdCents, accounts.map((account) => account.amountCents));
  return accounts.map((account, index) => ({ accountId: account.accountId, direction: 'credit' as const, amountCents: shares[index]!, basis }));
}

/** Journal lines of zero are left out: the posting engine takes positive amounts only. */
function nonZero(lines: JournalLineDraft[]): JournalLineDraft[] {
  return lines.filter((line) => line.amountCents > 0n);
}

/**
 * Sends a draft: converts a foreign invoice once at its issue date's rate (subtotal and tax
 * each), posts the receivable against revenue per line account and sales tax payable on the
 * issue date (accrual view), marks it sent, and writes the email to the outbox. The rate must
 * be stored already (the send operation looks a missing one up before its transaction).
 */
export function sendInvoice(db: Db, clock: Clock, actor: Actor, invoiceId: string, mail: InvoiceMailContext, rateMaxAgeDays = FRESH_RATE_DAYS): SentInvoice {
  assertInTransaction(db, 'sendInvoice');
  const invoice = requireInvoice(db, invoiceId);
  assertStatus(invoice, ['draft'], 'sent again');
  withPostingFields({ period_locked: 'issueDate' }, () => assertPostingAllowed(db, invoice.businessId, invoice.issueDate));
  assertLinesPostable(db, invoice);
  const usdPerUnit = usdPerUnitOn(db, clock, invoice.currency, invoice.issueDate, 'issueDate', rateMaxAgeDays);
  const usd = convertInvoice(invoice.subtotalCents, invoice.taxCents, usdPerUnit);
  if (usd.totalUsdCents >= AMOUNT_CEILING_CENTS) {
    throw validationFailed('lines', `the invoice's total converts to ten trillion US dollars or more at ${usdPerUnit} USD per ${invoice.currency}`);
  }
  const lines = nonZero([
    { accountId: systemAccountId(db, invoice.businessId, 'accounts_receivable'), direction: 'debit', amountCents: usd.totalUsdCents, basis: 'accrual' },
    ...revenueCredits(invoice, usd.subtotalUsdCents, 'accrual'),
    { accountId: systemAccountId(db, invoice.businessId, 'sales_tax_payable'), direction: 'credit', amountCents: usd.taxUsdCents, basis: 'accrual' },
  ]);
  // A foreign invoice so small it rounds to no USD cent at all posts nothing.
  const entry =
    lines.length >= 2
      ? postEntry(db, clock, actor, {
          businessId: invoice.businessId,
          date: invoice.issueDate,
          memo: `Invoice ${invoice.number} to ${invoice.customer.name}`,
          sourceType: 'invoice',
          sourceId: invoice.id,
          lines,
        })
      : null;
  run(
    db,
    `UPDATE invoices SET status = 'sent', usd_per_unit = ?, subtotal_usd_cents = ?, tax_usd_cents = ?, journal_entry_id = ?, sent_at = ?
     WHERE id = ? AND status = 'draft'`,
    usdPerUnit,
    usd.subtotalUsdCents,
    usd.taxUsdCents,
    entry?.id ?? null,
    nowIso(clock),
    invoice.id,
  );
  const emailIds = invoice.customer.email ? [enqueueInvoiceEmail(db, clock, invoice, mail)] : [];
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'invoice.send',
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: { number: invoice.number, usdPerUnit, totalUsdCents: usd.totalUsdCents.toString(), emailed: emailIds.length > 0 },
  });
  return { invoice: requireInvoice(db, invoice.id), emailIds };
}

/** A draft's revenue accounts may have been archived since it was written: say which line. */
function assertLinesPostable(db: Db, invoice: Invoice): void {
  invoice.lines.forEach((line, index) => {
    const account = findLedgerAccount(db, line.accountId);
    if (!account || account.archived || account.isHeading) {
      throw validationFailed(`lines.${index}.accountId`, `${line.account} can no longer take postings; void this draft and issue another`);
    }
  });
}

function enqueueInvoiceEmail(db: Db, clock: Clock, invoice: Invoice, mail: InvoiceMailContext): string {
  const business = getBusiness(db, invoice.businessId);
  const rendered = invoiceEmail({
    businessName: business.name,
    customerName: invoice.customer.name,
    invoiceNumber: invoice.number,
    amountFormatted: formatMoney(invoice.totalCents, invoice.currency),
    currency: invoice.currency,
    dueDate: invoice.dueDate,
    payUrl: payUrl(mail.siteUrl, payToken(db, invoice.id)),
  });
  return enqueueEmail(db, clock, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    kind: 'invoice',
    invoiceId: invoice.id,
    to: invoice.customer.email!,
    ...rendered,
  });
}

export interface NewPayment {
  invoiceId: string;
  amountCents: bigint;
  method: PaymentMethod;
  paidAt: string;
  memo?: string;
  /** DAYBOOK_RATE_MAX_AGE_DAYS; FRESH_RATE_DAYS unless given. */
  rateMaxAgeDays?: number;
}

export interface RecordedPayment {
  paymentId: string;
  invoice: Invoice;
}

/**
 * Records a payment. The state is checked before the amount (a draft, void or paid invoice is
 * a conflict; an amount over the balance is 422). The cash is converted at the payment date's
 * rate. Accrual view: it clears round(payment x issue rate) of the receivable, or all that
 * remains when it settles the invoice, and the difference is realised FX gain or loss. Cash
 * view: revenue so far is round(cash so far x subtotal / total), and the rest is sales tax.
 */
export function recordPayment(db: Db, clock: Clock, actor: Actor, input: NewPayment): RecordedPayment {
  assertInTransaction(db, 'recordPayment');
  const invoice = requireInvoice(db, input.invoiceId);
  assertStatus(invoice, UNPAID_STATUSES, 'paid');
  const balanceCents = invoiceBalanceCents(invoice);
  if (input.amountCents <= 0n) throw validationFailed('amountCents', 'must be greater than zero');
  if (input.amountCents > balanceCents) {
    throw validationFailed('amountCents', `is more than the balance of ${formatMoney(balanceCents, invoice.currency)} (${balanceCents} cents)`);
  }
  if (input.paidAt < invoice.issueDate) throw validationFailed('paidAt', `must not be before the invoice's issue date (${invoice.issueDate})`);
  if (input.paidAt > todayUtc(clock)) throw validationFailed('paidAt', `must not be after today (${todayUtc(clock)}): record a payment once it is made`);
  withPostingFields({ period_locked: 'paidAt' }, () => assertPostingAllowed(db, invoice.businessId, input.paidAt));
  const usdPerUnit = usdPerUnitOn(db, clock, invoice.currency, input.paidAt, 'paidAt', input.rateMaxAgeDays ?? FRESH_RATE_DAYS);
  const cash: PaymentCash = { accountRole: 'bank', usdCents: cashUsdCents(input.amountCents, usdPerUnit), usdPerUnit };
  const { paymentId } = applyPayment(db, clock, actor, invoice, input, cash);
  return { paymentId, invoice: requireInvoice(db, invoice.id) };
}

/** Where a payment's money arrived and what it is worth in US cents. */
export interface PaymentCash {
  /** The bank for a payment recorded by hand; the card clearing account for a card payment. */
  accountRole: 'bank' | 'card_clearing';
  usdCents: bigint;
  /** The rate the payment is shown at: the day's stored rate, or what the processor credited per unit. */
  usdPerUnit: string;
}

/**
 * Applies a payment the caller has checked (open invoice, an amount up to the balance, a date
 * it may post on) to its invoice: one entry (the cash against the receivable and any realised
 * FX difference, and in the cash view the revenue and tax it recognises, plus `extraLines` of
 * the caller's own that balance among themselves), the payment row, the invoice's paid amount
 * and status, and the audit row.
 */
export function applyPayment(
  db: Db,
  clock: Clock,
  actor: Actor,
  invoice: Invoice,
  payment: Pick<NewPayment, 'amountCents' | 'method' | 'paidAt' | 'memo'>,
  cash: PaymentCash,
  extraLines: readonly JournalLineDraft[] = [],
): { paymentId: string; entryId: string | null } {
  const balanceCents = invoiceBalanceCents(invoice);
  if (payment.amountCents <= 0n || payment.amountCents > balanceCents) throw new Error(`applyPayment: ${payment.amountCents} cents against a balance of ${balanceCents}`);
  const lines = paymentLines(db, invoice, payment.amountCents, cash);
  const journal = [...lines.journal, ...nonZero([...extraLines])];
  const paymentId = newId();
  // A payment worth nothing in USD in either view (its cash and the receivable it clears both
  // round to zero cents) is still a payment, but has no line to post: the engine writes no entry
  // without two non-zero lines, so it is recorded with none. Non-zero lines always come at least
  // in pairs (each view balances on its own), so a payment posts either nothing or an entry.
  const entry =
    journal.length === 0
      ? null
      : postEntry(db, clock, actor, {
          businessId: invoice.businessId,
          date: payment.paidAt,
          memo: `Payment on invoice ${invoice.number} (${payment.method})`,
          sourceType: 'invoice_payment',
          sourceId: paymentId,
          lines: journal,
        });
  run(
    db,
    `INSERT INTO invoice_payments (id, invoice_id, amount_cents, method, paid_at, memo, usd_per_unit, usd_cents, receivable_usd_cents, journal_entry_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    paymentId,
    invoice.id,
    payment.amountCents,
    payment.method,
    payment.paidAt,
    payment.memo ?? null,
    cash.usdPerUnit,
    lines.cashUsdCents,
    lines.clearedUsdCents,
    entry?.id ?? null,
    nowIso(clock),
  );
  const settles = payment.amountCents === balanceCents;
  // Paid in full from the latest payment's date (payments may be recorded out of date order).
  const closedOn = settles ? invoice.payments.reduce((latest, earlier) => maxDate(latest, earlier.paidAt), payment.paidAt) : null;
  // A part payment leaves the sweep's overdue as it stands: the invoice is still overdue by the
  // status rule (invoices.ts), and the sweep must not record it going overdue a second time.
  run(
    db,
    "UPDATE invoices SET paid_cents = paid_cents + ?, status = CASE WHEN ? THEN 'paid' WHEN status = 'overdue' THEN 'overdue' ELSE 'partially_paid' END, closed_on = ? WHERE id = ?",
    payment.amountCents,
    settles ? 1 : 0,
    closedOn,
    invoice.id,
  );
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'invoice.payment',
    subjectType: 'invoice_payment',
    subjectId: paymentId,
    detail: {
      invoiceId: invoice.id,
      amountCents: payment.amountCents.toString(),
      method: payment.method,
      paidAt: payment.paidAt,
      usdCents: lines.cashUsdCents.toString(),
      fxDifferenceUsdCents: (lines.cashUsdCents - lines.clearedUsdCents).toString(),
      posted: entry !== null,
    },
  });
  return { paymentId, entryId: entry?.id ?? null };
}

/** The journal lines of one payment, in both views. */
function paymentLines(db: Db, invoice: Invoice, amountCents: bigint, cash: PaymentCash) {
  const balanceCents = invoiceBalanceCents(invoice);
  const totalUsdCents = (invoice.subtotalUsdCents ?? 0n) + (invoice.taxUsdCents ?? 0n);
  const cashUsd = cash.usdCents;
  const clearedUsdCents = receivableCleared({
    paymentCents: amountCents,
    issueUsdPerUnit: invoice.usdPerUnit ?? '1',
    settles: amountCents === balanceCents,
    totalUsdCents,
    clearedSoFarUsdCents: invoice.payments.reduce((sum, payment) => sum + payment.receivableUsdCents, 0n),
  });
  const recognised = cashRecognition({
    cashUsdBeforeCents: invoice.payments.reduce((sum, payment) => sum + payment.usdCents, 0n),
    cashUsdThisPaymentCents: cashUsd,
    subtotalCents: invoice.subtotalCents,
    totalCents: invoice.totalCents,
  });
  const fxUsdCents = cashUsd - clearedUsdCents;
  const fxAccount = systemAccountId(db, invoice.businessId, 'fx_gain_loss');
  const journal = nonZero([
    { accountId: systemAccountId(db, invoice.businessId, cash.accountRole), direction: 'debit', amountCents: cashUsd, basis: 'both' },
    // Accrual view: the receivable, and any realised FX difference.
    { accountId: systemAccountId(db, invoice.businessId, 'accounts_receivable'), direction: 'credit', amountCents: clearedUsdCents, basis: 'accrual' },
    { accountId: fxAccount, direction: fxUsdCents >= 0n ? 'credit' : 'debit', amountCents: fxUsdCents >= 0n ? fxUsdCents : -fxUsdCents, basis: 'accrual' },
    // Cash view: revenue and sales tax as the money arrives.
    ...cashRevenueLines(db, invoice, recognised.revenueUsdCents),
    { accountId: systemAccountId(db, invoice.businessId, 'sales_tax_payable'), direction: 'credit', amountCents: recognised.taxUsdCents, basis: 'cash' },
  ]);
  return { journal, cashUsdCents: cashUsd, clearedUsdCents };
}

/**
 * The cash view's revenue lines of one payment. Revenue so far (what earlier payments
 * recognised, plus this payment's share) is spread over the accounts cumulatively, and each
 * account gets the difference from what it already has: rounding never drifts from one
 * account to another over many payments. Largest-remainder shares can shrink by a cent as the
 * total grows, so a difference may be a debit.
 */
function cashRevenueLines(db: Db, invoice: Invoice, revenueUsdCents: bigint): JournalLineDraft[] {
  const accounts = revenueByAccount(invoice);
  const recognised = new Map(
    all<{ account: string; net: bigint }>(
      db,
      `SELECT l.ledger_account_id AS account, sum(CASE WHEN l.direction = 'credit' THEN l.amount_cents ELSE -l.amount_cents END) AS net
       FROM invoice_payments p JOIN journal_lines l ON l.entry_id = p.journal_entry_id
       WHERE p.invoice_id = ? AND l.basis = 'cash'
       GROUP BY l.ledger_account_id`,
      invoice.id,
    ).map((row) => [row.account, row.net]),
  );
  const before = accounts.reduce((sum, account) => sum + (recognised.get(account.accountId) ?? 0n), 0n);
  const targets = allocate(before + revenueUsdCents, accounts.map((account) => account.amountCents));
  return accounts.map((account, index) => {
    const difference = targets[index]! - (recognised.get(account.accountId) ?? 0n);
    return { accountId: account.accountId, direction: difference >= 0n ? 'credit' : 'debit', amountCents: difference >= 0n ? difference : -difference, basis: 'cash' };
  });
}

export interface SentReminder {
  invoiceId: string;
  remindedAt: string;
  emailIds: string[];
}

/** Reminders are at most one per invoice per this many milliseconds (spec: 24 hours). */
export const REMINDER_COOLDOWN_MS = 24 * 60 * 60 * 1000;

/**
 * A reminder email for an invoice with money owed; nothing is posted, so it works while
 * billing is past due. A second reminder within 24 hours is a conflict.
 */
export function remindInvoice(db: Db, clock: Clock, actor: Actor, invoiceId: string, mail: InvoiceMailContext): SentReminder {
  assertInTransaction(db, 'remindInvoice');
  const invoice = requireInvoice(db, invoiceId);
  assertStatus(invoice, UNPAID_STATUSES, 'reminded');
  const now = clock.now();
  const last = one<{ reminded_at: string }>(db, 'SELECT reminded_at FROM invoice_reminders WHERE invoice_id = ? ORDER BY reminded_at DESC LIMIT 1', invoice.id);
  if (last && now.getTime() - Date.parse(last.reminded_at) < REMINDER_COOLDOWN_MS) {
    const next = new Date(Date.parse(last.reminded_at) + REMINDER_COOLDOWN_MS).toISOString();
    throw conflict(`a reminder for invoice ${invoice.number} went out at ${last.reminded_at}; the next may go from ${next}`);
  }
  // Named by the field the request sent: the invoice's id (spec, Errors rule 2).
  if (!invoice.customer.email) throw validationFailed('id', `the invoice's customer ${invoice.customer.name} has no email address to remind`);
  const remindedAt = now.toISOString();
  run(db, 'INSERT INTO invoice_reminders (id, invoice_id, reminded_at) VALUES (?, ?, ?)', newId(), invoice.id, remindedAt);
  const business = getBusiness(db, invoice.businessId);
  const rendered = reminderEmail({
    businessName: business.name,
    customerName: invoice.customer.name,
    invoiceNumber: invoice.number,
    amountFormatted: formatMoney(invoice.totalCents, invoice.currency),
    balanceFormatted: formatMoney(invoiceBalanceCents(invoice), invoice.currency),
    currency: invoice.currency,
    dueDate: invoice.dueDate,
    daysOverdue: daysBetween(invoice.dueDate, todayUtc(clock)),
    payUrl: payUrl(mail.siteUrl, payToken(db, invoice.id)),
  });
  const emailId = enqueueEmail(db, clock, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    kind: 'reminder',
    invoiceId: invoice.id,
    to: invoice.customer.email,
    ...rendered,
  });
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'invoice.remind',
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: { number: invoice.number, to: invoice.customer.email },
  });
  return { invoiceId: invoice.id, remindedAt, emailIds: [emailId] };
}

/** The first time the customer opens the pay page of a sent invoice, it becomes viewed. */
export function markViewed(db: Db, clock: Clock, invoiceId: string): boolean {
  assertInTransaction(db, 'markViewed');
  const invoice = requireInvoice(db, invoiceId);
  const { changes } = run(db, "UPDATE invoices SET status = 'viewed', viewed_at = ? WHERE id = ? AND status = 'sent'", nowIso(clock), invoiceId);
  if (changes === 0) return false;
  recordAudit(db, clock, PAY_PAGE_ACTOR, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'invoice.view',
    subjectType: 'invoice',
    subjectId: invoiceId,
  });
  return true;
}

function maxDate(a: string, b: string): string {
  return a > b ? a : b;
}

/**
 * Voids an invoice. A draft by its status alone; a sent, viewed or overdue one by a reversing
 * entry dated today, or on its issue date when that is later (the posted entry is never edited). An invoice with any payment is refused:
 * its money has moved.
 */
export function voidInvoice(db: Db, clock: Clock, actor: Actor, invoiceId: string): Invoice {
  assertInTransaction(db, 'voidInvoice');
  const invoice = requireInvoice(db, invoiceId);
  if (invoice.paidCents > 0n || invoice.status === 'paid' || invoice.status === 'partially_paid') {
    throw conflict(`invoice ${invoice.number} has payments recorded; it cannot be voided`);
  }
  assertStatus(invoice, ['draft', 'sent', 'viewed', 'overdue'], 'voided');
  // Never before the posting it reverses: an invoice may be issued (and sent) for a later day.
  const voidDate = maxDate(todayUtc(clock), invoice.issueDate);
  if (invoice.journalEntryId) {
    withPostingFields({ period_locked: 'date', account_archived: 'id' }, () =>
      reverseEntry(db, clock, actor, invoice.journalEntryId!, voidDate, `Void of invoice ${invoice.number}`),
    );
  }
  run(db, "UPDATE invoices SET status = 'void', voided_at = ?, closed_on = ? WHERE id = ?", nowIso(clock), voidDate, invoice.id);
  recordAudit(db, clock, actor, {
    tenantId: invoice.tenantId,
    businessId: invoice.businessId,
    action: 'invoice.void',
    subjectType: 'invoice',
    subjectId: invoice.id,
    detail: { number: invoice.number, previousStatus: invoice.status, reversed: invoice.journalEntryId !== null },
  });
  return requireInvoice(db, invoice.id);
}

/** The overdue sweep's actor: the job that runs it. */
export const SWEEP_ACTOR: Actor = jobActor('overdue');

/**
 * Records every invoice with money owed whose due date has passed (stored as sent, viewed or
 * partially paid) as overdue, audited once; idempotent. Returns how many moved. The job pool
 * runs it. Reads do not wait for it: they work overdue out by the status rule (invoices.ts).
 */
export function markOverdueInvoices(db: Db, clock: Clock): number {
  assertInTransaction(db, 'markOverdueInvoices');
  const today = todayUtc(clock);
  const due = all<{ id: string; number: string; business_id: string; tenant_id: string }>(
    db,
    `SELECT i.id, i.number, i.business_id, b.tenant_id FROM invoices i JOIN businesses b ON b.id = i.business_id
     WHERE i.status IN ('sent', 'viewed', 'partially_paid') AND i.due_date < ?`,
    today,
  );
  for (const invoice of due) {
    run(db, "UPDATE invoices SET status = 'overdue' WHERE id = ?", invoice.id);
    recordAudit(db, clock, SWEEP_ACTOR, {
      tenantId: invoice.tenant_id,
      businessId: invoice.business_id,
      action: 'invoice.overdue',
      subjectType: 'invoice',
      subjectId: invoice.id,
      detail: { number: invoice.number, asOf: today },
    });
  }
  return due.length;
}

function requireInvoice(db: Db, invoiceId: string): Invoice {
  const invoice = findInvoice(db, invoiceId);
  if (!invoice) throw new ApiError('not_found', 'No such invoice.');
  return invoice;
}
