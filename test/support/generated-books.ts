import { CLI_ACTOR } from '../../src/store/audit.js';
import fc from 'fast-check';
import { acceptReviewItem } from '../../src/books/review.js';
import { importBankStatement } from '../../src/books/import/bank-import.js';
import type { StatementRow } from '../../src/books/import/statement.js';
import { createBill, payBill } from '../../src/books/bills.js';
import type { Business } from '../../src/books/businesses.js';
import { systemAccountId } from '../../src/books/chart.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { recordExpense } from '../../src/books/expenses.js';
import { setRate } from '../../src/books/fx.js';
import { recordPayment, sendInvoice, voidInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice, findInvoice } from '../../src/books/invoices.js';
import { postEntry } from '../../src/books/ledger.js';
import type { FixedClock } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { type Db, inTransaction } from '../../src/db/connection.js';
import type { Currency, ForeignCurrency } from '../../src/money.js';
import { accountIdByName, buildBusiness, buildTenant, postDeposit, TEST_ACTOR } from './factories.js';

/**
 * Generated books for property tests of the reports: a history of one to two years of
 * expenses, bank-statement rows accepted from the review queue, invoices in USD and foreign
 * currencies sent and paid in parts at other rates (a few voided unpaid), bills paid in parts,
 * and owner contributions and draws, written through the real books functions (each write in
 * its own inTransaction; importBankStatement and setRate open their own), the clock stepped
 * forward to each write's day, so no payment is dated after "today". The same history can be
 * written into an accrual and a cash business.
 */

export const REVENUE_ACCOUNTS = ['Sales', 'Service Revenue', 'Other Income'] as const;
/** Accounts an expense, bill or review item may be booked to (Equipment is an asset). */
export const EXPENSE_ACCOUNTS = ['Office Supplies', 'Rent', 'Software and Subscriptions', 'Travel', 'Meals', 'Contractors', 'Equipment', 'Uncategorized Expense'] as const;
export const INVOICE_CURRENCIES = ['USD', 'EUR', 'GBP', 'CAD', 'MXN'] as const satisfies readonly Currency[];
const VENDORS = ['Staples', 'Harborview Leasing', 'Delta Air Lines', 'Adobe', 'Blue Bottle Coffee', 'Acme Contractors'] as const;

/** USD per unit, in units of 0.0001, that each foreign currency's rates are drawn from. */
const RATE_RANGES: Record<ForeignCurrency, readonly [number, number]> = {
  EUR: [9000, 13000],
  GBP: [11000, 15000],
  CAD: [6500, 8500],
  MXN: [450, 650],
};

export type ExpenseAccount = (typeof EXPENSE_ACCOUNTS)[number];
export type RevenueAccount = (typeof REVENUE_ACCOUNTS)[number];
export type InvoiceCurrency = (typeof INVOICE_CURRENCIES)[number];

export interface PaymentSpec {
  /** Days after the previous payment (the first: after the issue date). */
  afterDays: number;
  /** This part's share of the total, relative to the other parts. */
  weight: number;
  /** Where in the currency's rate range this payment's rate lies, 0 to 1000. */
  rateSeed: number;
  /** Days after its date that the payment is recorded: payments may be recorded out of date order. */
  recordedAfterDays: number;
}

export type HistoryEvent =
  | { kind: 'expense'; day: number; amountCents: bigint; account: ExpenseAccount; vendor: string }
  | {
      kind: 'bank';
      day: number;
      /** Money out; null account: accept the categoriser's proposal (Uncategorized Expense when it has none). */
      rows: { amountCents: bigint; account: ExpenseAccount | null; vendor: string | null }[];
      acceptAfterDays: number;
    }
  | {
      kind: 'invoice';
      day: number;
      currency: InvoiceCurrency;
      lines: { quantity: string; unitPriceCents: bigint; account: RevenueAccount }[];
      taxRatePercent: string | undefined;
      termsDays: number;
      issueRateSeed: number;
      payments: PaymentSpec[];
      /** False: the last part is never paid (nothing at all when there is one part). */
      paidInFull: boolean;
      /** Days after the issue date on which it is voided (then it takes no payment); null: never. */
      voidAfterDays: number | null;
    }
  | { kind: 'bill'; day: number; amountCents: bigint; account: ExpenseAccount; vendor: string; termsDays: number; payments: PaymentSpec[]; paidInFull: boolean }
  | { kind: 'owner'; day: number; amountCents: bigint; direction: 'contribution' | 'draw' };

export interface GeneratedHistory {
  startDate: string;
  spanDays: number;
  events: HistoryEvent[];
}

export interface HistoryOptions {
  /** Every invoice and bill is paid in full by the end of the history. */
  settleAll?: boolean;
  /** 'usd-or-tax-free': no foreign-currency invoice carries tax. */
  invoices?: 'any' | 'usd-or-tax-free';
  /** 50 to 70 events, mostly invoices, most left open (to push the aging past its 25 listed items). */
  manyOpenInvoices?: boolean;
}

const TAX_RATES = ['0', '5', '7.25', '8.875', '13', '20'] as const;
const QUANTITIES = ['1', '2', '3', '0.5', '1.25', '10', '0.333333'] as const;

const paymentArb = fc.record({
  afterDays: fc.integer({ min: 0, max: 60 }),
  weight: fc.integer({ min: 1, max: 100 }),
  rateSeed: fc.integer({ min: 0, max: 1000 }),
  recordedAfterDays: fc.constantFrom(0, 0, 0, 0, 3, 20, 45),
});

function invoiceArb(span: number, options: HistoryOptions): fc.Arbitrary<HistoryEvent> {
  return fc
    .record({
      day: fc.integer({ min: 0, max: span }),
      currency: fc.constantFrom(...INVOICE_CURRENCIES),
      lines: fc.array(
        fc.record({
          quantity: fc.constantFrom(...QUANTITIES),
          unitPriceCents: fc.bigInt({ min: 1_000n, max: 800_000n }),
          account: fc.constantFrom(...REVENUE_ACCOUNTS),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      taxRatePercent: fc.option(fc.constantFrom(...TAX_RATES), { nil: undefined }),
      termsDays: fc.constantFrom(0, 15, 30, 45, 60),
      issueRateSeed: fc.integer({ min: 0, max: 1000 }),
      payments: fc.array(paymentArb, { minLength: 1, maxLength: 4 }),
      // Many open invoices: most are never paid in full.
      paidInFull: options.settleAll ? fc.constant(true) : options.manyOpenInvoices ? fc.constantFrom(false, false, false, true) : fc.boolean(),
      voidAfterDays: options.settleAll ? fc.constant(null) : fc.oneof({ arbitrary: fc.constant(null), weight: 6 }, { arbitrary: fc.integer({ min: 0, max: 120 }), weight: 1 }),
    })
    .map((invoice) => ({
      kind: 'invoice' as const,
      ...invoice,
      taxRatePercent: options.invoices === 'usd-or-tax-free' && invoice.currency !== 'USD' ? undefined : invoice.taxRatePercent,
    }));
}

function eventArb(span: number, options: HistoryOptions): fc.Arbitrary<HistoryEvent> {
  const day = fc.integer({ min: 0, max: span });
  const expense = fc.record({
    kind: fc.constant('expense' as const),
    day,
    amountCents: fc.bigInt({ min: 100n, max: 300_000n }),
    account: fc.constantFrom(...EXPENSE_ACCOUNTS),
    vendor: fc.constantFrom(...VENDORS),
  });
  const bank = fc.record({
    kind: fc.constant('bank' as const),
    day,
    rows: fc.array(
      fc.record({
        amountCents: fc.bigInt({ min: 100n, max: 200_000n }),
        account: fc.option(fc.constantFrom(...EXPENSE_ACCOUNTS), { nil: null }),
        vendor: fc.option(fc.constantFrom(...VENDORS), { nil: null }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    acceptAfterDays: fc.integer({ min: 0, max: 40 }),
  });
  const bill = fc.record({
    kind: fc.constant('bill' as const),
    day,
    amountCents: fc.bigInt({ min: 500n, max: 900_000n }),
    account: fc.constantFrom(...EXPENSE_ACCOUNTS),
    vendor: fc.constantFrom(...VENDORS),
    termsDays: fc.constantFrom(0, 10, 30, 60, 90),
    payments: fc.array(paymentArb, { minLength: 1, maxLength: 3 }),
    paidInFull: options.settleAll ? fc.constant(true) : fc.boolean(),
  });
  const owner = fc.record({
    kind: fc.constant('owner' as const),
    day,
    amountCents: fc.bigInt({ min: 10_000n, max: 2_000_000n }),
    direction: fc.constantFrom('contribution' as const, 'draw' as const),
  });
  const invoiceWeight = options.manyOpenInvoices ? 30 : 4;
  return fc.oneof(
    { arbitrary: expense, weight: 3 },
    { arbitrary: bank, weight: 2 },
    { arbitrary: invoiceArb(span, options), weight: invoiceWeight },
    { arbitrary: bill, weight: 3 },
    { arbitrary: owner, weight: 1 },
  );
}

/** A history starting on a day of 2023 to 2025, one to two years long. */
export function historyArb(options: HistoryOptions = {}): fc.Arbitrary<GeneratedHistory> {
  const [minEvents, maxEvents] = options.manyOpenInvoices ? [50, 70] : [10, 30];
  return fc
    .record({ startOffset: fc.integer({ min: 0, max: 3 * 365 }), spanDays: fc.integer({ min: 365, max: 730 }) })
    .chain(({ startOffset, spanDays }) =>
      fc.record({
        startDate: fc.constant(addDays('2023-01-01', startOffset)),
        spanDays: fc.constant(spanDays),
        events: fc.array(eventArb(spanDays, options), { minLength: minEvents, maxLength: maxEvents }),
      }),
    );
}

/** A rate of the currency's range as decimal text (USD per unit, 4 places). */
export function rateOf(currency: InvoiceCurrency, seed: number): string {
  if (currency === 'USD') return '1';
  const [low, high] = RATE_RANGES[currency];
  const units = low + Math.round(((high - low) * seed) / 1000);
  const text = String(units).padStart(5, '0');
  return `${text.slice(0, -4)}.${text.slice(-4)}`;
}

/**
 * `totalCents` cut into parts in proportion to `weights`, none smaller than `minPartCents`
 * (a small part joins the next; what is left joins the last), summing to the total.
 */
export function splitCents(totalCents: bigint, weights: readonly number[], minPartCents: bigint): bigint[] {
  const sum = BigInt(weights.reduce((a, b) => a + b, 0));
  const raw = weights.map((weight) => (totalCents * BigInt(weight)) / sum);
  raw[raw.length - 1]! += totalCents - raw.reduce((a, b) => a + b, 0n);
  const parts: bigint[] = [];
  let carry = 0n;
  for (const part of raw) {
    carry += part;
    if (carry >= minPartCents) {
      parts.push(carry);
      carry = 0n;
    }
  }
  if (carry > 0n) {
    if (parts.length === 0) parts.push(carry);
    else parts[parts.length - 1]! += carry;
  }
  return parts;
}

/** What writing a history into one business left behind. */
export interface WrittenBooks {
  business: Business;
  firstDate: string;
  /** The last day anything was written (the clock's "today" at the end). */
  lastDate: string;
  /** Owner contributions minus draws, by calendar year. */
  ownerFlowsByYear: Map<number, bigint>;
  invoiceIds: string[];
  billIds: string[];
  /** Every invoice and bill is paid in full. */
  allSettled: boolean;
  /** Whether any foreign-currency invoice carried a tax rate other than zero. */
  foreignTaxed: boolean;
}

interface Step {
  date: string;
  seq: number;
  run: () => void;
}

let counter = 0;

/**
 * Writes the history into `business` (the tenant's customer `customerId` is billed): every event
 * becomes steps on the day they are recorded (an invoice or bill on its issue date, payments and
 * review accepts later; a payment may be recorded days after the date it carries, so out of date
 * order), run in that order with the clock set to noon of each step's day.
 */
export function writeHistory(db: Db, clock: FixedClock, business: Business, customerId: string, history: GeneratedHistory): WrittenBooks {
  const steps: Step[] = [];
  let seq = 0;
  const at = (day: string, run: () => void) => steps.push({ date: day, seq: seq++, run });
  const written: WrittenBooks = {
    business,
    firstDate: history.startDate,
    lastDate: history.startDate,
    ownerFlowsByYear: new Map(),
    invoiceIds: [],
    billIds: [],
    allSettled: true,
    foreignTaxed: false,
  };
  const account = (name: string) => accountIdByName(db, business.id, name);
  const tx = <T>(work: () => T): T => inTransaction(db, work);

  for (const event of history.events) {
    const date = addDays(history.startDate, event.day);
    switch (event.kind) {
      case 'expense':
        at(date, () =>
          tx(() => recordExpense(db, clock, TEST_ACTOR, { business, date, amountCents: event.amountCents, vendor: { name: event.vendor }, accountId: account(event.account) })),
        );
        break;
      case 'owner': {
        const year = Number(date.slice(0, 4));
        const signed = event.direction === 'contribution' ? event.amountCents : -event.amountCents;
        written.ownerFlowsByYear.set(year, (written.ownerFlowsByYear.get(year) ?? 0n) + signed);
        at(date, () =>
          tx(() =>
            event.direction === 'contribution'
              ? postDeposit(db, clock, business.id, date, event.amountCents)
              : postEntry(db, clock, TEST_ACTOR, {
                  businessId: business.id,
                  date,
                  sourceType: 'manual',
                  memo: 'Owner draw',
                  lines: [
                    { accountId: account("Owner's Draws"), direction: 'debit', amountCents: event.amountCents },
                    { accountId: systemAccountId(db, business.id, 'bank'), direction: 'credit', amountCents: event.amountCents },
                  ],
                }),
          ),
        );
        break;
      }
      case 'bank': {
        const acceptDate = addDays(date, event.acceptAfterDays);
        const rows: StatementRow[] = event.rows.map((row, index) => ({
          row: index + 1,
          date,
          description: `CARD PURCHASE ${row.vendor ?? 'POS'} REF ${++counter}`,
          amountCents: -row.amountCents,
          vendorName: row.vendor,
        }));
        at(date, () => {
          importBankStatement(db, clock, TEST_ACTOR, { businessId: business.id, fileName: 'statement.csv', rows });
          // Rows matching an expense already recorded are not queued: accept what the import queued.
          const queued = db
            .prepare(
              `SELECT q.id, q.proposed_account_id AS proposed, t.description FROM review_queue_items q JOIN transactions t ON t.id = q.transaction_id
               WHERE q.business_id = ? AND q.accepted_at IS NULL AND t.txn_date = ?`,
            )
            .all(business.id, date) as { id: string; proposed: string | null; description: string }[];
          for (const item of queued) {
            const row = event.rows[rows.findIndex((r) => r.description === item.description)];
            if (row === undefined) continue;
            const accountId = row.account !== null ? account(row.account) : item.proposed === null ? account('Uncategorized Expense') : undefined;
            at(acceptDate, () => tx(() => acceptReviewItem(db, clock, TEST_ACTOR, { itemId: item.id, ...(accountId ? { accountId } : {}) })));
          }
        });
        break;
      }
      case 'invoice': {
        if (event.currency !== 'USD' && event.taxRatePercent !== undefined && Number(event.taxRatePercent) !== 0) written.foreignTaxed = true;
        if (!event.paidInFull || event.voidAfterDays !== null) written.allSettled = false;
        let invoiceId = '';
        let parts: bigint[] = [];
        at(date, () => {
          if (event.currency !== 'USD') setRate(db, clock, CLI_ACTOR, { currency: event.currency, date, usdPerUnit: rateOf(event.currency, event.issueRateSeed) });
          invoiceId = tx(() =>
            createInvoice(db, clock, TEST_ACTOR, {
              business,
              customerId,
              issueDate: date,
              paymentTermsDays: event.termsDays,
              currency: event.currency,
              ...(event.taxRatePercent === undefined ? {} : { taxRatePercent: event.taxRatePercent }),
              lines: event.lines.map((line, index) => ({
                description: `Work ${index + 1}`,
                quantity: line.quantity,
                unitPriceCents: line.unitPriceCents,
                accountId: account(line.account),
              })),
            }),
          ).invoiceId;
          tx(() => sendInvoice(db, clock, TEST_ACTOR, invoiceId, { siteUrl: 'http://localhost:3000' }));
          written.invoiceIds.push(invoiceId);
          if (event.voidAfterDays !== null) {
            at(addDays(date, event.voidAfterDays), () => tx(() => voidInvoice(db, clock, TEST_ACTOR, invoiceId)));
            return;
          }
          // At least 2.00 of the currency a part: never worth less than one US cent.
          parts = splitCents(findInvoice(db, invoiceId)!.totalCents, event.payments.map((p) => p.weight), 200n);
          if (!event.paidInFull) parts = parts.slice(0, -1);
          let paidAt = date;
          parts.forEach((amountCents, index) => {
            const payment = event.payments[Math.min(index, event.payments.length - 1)]!;
            paidAt = addDays(paidAt, payment.afterDays);
            const on = paidAt;
            at(addDays(on, payment.recordedAfterDays), () => {
              if (event.currency !== 'USD') setRate(db, clock, CLI_ACTOR, { currency: event.currency, date: on, usdPerUnit: rateOf(event.currency, payment.rateSeed) });
              tx(() => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents, method: 'wire', paidAt: on }));
            });
          });
        });
        break;
      }
      case 'bill': {
        if (!event.paidInFull) written.allSettled = false;
        const number = `B-${++counter}`;
        at(date, () => {
          const bill = tx(() =>
            createBill(db, clock, TEST_ACTOR, {
              businessId: business.id,
              vendorName: event.vendor,
              number,
              issueDate: date,
              dueDate: addDays(date, event.termsDays),
              amountCents: event.amountCents,
              accountId: account(event.account),
            }),
          );
          written.billIds.push(bill.id);
          let parts = splitCents(event.amountCents, event.payments.map((p) => p.weight), 1n);
          if (!event.paidInFull) parts = parts.slice(0, -1);
          let paidOn = date;
          parts.forEach((amountCents, index) => {
            const payment = event.payments[Math.min(index, event.payments.length - 1)]!;
            paidOn = addDays(paidOn, payment.afterDays);
            const on = paidOn;
            at(addDays(on, payment.recordedAfterDays), () => tx(() => payBill(db, clock, TEST_ACTOR, { billId: bill.id, amountCents, date: on })));
          });
        });
        break;
      }
    }
  }

  // Steps may add later steps (payments, accepts): always run the earliest waiting one next.
  const done = new Set<Step>();
  for (;;) {
    let next: Step | undefined;
    for (const step of steps) {
      if (done.has(step)) continue;
      if (!next || step.date < next.date || (step.date === next.date && step.seq < next.seq)) next = step;
    }
    if (!next) break;
    done.add(next);
    clock.set(`${next.date}T12:00:00.000Z`);
    written.lastDate = next.date > written.lastDate ? next.date : written.lastDate;
    next.run();
  }
  return written;
}

/** The same history written into a new accrual business and a new cash business of one new tenant. */
export function writeBooksInBothBases(db: Db, clock: FixedClock, history: GeneratedHistory): { accrual: WrittenBooks; cash: WrittenBooks } {
  clock.set(`${history.startDate}T09:00:00.000Z`);
  const tenant = buildTenant(db, clock, { plan: 'large' });
  const customerId = inTransaction(db, () =>
    findOrCreateCustomer(db, clock, TEST_ACTOR, tenant.id, { name: `Generated Customer ${++counter}`, email: `billing${counter}@customer.example` }),
  ).id;
  const accrual = buildBusiness(db, clock, { tenantId: tenant.id, basis: 'accrual' });
  const cash = buildBusiness(db, clock, { tenantId: tenant.id, basis: 'cash' });
  return { accrual: writeHistory(db, clock, accrual, customerId, history), cash: writeHistory(db, clock, cash, customerId, history) };
}
