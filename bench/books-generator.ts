/**
 * Large books for the benchmarks (bench/large-books.ts writes them into a file; bench/run.ts
 * and bench/reports.ts measure them; test/bench/large-books.test.ts checks them): one account
 * and one accrual business with its standard chart grown to 200 accounts, three years of
 * journal lines, and open invoices and bills to age.
 *
 * Everything is written through the books functions the API and the CLI run (src/books), in
 * the write door's batches (`batch`, src/door/door.ts) on a guarded connection, as the demo
 * seed writes its books: the posting engine checks every entry, the schema's triggers keep
 * ledger_balances as the lines arrive, and an audited write made around the door would be
 * refused. Invoices are drafted, sent and paid (createInvoice, sendInvoice, recordPayment),
 * bills recorded and paid (createBill, payBill), the overdue sweep marks the open invoices past
 * due, and the everyday history is posted entry by entry (postEntry), each entry that moves the
 * bank with its row in the register (insertTransaction). Only the chart's extra accounts are
 * inserted directly: no books function adds an account to a chart.
 *
 * Every entry has 2 to 6 lines and balances in the accrual view and in the cash view, and the
 * stored balances are verified against the lines at the end (what `daybook verify` does). The
 * history's own invoices and bills are paid in full, so the receivable and payable balances
 * equal the agings' grand totals. Same seed and end date, same books, ids and creation times
 * aside: the figures, dates, names and numbers all come from the seed.
 */
import { performance } from 'node:perf_hooks';
import { createBill, payBill } from '../src/books/bills.js';
import { type Business, createBusiness } from '../src/books/businesses.js';
import { chartTree, systemAccountId } from '../src/books/chart.js';
import { findOrCreateCustomer } from '../src/books/customers.js';
import { allocate } from '../src/books/invoice-math.js';
import { type PaymentMethod, createInvoice } from '../src/books/invoices.js';
import { markOverdueInvoices, recordPayment, sendInvoice } from '../src/books/invoice-posting.js';
import { createKey } from '../src/books/keys.js';
import { type Direction, type LineBasis, postEntry, type SourceType } from '../src/books/ledger.js';
import { verifyBalances } from '../src/books/reports/verify.js';
import { createTenant, updateTenant } from '../src/books/tenants.js';
import { insertTransaction } from '../src/books/transactions.js';
import { findOrCreateVendor, setVendorFlags } from '../src/books/vendors.js';
import { type Clock, systemClock } from '../src/clock.js';
import { addDays, daysBetween, isIsoDate } from '../src/dates.js';
import { type Db, guardBookWrites } from '../src/db/connection.js';
import { one, run } from '../src/db/statements.js';
import { batch } from '../src/door/door.js';
import { newId } from '../src/ids.js';
import { taxCents } from '../src/money.js';
import { seededRandom } from '../src/seeded-random.js';
import { CLI_ACTOR } from '../src/store/audit.js';
import { ensureServerSecrets } from '../src/store/secrets.js';

/** What to generate. */
export interface LargeBooksPlan {
  /** Journal lines in all, exactly: the documents' and the history's. */
  lines: number;
  openInvoices: number;
  /** Invoices paid in full (closed), spread over the three years, before the open ones. */
  paidInvoices: number;
  openBills: number;
  seed: number;
  /** The books' last day; they start three years before it. */
  endDate: string;
}

/** What was generated: the ids the benchmarks need and the figures the summary prints. */
export interface LargeBooks {
  tenantId: string;
  businessId: string;
  /** A read key for the business, with the account's rate limit off; shown once, never stored. */
  key: string;
  startDate: string;
  endDate: string;
  lines: number;
  entries: number;
  linesByBasis: Record<LineBasis, number>;
  chartAccounts: number;
  invoicesWithPayments: number;
  billsWithPayments: number;
  registerRows: number;
}

/** The chart grows to this many accounts (headings included). */
const CHART_ACCOUNTS = 200;
/** The posting engine's per-entry bounds that this generator keeps to. */
const MIN_ENTRY_LINES = 2;
const MAX_ENTRY_LINES = 6;
/** Lines per batch (one transaction): large enough to be fast, small enough to keep the WAL modest. */
const LINES_PER_BATCH = 50_000;
const PROGRESS_EVERY_LINES = 100_000;
/** Where pay links would point; the customers have no email address, so no email is written. */
const SITE_URL = 'http://127.0.0.1:3000';

/**
 * Writes large books into `db`, a migrated books file with nothing else in it, and guards the
 * connection: from here on it takes audited writes only through the door. `progress` gets a
 * line now and then (the command line prints them on stderr).
 */
export function generateLargeBooks(db: Db, plan: LargeBooksPlan, progress: (note: string) => void = () => {}): LargeBooks {
  assertPlan(plan);
  guardBookWrites(db);
  const startDate = addDays(plan.endDate, -(3 * 365));
  const draw = new Draw(seededRandom(plan.seed));
  const clock = new DayClock(startDate);

  const { tenant, business } = batch(db, () => {
    ensureServerSecrets(db, systemClock);
    const tenant = createTenant(db, systemClock, CLI_ACTOR, { name: 'Large Books Firm', plan: 'large' });
    return { tenant, business: createBusiness(db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'Large Books Trading Co', basis: 'accrual' }) };
  });
  const books: Books = batch(db, () => ({
    db,
    clock,
    draw,
    business,
    startDate,
    endDate: plan.endDate,
    chart: growChart(db, business.id, startDate),
    customers: addCustomers(db, clock, tenant.id, Math.min(5000, Math.max(1, Math.ceil((plan.openInvoices + plan.paidInvoices) / 5))), draw),
    vendors: addVendors(db, clock, tenant.id, 300, draw),
    journal: new Journal(db, clock, business.id, systemAccountId(db, business.id, 'bank'), progress),
  }));
  const { journal } = books;

  // With paidInvoices, invoices paid in full come first, spread over the three years: real
  // books have far more of those than open ones, and aging must not read them.
  let invoicesWithPayments = 0;
  inBatches(db, plan.paidInvoices + plan.openInvoices, journal, (index) => {
    if (writeInvoice(books, index < plan.paidInvoices) === 'partly paid') invoicesWithPayments += 1;
  });
  let billsWithPayments = 0;
  inBatches(db, plan.openBills, journal, (index) => {
    if (writeBill(books, index + 1)) billsWithPayments += 1;
  });
  writeHistory(books, plan.lines);
  if (journal.lines() !== plan.lines) throw new Error(`wrote ${journal.lines()} lines, not ${plan.lines}`);
  // What `daybook verify` checks: the stored sums the reports read agree with the lines.
  const check = verifyBalances(db, business.id);
  const first = check.mismatches[0];
  if (first) throw new Error(`${check.mismatchCount} stored balances disagree with the journal lines, the first of account ${first.accountId} (${first.span} from ${first.periodStart}, ${first.basis})`);

  const key = batch(db, () => {
    clock.day = plan.endDate;
    markOverdueInvoices(db, clock);
    const created = createKey(db, systemClock, CLI_ACTOR, { tenantId: tenant.id, name: 'report bench', access: 'read', businessIds: [business.id] });
    updateTenant(db, systemClock, CLI_ACTOR, tenant.id, { rateLimit: { mode: 'off' } });
    return created.key;
  });
  const count = (sql: string) => Number(one<{ n: bigint }>(db, sql, business.id)!.n);
  const byBasis = db.prepare('SELECT basis, count(*) AS n FROM journal_lines WHERE business_id = ? GROUP BY basis').all(business.id) as { basis: LineBasis; n: bigint }[];
  return {
    tenantId: tenant.id,
    businessId: business.id,
    key,
    startDate,
    endDate: plan.endDate,
    lines: journal.lines(),
    entries: count('SELECT count(*) AS n FROM journal_entries WHERE business_id = ?'),
    linesByBasis: { both: 0, accrual: 0, cash: 0, ...Object.fromEntries(byBasis.map((row) => [row.basis, Number(row.n)])) },
    chartAccounts: books.chart.size,
    invoicesWithPayments,
    billsWithPayments,
    registerRows: count('SELECT count(*) AS n FROM transactions WHERE business_id = ?'),
  };
}

function assertPlan(plan: LargeBooksPlan): void {
  for (const [name, value, min] of [
    ['lines', plan.lines, 2],
    ['openInvoices', plan.openInvoices, 0],
    ['paidInvoices', plan.paidInvoices, 0],
    ['openBills', plan.openBills, 0],
    ['seed', plan.seed, 0],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < min) throw new Error(`generateLargeBooks: ${name} must be a whole number of at least ${min} (got ${value})`);
  }
  if (!isIsoDate(plan.endDate)) throw new Error(`generateLargeBooks: endDate must be a date YYYY-MM-DD (got ${plan.endDate})`);
}

/** The clock the books are written with: noon on the day of the document being written. */
class DayClock implements Clock {
  constructor(public day: string) {}

  now(): Date {
    return new Date(`${this.day}T12:00:00.000Z`);
  }
}

/** Choices from the seeded generator. */
class Draw {
  constructor(private readonly random: () => number) {}

  /** A whole number from lo to hi, both inclusive. */
  between(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  /** A number in [0, 1). */
  fraction(): number {
    return this.random();
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  /** Earlier items much more often than later ones, as real books favour a few accounts. */
  pickSkewed<T>(items: readonly T[]): T {
    const r = this.random();
    return items[Math.floor(r * r * items.length)]!;
  }

  /** `count` different items, skewed towards the front. */
  pickDistinct<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<T>();
    while (chosen.size < Math.min(count, items.length)) chosen.add(this.pickSkewed(items));
    return [...chosen];
  }

  /** Cents spread log-uniformly from lo to hi dollars: many small amounts, a few large ones. */
  dollars(lo: number, hi: number): bigint {
    const value = Math.exp(Math.log(lo) + this.random() * (Math.log(hi) - Math.log(lo)));
    return BigInt(Math.max(1, Math.round(value * 100)));
  }

  /** `totalCents` over `parts` shares, each at least one cent. */
  split(totalCents: bigint, parts: number): bigint[] {
    if (totalCents < BigInt(parts)) throw new Error(`split: ${totalCents} cents cannot make ${parts} positive shares`);
    const weights = Array.from({ length: parts }, () => BigInt(this.between(1, 10)));
    // One cent each first, the rest in proportion: no share can round to zero.
    return allocate(totalCents - BigInt(parts), weights).map((share) => share + 1n);
  }
}

// ---------------------------------------------------------------------------------------------
// What the books are made of.

interface Party {
  id: string;
  name: string;
}

/** The accounts the generator posts to, by what they are for. */
interface Chart {
  size: number;
  bank: string;
  receivable: string;
  payable: string;
  salesTax: string;
  card: string;
  ownerEquity: string;
  draws: string;
  payrollLiabilities: string;
  loan: string;
  interestExpense: string;
  cashAccounts: string[];
  otherAssets: string[];
  revenueAccounts: string[];
  expenseAccounts: string[];
  payrollExpenses: string[];
}

/** Everything a document or an entry is drawn from and written with. */
interface Books {
  db: Db;
  clock: DayClock;
  draw: Draw;
  business: Business;
  startDate: string;
  endDate: string;
  chart: Chart;
  customers: Party[];
  vendors: Party[];
  journal: Journal;
}

const EXPENSE_KINDS = [
  'Payroll', 'Payroll Taxes', 'Employee Benefits', 'Training', 'Recruiting', 'Equipment Rental', 'Repairs and Maintenance',
  'Cleaning', 'Security', 'Shipping and Postage', 'Printing', 'Telephone', 'Internet', 'Cloud Hosting', 'Licenses and Permits',
  'Dues and Memberships', 'Conferences', 'Vehicle Fuel', 'Vehicle Maintenance', 'Parking and Tolls', 'Client Gifts', 'Entertainment',
];
const DEPARTMENTS = ['Sales', 'Operations', 'Engineering', 'Administration', 'Field Services'];
const REVENUE_LINES = ['Consulting', 'Installation', 'Support Contracts', 'Hardware Sales', 'Software Licences', 'Training Courses', 'Maintenance Plans', 'Design Work'];
const REGIONS = ['North', 'South', 'East', 'West', 'Central'];
const CASH_EXTRAS = ['Merchant Clearing', 'Petty Cash', 'Payroll Checking', 'Online Payments Balance', 'Money Market'];
const ASSET_EXTRAS = ['Security Deposits', 'Vehicles', 'Computer Equipment', 'Furniture and Fixtures', 'Inventory'];
const LIABILITY_EXTRAS = ['Payroll Liabilities', 'Accrued Expenses', 'Customer Deposits', 'Line of Credit', 'Equipment Loan'];
const COMPANY_WORDS = ['Acme', 'Birch', 'Cobalt', 'Delta', 'Evergreen', 'Falcon', 'Granite', 'Harbor', 'Iris', 'Juniper', 'Keystone', 'Lumen', 'Maple', 'Nimbus', 'Orchard', 'Pioneer', 'Quartz', 'Redwood', 'Summit', 'Tidewater', 'Union', 'Vista', 'Willow', 'Yarrow', 'Zenith'];
const COMPANY_NOUNS = ['Builders', 'Dental', 'Logistics', 'Media', 'Studios', 'Foods', 'Health', 'Motors', 'Partners', 'Labs', 'Outfitters', 'Realty', 'Systems', 'Supply', 'Works'];
const COMPANY_SUFFIXES = ['LLC', 'Inc.', 'Co.', 'Ltd.', 'Group'];
const PAYMENT_METHODS: readonly PaymentMethod[] = ['check', 'wire', 'other', 'stripe', 'cash'];
const TAX_RATES = ['8.25', '7', '6.5'];
const QUANTITIES = ['1', '1', '1', '2', '3', '5', '10', '0.5', '1.5', '12'];

function companyNames(draw: Draw, count: number): string[] {
  const names = new Set<string>();
  while (names.size < count) {
    const base = `${draw.pick(COMPANY_WORDS)} ${draw.pick(COMPANY_NOUNS)} ${draw.pick(COMPANY_SUFFIXES)}`;
    names.add(names.has(base) ? `${base} ${names.size + 1}` : base);
  }
  return [...names];
}

/** The standard chart plus postable leaves under its headings, CHART_ACCOUNTS in all. */
function growChart(db: Db, businessId: string, startDate: string): Chart {
  const standard = chartTree(db, businessId);
  const byCode = (code: string, heading: boolean): string => {
    const node = standard.find((n) => n.code === code);
    if (!node || node.isHeading !== heading) throw new Error(`the standard chart has no ${heading ? 'heading' : 'postable account'} ${code}`);
    return node.id;
  };
  const addLeaves = (parentCode: string, type: string, codePrefix: string, names: readonly string[]): string[] =>
    names.map((name, index) => {
      const id = newId();
      run(
        db,
        `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 0, 0, NULL, ?)`,
        id,
        businessId,
        byCode(parentCode, true),
        `${codePrefix}${String(index + 1).padStart(3, '0')}`,
        name,
        type,
        `${startDate}T00:00:00.000Z`,
      );
      return id;
    });
  const cashExtras = addLeaves('1100', 'asset', '11', CASH_EXTRAS);
  const assetExtras = addLeaves('1000', 'asset', '16', ASSET_EXTRAS);
  const liabilityExtras = addLeaves('2000', 'liability', '24', LIABILITY_EXTRAS);
  const revenueExtras = addLeaves('4000', 'revenue', '45', REVENUE_LINES.flatMap((product) => REGIONS.map((region) => `${product} - ${region}`)));
  const expenseRoom = CHART_ACCOUNTS - standard.length - cashExtras.length - assetExtras.length - liabilityExtras.length - revenueExtras.length;
  const expenseNames = EXPENSE_KINDS.flatMap((kind) => DEPARTMENTS.map((department) => `${kind} - ${department}`));
  if (expenseRoom < 0 || expenseRoom > expenseNames.length) throw new Error(`cannot make a ${CHART_ACCOUNTS}-account chart from ${standard.length} standard accounts`);
  const expenseExtras = addLeaves('6100', 'expense', '65', expenseNames.slice(0, expenseRoom));
  const size = chartTree(db, businessId).length;
  if (size !== CHART_ACCOUNTS) throw new Error(`the chart has ${size} accounts, not ${CHART_ACCOUNTS}`);

  const operatingHeading = byCode('6100', true);
  const uncategorized = systemAccountId(db, businessId, 'uncategorized_expense');
  const standardExpenses = standard.filter((n) => n.parentId === operatingHeading && !n.isHeading && n.id !== uncategorized).map((n) => n.id);
  return {
    size,
    bank: systemAccountId(db, businessId, 'bank'),
    receivable: systemAccountId(db, businessId, 'accounts_receivable'),
    payable: systemAccountId(db, businessId, 'accounts_payable'),
    salesTax: systemAccountId(db, businessId, 'sales_tax_payable'),
    card: byCode('2300', false),
    ownerEquity: systemAccountId(db, businessId, 'owner_equity'),
    draws: byCode('3200', false),
    payrollLiabilities: liabilityExtras[0]!,
    loan: liabilityExtras[4]!,
    interestExpense: byCode('6120', false),
    cashAccounts: [byCode('1120', false), ...cashExtras],
    otherAssets: [byCode('1300', false), byCode('1500', false), ...assetExtras],
    revenueAccounts: [systemAccountId(db, businessId, 'sales'), byCode('4200', false), ...revenueExtras, byCode('4900', false)],
    expenseAccounts: [...standardExpenses, ...expenseExtras, uncategorized],
    payrollExpenses: expenseExtras.slice(0, DEPARTMENTS.length * 2),
  };
}

/** Customers with no email address: sending their invoices writes nothing for the outbox job to deliver. */
function addCustomers(db: Db, clock: DayClock, tenantId: string, count: number, draw: Draw): Party[] {
  return companyNames(draw, count).map((name) => {
    const { id, created } = findOrCreateCustomer(db, clock, CLI_ACTOR, tenantId, { name });
    if (!created) throw new Error(`customer ${name} was there already`);
    return { id, name };
  });
}

function addVendors(db: Db, clock: DayClock, tenantId: string, count: number, draw: Draw): Party[] {
  return companyNames(draw, count).map((name) => {
    const { vendor, created } = findOrCreateVendor(db, clock, CLI_ACTOR, tenantId, name);
    if (!created) throw new Error(`vendor ${name} was there already`);
    if (draw.chance(0.2)) setVendorFlags(db, clock, CLI_ACTOR, vendor.id, { is1099Eligible: true });
    return { id: vendor.id, name };
  });
}

// ---------------------------------------------------------------------------------------------
// The journal: what has been written, and the history's entries.

interface Line {
  accountId: string;
  direction: Direction;
  amountCents: bigint;
  basis: LineBasis;
}

interface EntryDraft {
  date: string;
  memo: string;
  sourceType: SourceType;
  lines: Line[];
  /** The vendor paid, for the register row of a payment to one. */
  vendorId?: string;
}

const line = (accountId: string, direction: Direction, amountCents: bigint, basis: LineBasis): Line => ({ accountId, direction, amountCents, basis });

/**
 * Counts what the books hold and posts the history's entries. Every entry that moves the bank
 * (a line of basis `both` on it) also gets a row in the register, as expenses and accepted bank
 * lines have: money in or out, against the entry's first other account.
 */
class Journal {
  private readonly firstLineId: number;
  private readonly started = performance.now();
  private nextProgress = PROGRESS_EVERY_LINES;

  constructor(
    private readonly db: Db,
    private readonly clock: DayClock,
    private readonly businessId: string,
    private readonly bankId: string,
    private readonly progress: (note: string) => void,
  ) {
    this.firstLineId = this.lastLineId();
  }

  /** Journal lines written since the journal began: the file is this generator's alone. */
  lines(): number {
    return this.lastLineId() - this.firstLineId;
  }

  private lastLineId(): number {
    return Number(one<{ id: bigint | null }>(this.db, 'SELECT max(id) AS id FROM journal_lines')!.id ?? 0n);
  }

  post(entry: EntryDraft, source: 'csv' | 'manual'): void {
    this.clock.day = entry.date;
    const posted = postEntry(this.db, this.clock, CLI_ACTOR, { businessId: this.businessId, date: entry.date, memo: entry.memo, sourceType: entry.sourceType, lines: entry.lines });
    const bank = entry.lines.find((l) => l.accountId === this.bankId && l.basis === 'both');
    if (!bank) return;
    insertTransaction(this.db, this.clock, {
      id: newId(),
      businessId: this.businessId,
      date: entry.date,
      amountCents: bank.amountCents,
      direction: bank.direction === 'debit' ? 'in' : 'out',
      vendorId: entry.vendorId ?? null,
      accountId: entry.lines.find((l) => l.accountId !== this.bankId)?.accountId ?? null,
      status: 'accepted',
      source,
      description: entry.memo,
      journalEntryId: posted.id,
    });
  }

  /** Says how far the books have come, every PROGRESS_EVERY_LINES lines. */
  report(): void {
    const lines = this.lines();
    if (lines < this.nextProgress) return;
    const entries = Number(one<{ n: bigint }>(this.db, 'SELECT count(*) AS n FROM journal_entries WHERE business_id = ?', this.businessId)!.n);
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    this.progress(`${lines.toLocaleString('en-US')} lines, ${entries.toLocaleString('en-US')} entries, ${seconds} s`);
    while (this.nextProgress <= lines) this.nextProgress += PROGRESS_EVERY_LINES;
  }
}

/** Runs write(0) .. write(count - 1) in the door's batches of about LINES_PER_BATCH lines each. */
function inBatches(db: Db, count: number, journal: Journal, write: (index: number) => void): void {
  let index = 0;
  while (index < count) {
    const until = journal.lines() + LINES_PER_BATCH;
    batch(db, () => {
      do {
        write(index++);
        journal.report();
      } while (index < count && journal.lines() < until);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Invoices and bills, through the functions the API and the CLI run.

/**
 * One invoice: drafted, sent (the receivable against revenue and sales tax, accrual view), and
 * paid. Open ones: due from 150 days ago to 30 days ahead, some partly paid by one or two
 * payments, never in full. Paid ones: issued at least 90 days before the last day, paid in full
 * by one or two payments.
 */
function writeInvoice(books: Books, settled: boolean): 'unpaid' | 'partly paid' | 'paid' {
  const { db, clock, draw, business, startDate, endDate, chart } = books;
  const customer = draw.pickSkewed(books.customers);
  const terms = draw.pick([30, 30, 30, 45, 60]);
  // Terms of 30 days or more keep every open invoice's issue date on or before the last day.
  const dueDate = settled ? addDays(startDate, draw.between(0, daysBetween(startDate, endDate) - 90) + terms) : addDays(endDate, draw.between(-150, 30));
  const issueDate = addDays(dueDate, -terms);
  const lines = draw.pickDistinct(chart.revenueAccounts, draw.between(1, 3)).map((accountId) => ({
    description: `${draw.pick(['Services', 'Parts', 'Hours', 'Licence', 'Visit'])} for ${customer.name}`,
    quantity: draw.pick(QUANTITIES),
    unitPriceCents: draw.dollars(40, 6000),
    accountId,
  }));
  const taxRate = draw.chance(0.6) ? draw.pick(TAX_RATES) : null;
  clock.day = issueDate;
  const { invoiceId } = createInvoice(db, clock, CLI_ACTOR, { business, customerId: customer.id, issueDate, paymentTermsDays: terms, ...(taxRate ? { taxRatePercent: taxRate } : {}), lines });
  let invoice = sendInvoice(db, clock, CLI_ACTOR, invoiceId, { siteUrl: SITE_URL }).invoice;
  if (invoice.dueDate !== dueDate) throw new Error(`invoice ${invoice.number} is due ${invoice.dueDate}, not ${dueDate}`);

  const payments = settled ? (draw.chance(0.8) ? 1 : 2) : draw.chance(0.3) ? (draw.chance(0.3) ? 2 : 1) : 0;
  let paidAt = issueDate;
  for (let p = 0; p < payments; p += 1) {
    const owedCents = invoice.totalCents - invoice.paidCents;
    const amountCents = settled && p === payments - 1 ? owedCents : (owedCents * BigInt(draw.between(10, 60))) / 100n;
    if (amountCents <= 0n) break;
    paidAt = addDays(paidAt, draw.between(0, Math.max(0, Math.min(settled ? 40 : 10_000, daysBetween(paidAt, endDate)))));
    clock.day = paidAt;
    invoice = recordPayment(db, clock, CLI_ACTOR, { invoiceId, amountCents, method: draw.pick(PAYMENT_METHODS), paidAt }).invoice;
  }
  if (settled !== (invoice.status === 'paid')) throw new Error(`invoice ${invoice.number} is ${invoice.status}; it was to be ${settled ? 'paid in full' : 'left open'}`);
  return settled ? 'paid' : invoice.paidCents > 0n ? 'partly paid' : 'unpaid';
}

/** One open bill (expense against payables, accrual view), a quarter of them partly paid. Returns whether it was. */
function writeBill(books: Books, n: number): boolean {
  const { db, clock, draw, business, endDate, chart } = books;
  const vendor = draw.pickSkewed(books.vendors);
  const number = `B-${String(n).padStart(5, '0')}`;
  const issueDate = addDays(endDate, -draw.between(0, 150));
  const dueDate = addDays(issueDate, draw.pick([15, 30, 30, 45]));
  const amountCents = draw.dollars(50, 10_000);
  const accountId = draw.pickSkewed(chart.expenseAccounts);
  clock.day = issueDate;
  const bill = createBill(db, clock, CLI_ACTOR, { businessId: business.id, vendorName: vendor.name, number, issueDate, dueDate, amountCents, accountId });
  if (!draw.chance(0.25)) return false;
  const date = addDays(issueDate, draw.between(0, daysBetween(issueDate, endDate)));
  clock.day = date;
  payBill(db, clock, CLI_ACTOR, { billId: bill.id, amountCents: (amountCents * BigInt(draw.between(10, 70))) / 100n, date });
  return true;
}

// ---------------------------------------------------------------------------------------------
// Three years of everyday history, day by day, up to exactly `totalLines` lines in all. Its
// invoices and bills are paid in full by the last day, so they leave nothing receivable or
// payable behind.

function writeHistory(books: Books, totalLines: number): void {
  const { db, draw, journal, startDate, endDate, chart } = books;
  const documentLines = journal.lines();
  // The opening entry's two lines, then room for at least one more entry (or none).
  if (documentLines + 2 * MIN_ENTRY_LINES > totalLines) {
    throw new Error(`${totalLines} lines leave no room for history after the ${documentLines} lines of the invoices and bills`);
  }
  const historyLines = totalLines - documentLines;
  let historyWritten = 0;
  const post = (entry: EntryDraft) => {
    if (entry.lines.length < MIN_ENTRY_LINES || entry.lines.length > MAX_ENTRY_LINES) throw new Error(`entry "${entry.memo}" has ${entry.lines.length} lines`);
    journal.post(entry, draw.chance(0.7) ? 'csv' : 'manual');
    historyWritten += entry.lines.length;
  };
  const days = daysBetween(startDate, endDate) + 1;
  inBatches(db, days, journal, (day) => {
    const date = addDays(startDate, day);
    // The owner's opening capital, so the bank starts in funds.
    if (day === 0) {
      post({ date, memo: 'Opening balance', sourceType: 'opening_balance', lines: [line(chart.bank, 'debit', 25_000_000n, 'both'), line(chart.ownerEquity, 'credit', 25_000_000n, 'both')] });
    }
    // The last day keeps at least one entry of its own, so the history always reaches it.
    const last = day === days - 1;
    const cap = last ? historyLines : historyLines - MIN_ENTRY_LINES;
    const dayTarget = last ? historyLines : Math.min(cap, Math.round((historyLines * (day + 1)) / days));
    while (historyWritten < dayTarget) {
      const room = cap - historyWritten;
      const drafts = everyday(books, date);
      const size = drafts.reduce((sum, d) => sum + d.lines.length, 0);
      // Near the end, fill the exact remainder with one expense entry, never leaving a single line.
      if (size > room || room - size === 1) {
        const fit = room <= MAX_ENTRY_LINES ? room : room - MAX_ENTRY_LINES >= MIN_ENTRY_LINES ? MAX_ENTRY_LINES : MAX_ENTRY_LINES - 1;
        post(expensePaid(books, date, fit));
      } else {
        for (const draft of drafts) post(draft);
      }
    }
  });
}

/** The next entries of an ordinary day, most of them cash-and-accrual alike. */
function everyday(books: Books, date: string): EntryDraft[] {
  const r = books.draw.fraction();
  if (r < 0.4) return [expensePaid(books, date, books.draw.between(2, 6))];
  if (r < 0.56) return [salesReceipt(books, date)];
  if (r < 0.7) return invoicePaid(books, date);
  if (r < 0.79) return billPaid(books, date);
  if (r < 0.86) return [payroll(books, date)];
  if (r < 0.96) return [transfer(books, date)];
  return [loanPayment(books, date)];
}

const sum = (amounts: readonly bigint[]) => amounts.reduce((total, a) => total + a, 0n);
const minDate = (a: string, b: string) => (a < b ? a : b);

/** An entry of `size` lines (2 to 6): one payment from the bank or the card over size - 1 expenses. */
function expensePaid({ draw, chart, vendors }: Books, date: string, size: number): EntryDraft {
  const amounts = draw.split(draw.dollars(10, 3000), size - 1);
  const from = draw.chance(0.8) ? chart.bank : chart.card;
  const vendor = draw.pick(vendors);
  return {
    date,
    memo: `${vendor.name}: expenses`,
    vendorId: vendor.id,
    sourceType: 'expense',
    lines: [...draw.pickDistinct(chart.expenseAccounts, size - 1).map((id, index) => line(id, 'debit', amounts[index]!, 'both')), line(from, 'credit', sum(amounts), 'both')],
  };
}

/** Cash sale: the bank against 1 to 3 revenue accounts and maybe sales tax, both views. */
function salesReceipt({ draw, chart, customers }: Books, date: string): EntryDraft {
  const revenue = draw.pickDistinct(chart.revenueAccounts, draw.between(1, 3));
  const amounts = draw.split(draw.dollars(100, 10_000), revenue.length);
  const subtotal = sum(amounts);
  const tax = draw.chance(0.5) ? taxCents(subtotal, draw.pick(TAX_RATES)) : 0n;
  return {
    date,
    memo: `Sales receipt, ${draw.pick(customers).name}`,
    sourceType: 'manual',
    lines: [
      line(chart.bank, 'debit', subtotal + tax, 'both'),
      ...revenue.map((id, index) => line(id, 'credit', amounts[index]!, 'both')),
      ...(tax > 0n ? [line(chart.salesTax, 'credit', tax, 'both')] : []),
    ],
  };
}

/** An invoice (accrual) and its payment in full some days later (the cash view recognises it then). */
function invoicePaid({ draw, chart, customers, endDate }: Books, date: string): EntryDraft[] {
  const customer = draw.pick(customers);
  const revenue = draw.pickDistinct(chart.revenueAccounts, draw.between(1, 3));
  const amounts = draw.split(draw.dollars(200, 25_000), revenue.length);
  const subtotal = sum(amounts);
  const tax = draw.chance(0.6) ? taxCents(subtotal, draw.pick(TAX_RATES)) : 0n;
  const taxLines = (basis: LineBasis) => (tax > 0n ? [line(chart.salesTax, 'credit', tax, basis)] : []);
  return [
    {
      date,
      memo: `Invoice to ${customer.name}`,
      sourceType: 'manual',
      lines: [line(chart.receivable, 'debit', subtotal + tax, 'accrual'), ...revenue.map((id, index) => line(id, 'credit', amounts[index]!, 'accrual')), ...taxLines('accrual')],
    },
    {
      date: minDate(addDays(date, draw.between(5, 75)), endDate),
      memo: `Payment from ${customer.name}`,
      sourceType: 'manual',
      lines: [
        line(chart.bank, 'debit', subtotal + tax, 'both'),
        line(chart.receivable, 'credit', subtotal + tax, 'accrual'),
        ...revenue.map((id, index) => line(id, 'credit', amounts[index]!, 'cash')),
        ...taxLines('cash'),
      ],
    },
  ];
}

/** A bill over 1 to 3 expenses (accrual) and its payment in full later (the cash view expenses it then). */
function billPaid({ draw, chart, vendors, endDate }: Books, date: string): EntryDraft[] {
  const vendor = draw.pick(vendors);
  const expenses = draw.pickDistinct(chart.expenseAccounts, draw.between(1, 3));
  const amounts = draw.split(draw.dollars(50, 6000), expenses.length);
  const total = sum(amounts);
  return [
    {
      date,
      memo: `Bill from ${vendor.name}`,
      sourceType: 'manual',
      lines: [...expenses.map((id, index) => line(id, 'debit', amounts[index]!, 'accrual')), line(chart.payable, 'credit', total, 'accrual')],
    },
    {
      date: minDate(addDays(date, draw.between(10, 45)), endDate),
      memo: `Payment to ${vendor.name}`,
      sourceType: 'manual',
      vendorId: vendor.id,
      lines: [line(chart.payable, 'debit', total, 'accrual'), ...expenses.map((id, index) => line(id, 'debit', amounts[index]!, 'cash')), line(chart.bank, 'credit', total, 'both')],
    },
  ];
}

/** Payroll: 1 to 3 wage accounts against the bank (net pay) and payroll liabilities (withholding). */
function payroll({ draw, chart }: Books, date: string): EntryDraft {
  const wages = draw.pickDistinct(chart.payrollExpenses, draw.between(1, 3));
  const amounts = draw.split(draw.dollars(1000, 12_000), wages.length);
  const gross = sum(amounts);
  const withheld = gross / 4n;
  return {
    date,
    memo: 'Payroll run',
    sourceType: 'manual',
    lines: [
      ...wages.map((id, index) => line(id, 'debit', amounts[index]!, 'both')),
      line(chart.bank, 'credit', gross - withheld, 'both'),
      line(chart.payrollLiabilities, 'credit', withheld, 'both'),
    ],
  };
}

/** Two-line entries between balance-sheet accounts (transfers, card and loan payments, owner). */
function transfer({ draw, chart }: Books, date: string): EntryDraft {
  const amount = draw.dollars(100, 20_000);
  const kind = draw.between(0, 5);
  const [debit, credit, memo]: [string, string, string] =
    kind === 0 ? [draw.pick(chart.cashAccounts), chart.bank, 'Transfer out of checking']
    : kind === 1 ? [chart.bank, draw.pick(chart.cashAccounts), 'Transfer into checking']
    : kind === 2 ? [chart.card, chart.bank, 'Credit card payment']
    : kind === 3 ? [chart.payrollLiabilities, chart.bank, 'Payroll tax remittance']
    : kind === 4 ? [chart.draws, chart.bank, "Owner's draw"]
    : [draw.pick(chart.otherAssets), draw.chance(0.5) ? chart.bank : chart.card, 'Asset purchase'];
  return { date, memo, sourceType: 'manual', lines: [line(debit, 'debit', amount, 'both'), line(credit, 'credit', amount, 'both')] };
}

/** A loan payment: principal and interest against the bank. */
function loanPayment({ draw, chart }: Books, date: string): EntryDraft {
  const principal = draw.dollars(500, 3000);
  const interest = draw.dollars(20, 400);
  return {
    date,
    memo: 'Equipment loan payment',
    sourceType: 'manual',
    lines: [line(chart.loan, 'debit', principal, 'both'), line(chart.interestExpense, 'debit', interest, 'both'), line(chart.bank, 'credit', principal + interest, 'both')],
  };
}
