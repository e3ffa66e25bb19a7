import { expect } from 'chai';
import fc from 'fast-check';
import type { Basis } from '../../src/books/businesses.js';
import { systemAccountId } from '../../src/books/chart.js';
import { AGING_BUCKETS, AGING_ITEMS, type Aging, type AgingBucket, bucketOf, payablesAging, receivablesAging } from '../../src/books/reports/aging.js';
import { activityThrough, debitBalance } from '../../src/books/reports/balances.js';
import { balanceSheet, CURRENT_YEAR_EARNINGS, profitAndLoss, trialBalance } from '../../src/books/reports/statements.js';
import { type FixedClock } from '../../src/clock.js';
import { addDays, daysBetween, monthEnd, monthStart, previousMonth, yearEnd, yearStart } from '../../src/dates.js';
import type { Db } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';
import { testClock } from '../support/factories.js';
import { type GeneratedHistory, historyArb, type WrittenBooks, writeBooksInBothBases } from '../support/generated-books.js';

/**
 * The statements and agings over generated books: each run writes one random history (one to
 * two years of expenses, review-queue accepts, invoices in USD, EUR, GBP, CAD and MXN paid in
 * parts at other rates or voided, bills paid in parts, owner contributions and draws) through
 * the real books functions into a fresh accrual business and a fresh cash business, then
 * checks the reports of both at several random dates. Fixed seeds keep runs repeatable; a
 * failure prints its seed and the shrunk history.
 */

const BASES: readonly Basis[] = ['accrual', 'cash'];

/**
 * A fixed seed per property, so every run checks the same books. A failing history is shrunk
 * (each candidate is written out again, so shrinking is slow) for at most SHRINK_BUDGET_MS, then
 * reported with the smallest counterexample found; a passing property takes a few seconds, so
 * the limit never cuts a passing run short, and if it ever did that is reported as a failure.
 */
const SHRINK_BUDGET_MS = 45_000;
/** To explore beyond the fixed runs (no time limit): REPORT_PROPERTIES_RUNS=200 REPORT_PROPERTIES_SEED=<n>. */
const EXPLORE_RUNS = process.env.REPORT_PROPERTIES_RUNS;
const EXPLORE_SEED = process.env.REPORT_PROPERTIES_SEED;
const runs = (numRuns: number, seed: number): fc.Parameters<unknown> => ({
  numRuns: EXPLORE_RUNS ? Number(EXPLORE_RUNS) : numRuns,
  seed: EXPLORE_SEED ? Number(EXPLORE_SEED) + seed : seed,
  plugins: EXPLORE_RUNS ? [] : [fc.interruptAfterTimeLimit(SHRINK_BUDGET_MS, { failOnInterrupt: true })],
});

interface Books {
  history: GeneratedHistory;
  accrual: WrittenBooks;
  cash: WrittenBooks;
}

/**
 * A day relative to the history's start at which to look at the books (before it, inside it,
 * after it), often moved to a month's or a year's first or last day, where the stored sums
 * switch between day, month and year runs.
 */
const SNAPS = ['day', 'monthStart', 'monthEnd', 'yearStart', 'yearEnd'] as const;
interface Probe {
  day: number;
  snap: (typeof SNAPS)[number];
}
const probeArb: fc.Arbitrary<Probe> = fc.record({ day: fc.integer({ min: -40, max: 900 }), snap: fc.constantFrom(...SNAPS) });
const probesArb = fc.array(probeArb, { minLength: 4, maxLength: 6 });
/** Periods for the profit and loss: two probes, the earlier first. */
const rangesArb = fc.array(fc.tuple(probeArb, probeArb), { minLength: 4, maxLength: 8 });

function probeDate(startDate: string, probe: Probe): string {
  const date = addDays(startDate, probe.day);
  const snapped = { day: date, monthStart: monthStart(date), monthEnd: monthEnd(date), yearStart: yearStart(date), yearEnd: yearEnd(date) };
  return snapped[probe.snap];
}

type SignedByAccount = Map<string, bigint>;

/** Debits minus credits per account over the raw journal lines a view reads, dated from..to. */
function rawSums(db: Db, businessId: string, view: Basis, from: string, to: string): SignedByAccount {
  const rows = db
    .prepare(
      `SELECT ledger_account_id AS account, sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) AS net
       FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?) AND entry_date BETWEEN ? AND ?
       GROUP BY ledger_account_id`,
    )
    .all(businessId, view, from, to) as { account: string; net: bigint }[];
  return new Map(rows.map((row) => [row.account, BigInt(row.net)]));
}

/** The accounts that have any line (even netting to zero) in the view, dated from..to. */
function accountsWithLines(db: Db, businessId: string, view: Basis, from: string, to: string): Set<string> {
  const rows = db
    .prepare(`SELECT DISTINCT ledger_account_id AS account FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?) AND entry_date BETWEEN ? AND ?`)
    .all(businessId, view, from, to) as { account: string }[];
  return new Set(rows.map((row) => row.account));
}

interface ChartAccount {
  id: string;
  type: string;
  isHeading: boolean;
  parentId: string | null;
}

function chartOf(db: Db, businessId: string): Map<string, ChartAccount> {
  const rows = db.prepare('SELECT id, type, is_heading, parent_id FROM ledger_accounts WHERE business_id = ?').all(businessId) as {
    id: string;
    type: string;
    is_heading: bigint;
    parent_id: string | null;
  }[];
  return new Map(rows.map((row) => [row.id, { id: row.id, type: row.type, isHeading: BigInt(row.is_heading) === 1n, parentId: row.parent_id }]));
}

/** A signed debit balance turned to the side the account's type grows on. */
function natural(type: string, debitMinusCredit: bigint): bigint {
  return type === 'asset' || type === 'expense' ? debitMinusCredit : -debitMinusCredit;
}

/** Net income of the raw lines: revenue (credits) minus expenses (debits). */
function rawNetIncome(chart: Map<string, ChartAccount>, sums: SignedByAccount): bigint {
  let net = 0n;
  for (const [accountId, sum] of sums) {
    const type = chart.get(accountId)!.type;
    if (type === 'revenue' || type === 'expense') net -= sum;
  }
  return net;
}

/** The probes as dates, plus the last day written and the end of the history's first year. */
function probeDates(books: Books, probes: readonly Probe[]): string[] {
  const dates = probes.map((probe) => probeDate(books.history.startDate, probe));
  dates.push(books.accrual.lastDate, `${books.history.startDate.slice(0, 4)}-12-31`);
  return [...new Set(dates)];
}

/** Calendar years from the one before the history through the one after it. */
function yearsOf(books: Books): number[] {
  const first = Number(books.history.startDate.slice(0, 4));
  const last = Number(books.accrual.lastDate.slice(0, 4));
  const years: number[] = [];
  for (let year = first - 1; year <= last + 1; year++) years.push(year);
  return years;
}

/** An open document as the journal holds it: its own posting and its payments' postings on the control account. */
interface OpenDocument {
  id: string;
  dueDate: string;
  balanceCents: bigint;
}

/**
 * The receivables (payables) still owed on asOf, each document's balance summed from the
 * accrual-view lines on the control account of its own entry, its payments' entries and (an
 * invoice voided) the entry reversing it.
 */
function openDocuments(db: Db, businessId: string, kind: 'invoices' | 'bills', asOf: string): OpenDocument[] {
  const sql =
    kind === 'invoices'
      ? `SELECT d.id, d.due_date AS due, sum(CASE l.direction WHEN 'debit' THEN l.amount_cents ELSE -l.amount_cents END) AS balance
         FROM invoices d JOIN journal_lines l ON l.ledger_account_id = @control AND l.basis IN ('both', 'accrual') AND l.entry_date <= @asOf
           AND (l.entry_id = d.journal_entry_id OR l.entry_id IN (SELECT p.journal_entry_id FROM invoice_payments p WHERE p.invoice_id = d.id)
             OR l.entry_id IN (SELECT r.id FROM journal_entries r WHERE r.reverses_entry_id = d.journal_entry_id))
         WHERE d.business_id = @business GROUP BY d.id`
      : `SELECT d.id, d.due_date AS due, sum(CASE l.direction WHEN 'credit' THEN l.amount_cents ELSE -l.amount_cents END) AS balance
         FROM bills d JOIN journal_lines l ON l.ledger_account_id = @control AND l.basis IN ('both', 'accrual') AND l.entry_date <= @asOf
           AND (l.entry_id = d.journal_entry_id OR l.entry_id IN (SELECT p.journal_entry_id FROM bill_payments p WHERE p.bill_id = d.id))
         WHERE d.business_id = @business GROUP BY d.id`;
  const control = systemAccountId(db, businessId, kind === 'invoices' ? 'accounts_receivable' : 'accounts_payable');
  const rows = db.prepare(sql).all({ control, asOf, business: businessId }) as { id: string; due: string; balance: bigint }[];
  return rows.map((row) => ({ id: row.id, dueDate: row.due, balanceCents: BigInt(row.balance) })).filter((doc) => doc.balanceCents !== 0n);
}

function expectAgingMatches(aging: Aging, open: OpenDocument[], asOf: string, what: string): void {
  // What the journal says is owed on each document is never negative: no document is overpaid.
  for (const doc of open) expect(doc.balanceCents > 0n, `${what}: ${doc.id} owes ${doc.balanceCents}`).to.equal(true);
  const bucketSum = AGING_BUCKETS.reduce((sum, bucket) => sum + aging.buckets[bucket], 0n);
  expect(bucketSum, `${what}: buckets sum to the grand total`).to.equal(aging.grandTotalCents);
  const expectedBuckets = Object.fromEntries(AGING_BUCKETS.map((bucket) => [bucket, 0n])) as Record<AgingBucket, bigint>;
  for (const doc of open) expectedBuckets[bucketOf(daysBetween(doc.dueDate, asOf))] += doc.balanceCents;
  expect(aging.buckets, `${what}: each document in the bucket of its days past due`).to.deep.equal(expectedBuckets);

  expect(aging.items.length, `${what}: the ${AGING_ITEMS} largest are listed`).to.equal(Math.min(AGING_ITEMS, open.length));
  const byId = new Map(open.map((doc) => [doc.id, doc]));
  aging.items.forEach((item, index) => {
    const doc = byId.get(item.id);
    expect(doc, `${what}: listed item ${item.number} is open`).to.not.equal(undefined);
    expect(item.balanceCents, `${what}: ${item.number} balance`).to.equal(doc!.balanceCents);
    expect(item.dueDate).to.equal(doc!.dueDate);
    expect(item.daysOverdue, `${what}: ${item.number} days overdue`).to.equal(daysBetween(item.dueDate, asOf));
    if (index > 0) expect(item.balanceCents <= aging.items[index - 1]!.balanceCents, `${what}: sorted by balance, largest first`).to.equal(true);
  });
  // The listed balances are the largest ones.
  const largest = open.map((doc) => doc.balanceCents).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)).slice(0, AGING_ITEMS);
  expect(aging.items.map((item) => item.balanceCents)).to.deep.equal(largest);
}

describe('report properties over generated books (accrual and cash businesses)', function () {
  // Each run writes a whole history twice; the file passes in about 15 s, but a failure's
  // shrinking may take up to SHRINK_BUDGET_MS, and mocha must not report a timeout instead.
  this.timeout(SHRINK_BUDGET_MS + 60_000);
  let temp: TempDb;
  let db: Db;
  let clock: FixedClock;

  before(async () => {
    temp = await freshDb();
    db = temp.db;
    clock = testClock();
  });
  after(() => temp.close());

  const write = (history: GeneratedHistory): Books => ({ history, ...writeBooksInBothBases(db, clock, history) });

  it('trial balance: total debits = total credits, each row on exactly one side', () => {
    fc.assert(
      fc.property(historyArb(), probesArb, (history, probes) => {
        const books = write(history);
        for (const basis of BASES) {
          const { business } = books[basis];
          for (const asOf of probeDates(books, probes)) {
            const tb = trialBalance(db, business, asOf);
            expect(tb.basis).to.equal(basis);
            let debitCents = 0n;
            let creditCents = 0n;
            for (const row of tb.rows) {
              const sides = (row.debitCents > 0n ? 1 : 0) + (row.creditCents > 0n ? 1 : 0);
              expect(sides, `${basis} ${asOf} ${row.account}: debit ${row.debitCents}, credit ${row.creditCents}`).to.equal(1);
              expect(row.debitCents >= 0n && row.creditCents >= 0n, `${row.account} sides are never negative`).to.equal(true);
              debitCents += row.debitCents;
              creditCents += row.creditCents;
            }
            expect(tb.totals, `${basis} trial balance totals as of ${asOf}`).to.deep.equal({ debitCents, creditCents });
            expect(debitCents, `${basis} as of ${asOf}: debits = credits`).to.equal(creditCents);
          }
        }
      }),
      runs(8, 20260401),
    );
  });

  it('balance sheet: assets = liabilities + equity, and equity shows Current Year Earnings (this year\'s net income)', () => {
    fc.assert(
      fc.property(historyArb(), probesArb, (history, probes) => {
        const books = write(history);
        for (const basis of BASES) {
          const { business } = books[basis];
          const chart = chartOf(db, business.id);
          const retainedId = systemAccountId(db, business.id, 'retained_earnings');
          for (const asOf of probeDates(books, probes)) {
            const sheet = balanceSheet(db, business, asOf);
            const { assetsCents, liabilitiesCents, equityCents } = sheet.totals;
            expect(assetsCents, `${basis} as of ${asOf}: assets = liabilities + equity`).to.equal(liabilitiesCents + equityCents);
            const earnings = sheet.rows.filter((row) => row.account === CURRENT_YEAR_EARNINGS);
            expect(earnings, `${basis} as of ${asOf}: one Current Year Earnings row`).to.have.length(1);
            expect(earnings[0]!.type).to.equal('equity');
            expect(earnings[0]!.amountCents, `${basis} as of ${asOf}: current year earnings = net income since January 1`).to.equal(
              profitAndLoss(db, business, yearStart(asOf), asOf).totals.netIncomeCents,
            );
            // The totals are the sums of the leaf rows (and the computed earnings row) of each section.
            const leafSum = (type: string) => sheet.rows.filter((row) => row.type === type && !row.isTotal).reduce((sum, row) => sum + row.amountCents, 0n);
            expect([leafSum('asset'), leafSum('liability'), leafSum('equity')]).to.deep.equal([assetsCents, liabilitiesCents, equityCents]);
            // And they are what the raw lines say: equity is the equity accounts plus every year's
            // earnings; retained earnings carries the earnings of the years before asOf's.
            const raw = rawSums(db, business.id, basis, '0000-01-01', asOf);
            const rawTotal = (type: string) => [...raw].filter(([id]) => chart.get(id)!.type === type).reduce((sum, [, net]) => sum + natural(type, net), 0n);
            expect(sheet.totals, `${basis} balance sheet as of ${asOf} from the raw lines`).to.deep.equal({
              assetsCents: rawTotal('asset'),
              liabilitiesCents: rawTotal('liability'),
              equityCents: rawTotal('equity') + rawNetIncome(chart, raw),
            });
            const earlier = rawSums(db, business.id, basis, '0000-01-01', addDays(yearStart(asOf), -1));
            const retained = sheet.rows.find((row) => row.accountId === retainedId);
            expect(retained?.amountCents, `${basis} retained earnings as of ${asOf}`).to.equal(natural('equity', raw.get(retainedId) ?? 0n) + rawNetIncome(chart, earlier));
          }
        }
      }),
      runs(8, 20260402),
    );
  });

  it("a calendar year's net income = the year's change in equity less owner contributions and draws", () => {
    fc.assert(
      fc.property(historyArb(), (history) => {
        const books = write(history);
        for (const basis of BASES) {
          const { business, ownerFlowsByYear } = books[basis];
          for (const year of yearsOf(books)) {
            const netIncome = profitAndLoss(db, business, `${year}-01-01`, `${year}-12-31`).totals.netIncomeCents;
            const equityEnd = balanceSheet(db, business, `${year}-12-31`).totals.equityCents;
            const equityBefore = balanceSheet(db, business, `${year - 1}-12-31`).totals.equityCents;
            const ownerFlows = ownerFlowsByYear.get(year) ?? 0n;
            expect(netIncome, `${basis} ${year}: equity ${equityBefore} -> ${equityEnd}, owner flows ${ownerFlows}`).to.equal(equityEnd - equityBefore - ownerFlows);
          }
        }
      }),
      runs(8, 20260403),
    );
  });

  it('aging: buckets sum to grandTotal, at most 25 items by balance, daysOverdue = asOf - dueDate, grandTotal = the AR (AP) accrual balance', () => {
    fc.assert(
      fc.property(fc.oneof(historyArb(), historyArb({ manyOpenInvoices: true })), probesArb, (history, probes) => {
        const books = write(history);
        for (const basis of BASES) {
          const { business } = books[basis];
          const receivable = systemAccountId(db, business.id, 'accounts_receivable');
          const payable = systemAccountId(db, business.id, 'accounts_payable');
          for (const asOf of probeDates(books, probes)) {
            const ar = receivablesAging(db, business.id, asOf);
            const ap = payablesAging(db, business.id, asOf);
            expectAgingMatches(ar, openDocuments(db, business.id, 'invoices', asOf), asOf, `${basis} AR aging as of ${asOf}`);
            expectAgingMatches(ap, openDocuments(db, business.id, 'bills', asOf), asOf, `${basis} AP aging as of ${asOf}`);
            // The control accounts' accrual balances: from the trial balance of the accrual business,
            // from the accrual view of the stored balances for the cash one (its own view never sees them).
            let receivableCents: bigint;
            let payableCents: bigint;
            if (basis === 'accrual') {
              const rows = trialBalance(db, business, asOf).rows;
              const row = (id: string) => rows.find((r) => r.accountId === id);
              receivableCents = (row(receivable)?.debitCents ?? 0n) - (row(receivable)?.creditCents ?? 0n);
              payableCents = (row(payable)?.creditCents ?? 0n) - (row(payable)?.debitCents ?? 0n);
            } else {
              const activity = activityThrough(db, business.id, 'accrual', asOf);
              receivableCents = debitBalance(activity.get(receivable));
              payableCents = -debitBalance(activity.get(payable));
            }
            expect(ar.grandTotalCents, `${basis} AR aging as of ${asOf} = Accounts Receivable`).to.equal(receivableCents);
            expect(ap.grandTotalCents, `${basis} AP aging as of ${asOf} = Accounts Payable`).to.equal(payableCents);
          }
        }
      }),
      runs(8, 20260404),
    );
  });

  /*
   * Once every invoice and bill is paid in full, the two views differ only in how sales tax on
   * foreign-currency invoices is measured (src/books/invoice-posting.ts, invoice-math.ts). Per
   * invoice, with C its USD cash (each payment at its own date's rate), S and T its subtotal and
   * tax at the issue rate:
   *   accrual: revenue S, sales tax payable T, realised FX (an expense account; a gain is a
   *            credit) C - (S + T): its net income is S + C - S - T = C - T;
   *   cash:    revenue R = round(C x subtotal / total), sales tax payable C - R: net income R.
   * So in both views, net income + sales tax payable = C. Expenses and review accepts post to
   * both views alike, and a bill paid in full is the same expense in both (accrual at issue,
   * cash as paid). Hence, over all time:
   *   accrual net income + accrual sales tax payable = cash net income + cash sales tax payable.
   * For a USD invoice T = tax and C = total, so C - R = total - subtotal = tax = T; for a
   * tax-free one T = 0 and R = C. So without taxed foreign invoices, net income itself is equal.
   */
  describe('cash and accrual agree once everything is paid', () => {
    function allTime(books: Books, basis: Basis): { netIncomeCents: bigint; salesTaxPayableCents: bigint } {
      const { business } = books[basis];
      const end = books[basis].lastDate;
      const netIncomeCents = profitAndLoss(db, business, yearStart(books.history.startDate), end).totals.netIncomeCents;
      const taxAccount = systemAccountId(db, business.id, 'sales_tax_payable');
      const taxRow = balanceSheet(db, business, end).rows.find((row) => row.accountId === taxAccount);
      return { netIncomeCents, salesTaxPayableCents: taxRow?.amountCents ?? 0n };
    }

    function expectSettled(books: Books): void {
      expect(books.accrual.allSettled && books.cash.allSettled).to.equal(true);
      for (const basis of BASES) {
        const end = books[basis].lastDate;
        expect(receivablesAging(db, books[basis].business.id, end).grandTotalCents, 'nothing is owed to us').to.equal(0n);
        expect(payablesAging(db, books[basis].business.id, end).grandTotalCents, 'we owe nothing').to.equal(0n);
      }
    }

    it('accrual net income + sales tax payable = cash net income + sales tax payable (any currencies and taxes)', () => {
      fc.assert(
        fc.property(historyArb({ settleAll: true }), (history) => {
          const books = write(history);
          expectSettled(books);
          const accrual = allTime(books, 'accrual');
          const cash = allTime(books, 'cash');
          expect(accrual.netIncomeCents + accrual.salesTaxPayableCents, `accrual ${accrual.netIncomeCents} + ${accrual.salesTaxPayableCents}, cash ${cash.netIncomeCents} + ${cash.salesTaxPayableCents}`).to.equal(
            cash.netIncomeCents + cash.salesTaxPayableCents,
          );
          if (!books.accrual.foreignTaxed) expect(accrual, 'no taxed foreign invoice: the same net income and tax').to.deep.equal(cash);
        }),
        runs(8, 20260405),
      );
    });

    it('net income is the same in both views when every invoice is in USD or tax-free', () => {
      fc.assert(
        fc.property(historyArb({ settleAll: true, invoices: 'usd-or-tax-free' }), (history) => {
          const books = write(history);
          expectSettled(books);
          expect(books.accrual.foreignTaxed).to.equal(false);
          expect(allTime(books, 'accrual').netIncomeCents).to.equal(allTime(books, 'cash').netIncomeCents);
        }),
        runs(6, 20260406),
      );
    });
  });

  it('the statements agree with the raw journal lines of their basis (trial balance as of a date, P&L over a range)', () => {
    fc.assert(
      fc.property(historyArb(), probesArb, rangesArb, (history, probes, ranges) => {
        const books = write(history);
        for (const basis of BASES) {
          const { business } = books[basis];
          const chart = chartOf(db, business.id);
          for (const asOf of probeDates(books, probes)) {
            const raw = rawSums(db, business.id, basis, '0000-01-01', asOf);
            const tb = trialBalance(db, business, asOf);
            const shown = new Map(tb.rows.map((row) => [row.accountId, row.debitCents - row.creditCents]));
            const expected = new Map([...raw].filter(([, net]) => net !== 0n));
            expect(shown, `${basis} trial balance as of ${asOf} = the raw ${basis}-view lines`).to.deep.equal(expected);
          }
          for (const range of ranges) {
            const [start, end] = range.map((probe) => probeDate(books.history.startDate, probe)).sort() as [string, string];
            const pl = profitAndLoss(db, business, start, end);
            const prior = previousMonth(start)!;
            const current = rawSums(db, business.id, basis, start, end);
            const before = rawSums(db, business.id, basis, prior.start, prior.end);
            const leaves = pl.rows.filter((row) => row.accountId !== null && !chart.get(row.accountId)!.isHeading);
            for (const row of leaves) {
              expect(row.amountCents, `${basis} P&L ${start}..${end}: ${row.account}`).to.equal(natural(row.type, current.get(row.accountId!) ?? 0n));
              expect(row.priorCents, `${basis} P&L prior ${prior.start}..${prior.end}: ${row.account}`).to.equal(natural(row.type, before.get(row.accountId!) ?? 0n));
            }
            // Every revenue and expense account with a line in either period is shown, and no other.
            const withLines = new Set(
              [...accountsWithLines(db, business.id, basis, start, end), ...accountsWithLines(db, business.id, basis, prior.start, prior.end)].filter((id) =>
                ['revenue', 'expense'].includes(chart.get(id)!.type),
              ),
            );
            expect(new Set(leaves.map((row) => row.accountId))).to.deep.equal(withLines);
            const sumOf = (sums: SignedByAccount, type: string) => [...sums].filter(([id]) => chart.get(id)!.type === type).reduce((sum, [, net]) => sum + natural(type, net), 0n);
            expect(pl.totals, `${basis} P&L totals ${start}..${end}`).to.deep.equal({
              revenueCents: sumOf(current, 'revenue'),
              expensesCents: sumOf(current, 'expense'),
              netIncomeCents: rawNetIncome(chart, current),
            });
            expect(pl.prior.netIncomeCents, `${basis} P&L prior net income`).to.equal(rawNetIncome(chart, before));
          }
        }
      }),
      runs(8, 20260407),
    );
  });
});
