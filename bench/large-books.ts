/**
 * Large books for the report benchmark (bench/reports.ts): one account and one accrual business
 * with its standard chart grown to 200 accounts, three years of journal lines (1,000,000 by
 * default), and open invoices and bills to age, in a fresh SQLite file migrated by the
 * project's own migrations.
 *
 *   npm run bench:books -- --db /tmp/large.sqlite [--lines 1000000] [--invoices 10000]
 *                          [--paid-invoices 0] [--bills 2000] [--seed 1] [--end YYYY-MM-DD] [--force]
 *
 * Rows are written with prepared INSERTs in large transactions, with every trigger of the
 * schema on: `journal_lines_balances` (migration 0007) keeps ledger_balances as the lines
 * arrive, which is what the reports read, and the guards check every line's account and entry.
 * Every entry has 2 to 6 lines and balances in the accrual view and in the cash view (asserted
 * before it is written). Open invoices post the way src/books/invoice-posting.ts posts them
 * (receivable against revenue and sales tax in the accrual view; a payment puts the bank
 * against the receivable in the accrual view and against revenue and sales tax in the cash
 * view), and the history's own invoices and bills are paid in full, so the receivable and
 * payable balances equal the agings' grand totals. Every entry that moves the bank also has its
 * row in the register (`transactions`), which GET /transactions pages through. Same seed and --end, same books: every id
 * the generator makes comes from the seed; the account, business, chart and key are made by
 * the project's own functions, with their own random ids and timestamps.
 *
 * The books end on --end (default today, UTC), so the agings' default asOf (today) sees due
 * dates from 150 days ago to 30 days ahead. Prints the business id and a read key (rate limit
 * off) on stdout, progress on stderr.
 */
import type { Statement } from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { CLI_ACTOR } from '../src/store/audit.js';
import { createBusiness } from '../src/books/businesses.js';
import { chartTree, systemAccountId } from '../src/books/chart.js';
import { allocate, cashRecognition } from '../src/books/invoice-math.js';
import { invoiceNumber } from '../src/books/invoices.js';
import { createKey } from '../src/books/keys.js';
import { payToken, payTokenFingerprint } from '../src/books/pay-links.js';
import { ensureServerSecrets } from '../src/store/secrets.js';
import { createTenant, updateTenant } from '../src/books/tenants.js';
import { systemClock, todayUtc } from '../src/clock.js';
import { addDays, daysBetween, isIsoDate } from '../src/dates.js';
import { databaseFiles, type Db, openDb } from '../src/db/connection.js';
import { migrateLatest } from '../src/db/migrate.js';
import { lineAmountCents, taxCents } from '../src/money.js';
import { nameKey } from '../src/names.js';
import { seededRandom } from '../src/seeded-random.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    lines: { type: 'string', default: '1000000' },
    invoices: { type: 'string', default: '10000' },
    'paid-invoices': { type: 'string', default: '0' },
    bills: { type: 'string', default: '2000' },
    seed: { type: 'string', default: '1' },
    end: { type: 'string' },
    force: { type: 'boolean', default: false },
  },
});

function wholeNumber(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min} (got ${text})`);
  return n;
}

if (!args.db) throw new Error('--db FILE is required: the books file to create');
const dbPath = args.db;
const totalLines = wholeNumber('lines', args.lines, 2);
const openInvoiceCount = wholeNumber('invoices', args.invoices, 0);
const paidInvoiceCount = wholeNumber('paid-invoices', args['paid-invoices'], 0);
const openBillCount = wholeNumber('bills', args.bills, 0);
const seed = wholeNumber('seed', args.seed, 0);
const endDate = args.end ?? todayUtc(systemClock);
if (!isIsoDate(endDate)) throw new Error(`--end must be a date YYYY-MM-DD (got ${endDate})`);
/** Three years of books, ending on endDate. */
const startDate = addDays(endDate, -(3 * 365));

/** The chart grows to this many accounts (headings included). */
const CHART_ACCOUNTS = 200;
/** The posting engine's per-entry bounds that this generator keeps to. */
const MIN_ENTRY_LINES = 2;
const MAX_ENTRY_LINES = 6;
/** Lines per write transaction: large enough to be fast, small enough to keep the WAL modest. */
const LINES_PER_COMMIT = 50_000;
const PROGRESS_EVERY_LINES = 100_000;
/** Journal lines per INSERT statement, and the values each takes. */
const LINES_PER_INSERT = 64;
const LINE_COLUMNS = 8;

const random = seededRandom(seed);

/** A whole number from lo to hi, both inclusive. */
function between(lo: number, hi: number): number {
  return lo + Math.floor(random() * (hi - lo + 1));
}

function chance(p: number): boolean {
  return random() < p;
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Earlier items much more often than later ones, as real books favour a few accounts. */
function pickSkewed<T>(items: readonly T[]): T {
  const r = random();
  return items[Math.floor(r * r * items.length)]!;
}

/** `count` different items, skewed towards the front. */
function pickDistinct<T>(items: readonly T[], count: number): T[] {
  const chosen = new Set<T>();
  while (chosen.size < Math.min(count, items.length)) chosen.add(pickSkewed(items));
  return [...chosen];
}

/** Cents spread log-uniformly from lo to hi dollars: many small amounts, a few large ones. */
function dollars(lo: number, hi: number): bigint {
  const value = Math.exp(Math.log(lo) + random() * (Math.log(hi) - Math.log(lo)));
  return BigInt(Math.max(1, Math.round(value * 100)));
}

/** A version-4-shaped UUID from the seeded generator (ids are part of what the seed fixes). */
function seededId(): string {
  const hex = (bits: number) => Math.floor(random() * 2 ** bits).toString(16).padStart(bits / 4, '0');
  const variant = (8 + Math.floor(random() * 4)).toString(16);
  return `${hex(32)}-${hex(16)}-4${hex(12)}-${variant}${hex(12)}-${hex(24)}${hex(24)}`;
}

/** `totalCents` over `parts` shares, each at least one cent. */
function split(totalCents: bigint, parts: number): bigint[] {
  if (totalCents < BigInt(parts)) throw new Error(`split: ${totalCents} cents cannot make ${parts} positive shares`);
  const weights = Array.from({ length: parts }, () => BigInt(between(1, 10)));
  // One cent each first, the rest in proportion: no share can round to zero.
  return allocate(totalCents - BigInt(parts), weights).map((share) => share + 1n);
}

// ---------------------------------------------------------------------------------------------
// The journal writer.

type Basis = 'both' | 'accrual' | 'cash';
type Direction = 'debit' | 'credit';
type SourceType = 'invoice' | 'invoice_payment' | 'expense' | 'bill' | 'bill_payment' | 'opening_balance' | 'manual';

interface Line {
  accountId: string;
  direction: Direction;
  amountCents: bigint;
  basis: Basis;
}

interface EntryDraft {
  date: string;
  memo: string;
  sourceType: SourceType;
  sourceId: string | null;
  lines: Line[];
  /** The vendor paid, for the register row of a payment to one. */
  vendorId?: string;
}

const line = (accountId: string, direction: Direction, amountCents: bigint, basis: Basis): Line => ({ accountId, direction, amountCents, basis });

/** Debits equal credits in a view: the lines of basis `both` and of the view's own basis. */
function assertBalanced(entry: EntryDraft): void {
  for (const view of ['accrual', 'cash'] as const) {
    let net = 0n;
    for (const { basis, direction, amountCents } of entry.lines) {
      if (basis === 'both' || basis === view) net += direction === 'debit' ? amountCents : -amountCents;
    }
    if (net !== 0n) throw new Error(`entry "${entry.memo}" on ${entry.date} is off by ${net} cents in the ${view} view`);
  }
  if (entry.lines.length < MIN_ENTRY_LINES || entry.lines.length > MAX_ENTRY_LINES) {
    throw new Error(`entry "${entry.memo}" has ${entry.lines.length} lines; entries here have ${MIN_ENTRY_LINES} to ${MAX_ENTRY_LINES}`);
  }
  for (const { amountCents } of entry.lines) if (amountCents <= 0n) throw new Error(`entry "${entry.memo}" has a line of ${amountCents} cents`);
  if (entry.date < startDate || entry.date > endDate) throw new Error(`entry "${entry.memo}" is dated ${entry.date}, outside ${startDate}..${endDate}`);
}

/**
 * Every entry that moves the bank (a line of basis `both` on it) also gets a row in the
 * register (`transactions`), as expenses, payments and accepted bank lines have: money in or
 * out, against the entry's first other account.
 */
class Journal {
  linesWritten = 0;
  entriesWritten = 0;
  registerRowsWritten = 0;
  readonly linesByBasis: Record<Basis, number> = { both: 0, accrual: 0, cash: 0 };
  private readonly insertEntry: Statement;
  private readonly insertLine: Statement;
  private readonly insertLines: Statement;
  private readonly insertRegisterRow: Statement;
  /** Lines waiting to be written, LINE_COLUMNS values each. */
  private pending: unknown[] = [];
  private committedAt = 0;
  private nextProgress = PROGRESS_EVERY_LINES;

  constructor(
    private readonly db: Db,
    private readonly businessId: string,
    private readonly bankId: string,
    private readonly started: number,
  ) {
    this.insertRegisterRow = db.prepare(
      `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, journal_entry_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'accepted', ?, ?, ?, ?)`,
    );
    this.insertEntry = db.prepare(
      `INSERT INTO journal_entries (id, business_id, entry_date, memo, source_type, source_id, reverses_entry_id, line_count, actor, created_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?, 'cli', ?)`,
    );
    const insertLines = (rows: number) =>
      db.prepare(
        `INSERT INTO journal_lines (entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
         VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      );
    this.insertLine = insertLines(1);
    this.insertLines = insertLines(LINES_PER_INSERT);
  }

  /** Writes one balanced entry and its lines; returns the entry's id. */
  post(entry: EntryDraft): string {
    assertBalanced(entry);
    const id = seededId();
    this.insertEntry.run(id, this.businessId, entry.date, entry.memo, entry.sourceType, entry.sourceId, entry.lines.length, `${entry.date}T12:00:00.000Z`);
    entry.lines.forEach((l, index) => {
      this.pending.push(id, index + 1, this.businessId, l.accountId, entry.date, l.direction, l.amountCents, l.basis);
      if (this.pending.length === LINES_PER_INSERT * LINE_COLUMNS) this.flush();
      this.linesByBasis[l.basis] += 1;
    });
    this.linesWritten += entry.lines.length;
    this.entriesWritten += 1;
    this.writeRegisterRow(id, entry);
    if (this.linesWritten >= this.nextProgress) {
      process.stderr.write(
        `  ${this.linesWritten.toLocaleString('en-US')} lines, ${this.entriesWritten.toLocaleString('en-US')} entries, ${elapsedSeconds(this.started)} s\n`,
      );
      this.nextProgress += PROGRESS_EVERY_LINES;
    }
    return id;
  }

  private writeRegisterRow(entryId: string, entry: EntryDraft): void {
    const bank = entry.lines.find((l) => l.accountId === this.bankId && l.basis === 'both');
    if (!bank) return;
    const other = entry.lines.find((l) => l.accountId !== this.bankId);
    this.insertRegisterRow.run(
      seededId(),
      this.businessId,
      entry.date,
      bank.amountCents,
      bank.direction === 'debit' ? 'in' : 'out',
      entry.vendorId ?? null,
      other?.accountId ?? null,
      chance(0.7) ? 'csv' : 'manual',
      entry.memo,
      entryId,
      `${entry.date}T12:00:00.000Z`,
    );
    this.registerRowsWritten += 1;
  }

  /**
   * Writes the waiting lines. Many rows per INSERT: SQLite copies each page a statement changes
   * into its statement journal (the triggers can abort it), so one statement per row copies the
   * same index and ledger_balances pages over and over.
   */
  flush(): void {
    if (this.pending.length === LINES_PER_INSERT * LINE_COLUMNS) {
      this.insertLines.run(...this.pending);
    } else {
      for (let at = 0; at < this.pending.length; at += LINE_COLUMNS) this.insertLine.run(...this.pending.slice(at, at + LINE_COLUMNS));
    }
    this.pending = [];
  }

  /** Writes what waits and commits. */
  commit(): void {
    this.flush();
    this.db.exec('COMMIT');
  }

  /** Commits and starts a new transaction once enough lines are pending; call between documents. */
  checkpoint(): void {
    if (this.linesWritten - this.committedAt < LINES_PER_COMMIT) return;
    this.flush();
    this.db.exec('COMMIT');
    this.db.exec('BEGIN IMMEDIATE');
    this.committedAt = this.linesWritten;
  }
}

function elapsedSeconds(since: number): string {
  return ((performance.now() - since) / 1000).toFixed(1);
}

// ---------------------------------------------------------------------------------------------
// Names.

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
const PAYMENT_METHODS = ['check', 'wire', 'other', 'stripe', 'cash'] as const;
const TAX_RATES = ['8.25', '7', '6.5'];

function companyNames(count: number): string[] {
  const names = new Set<string>();
  while (names.size < count) {
    const base = `${pick(COMPANY_WORDS)} ${pick(COMPANY_NOUNS)} ${pick(COMPANY_SUFFIXES)}`;
    names.add(names.has(base) ? `${base} ${names.size + 1}` : base);
  }
  return [...names];
}

// ---------------------------------------------------------------------------------------------
// The books.

const started = performance.now();
if (existsSync(dbPath)) {
  if (!args.force) throw new Error(`${dbPath} exists: the books are generated into a fresh file (pass --force to replace it)`);
  for (const path of [...databaseFiles(dbPath), `${dbPath}.lock`]) rmSync(path, { force: true });
}
await migrateLatest(dbPath);
// Settings of the generator's own connection only (the file stays WAL, as the server wants it):
// no fsync (a crash here just means generating again), a page cache that holds the hot indexes,
// and statement journals in memory: every INSERT into journal_lines keeps one, since its
// triggers may abort it, and kept in a temporary file it made most of the run's system time.
const db = openDb(dbPath, { synchronous: 'off' });
db.pragma('cache_size = -262144');
db.pragma('temp_store = MEMORY');
const clock = systemClock;
ensureServerSecrets(db, clock);

const tenant = createTenant(db, clock, CLI_ACTOR, { name: 'Large Books Firm', plan: 'large' });
const business = createBusiness(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'Large Books Trading Co', basis: 'accrual' });

db.exec('BEGIN IMMEDIATE');

// The chart: the standard one plus postable leaves under its headings, 200 accounts in all.
const standard = chartTree(db, business.id);
const headingByCode = (code: string): string => {
  const node = standard.find((n) => n.code === code);
  if (!node?.isHeading) throw new Error(`the standard chart has no heading ${code}`);
  return node.id;
};
const leafByCode = (code: string): string => {
  const node = standard.find((n) => n.code === code);
  if (!node || node.isHeading) throw new Error(`the standard chart has no postable account ${code}`);
  return node.id;
};
const insertAccount = db.prepare(
  `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
   VALUES (?, ?, ?, ?, ?, ?, 0, 0, NULL, ?)`,
);
const addLeaves = (parentCode: string, type: string, codePrefix: string, names: readonly string[]): string[] =>
  names.map((name, index) => {
    const id = seededId();
    insertAccount.run(id, business.id, headingByCode(parentCode), `${codePrefix}${String(index + 1).padStart(3, '0')}`, name, type, `${startDate}T00:00:00.000Z`);
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
const chartSize = Number((db.prepare('SELECT count(*) AS n FROM ledger_accounts WHERE business_id = ?').get(business.id) as { n: bigint }).n);
if (chartSize !== CHART_ACCOUNTS) throw new Error(`the chart has ${chartSize} accounts, not ${CHART_ACCOUNTS}`);

const account = {
  bank: systemAccountId(db, business.id, 'bank'),
  savings: leafByCode('1120'),
  receivable: systemAccountId(db, business.id, 'accounts_receivable'),
  prepaid: leafByCode('1300'),
  equipment: leafByCode('1500'),
  payable: systemAccountId(db, business.id, 'accounts_payable'),
  salesTax: systemAccountId(db, business.id, 'sales_tax_payable'),
  card: leafByCode('2300'),
  ownerEquity: systemAccountId(db, business.id, 'owner_equity'),
  draws: leafByCode('3200'),
  payrollLiabilities: liabilityExtras[0]!,
  loan: liabilityExtras[4]!,
};
const cashAccounts = [account.savings, ...cashExtras];
const otherAssets = [account.prepaid, account.equipment, ...assetExtras];
const revenueAccounts = [systemAccountId(db, business.id, 'sales'), leafByCode('4200'), ...revenueExtras, leafByCode('4900')];
const operatingHeading = headingByCode('6100');
const uncategorized = systemAccountId(db, business.id, 'uncategorized_expense');
const standardExpenses = standard.filter((n) => n.parentId === operatingHeading && !n.isHeading && n.id !== uncategorized).map((n) => n.id);
const expenseAccounts = [...standardExpenses, ...expenseExtras, uncategorized];
const payrollExpenses = expenseExtras.slice(0, DEPARTMENTS.length * 2);
const interestExpense = leafByCode('6120');

const journal = new Journal(db, business.id, account.bank, started);

// Customers and vendors (direct inserts, as the seeds do).
const insertCustomer = db.prepare(
  `INSERT INTO customers (id, tenant_id, name, name_key, email, currency, payment_terms_days, reminders_enabled, archived, created_at)
   VALUES (?, ?, ?, ?, ?, 'USD', ?, 0, 0, ?)`,
);
const customers = companyNames(Math.min(5000, Math.max(1, Math.ceil((openInvoiceCount + paidInvoiceCount) / 5)))).map((name) => {
  const id = seededId();
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  insertCustomer.run(id, tenant.id, name, nameKey(name), `billing@${slug}.example`, null, `${startDate}T00:00:00.000Z`);
  return { id, name };
});
const insertVendor = db.prepare('INSERT INTO vendors (id, tenant_id, name, name_key, is_1099_eligible, archived, created_at) VALUES (?, ?, ?, ?, ?, 0, ?)');
const vendors = companyNames(300).map((name) => {
  const id = seededId();
  insertVendor.run(id, tenant.id, name, nameKey(name), chance(0.2) ? 1 : 0, `${startDate}T00:00:00.000Z`);
  return { id, name };
});

/** Revenue credits per account, in line order, of `totalCents` spread like the lines earn it. */
function byAccount(lines: readonly { accountId: string; amountCents: bigint }[]): { accountId: string; amountCents: bigint }[] {
  const sums = new Map<string, bigint>();
  for (const l of lines) sums.set(l.accountId, (sums.get(l.accountId) ?? 0n) + l.amountCents);
  return [...sums].map(([accountId, amountCents]) => ({ accountId, amountCents }));
}

// ---------------------------------------------------------------------------------------------
// Open invoices: posted and (some) partly paid exactly as invoice-posting.ts does it, in USD.

const insertInvoice = db.prepare(
  `INSERT INTO invoices (id, business_id, customer_id, number, status, currency, issue_date, due_date, payment_terms_days, tax_rate_percent,
     subtotal_cents, tax_cents, total_cents, memo, pay_token, created_at)
   VALUES (?, ?, ?, ?, 'draft', 'USD', ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
);
const insertInvoiceLine = db.prepare(
  `INSERT INTO invoice_lines (id, invoice_id, line_no, description, quantity, unit_price_cents, amount_cents, ledger_account_id)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insertInvoicePayment = db.prepare(
  `INSERT INTO invoice_payments (id, invoice_id, amount_cents, method, paid_at, memo, usd_per_unit, usd_cents, receivable_usd_cents, journal_entry_id, created_at)
   VALUES (?, ?, ?, ?, ?, NULL, '1', ?, ?, ?, ?)`,
);
const sendInvoice = db.prepare(
  `UPDATE invoices SET status = ?, usd_per_unit = '1', subtotal_usd_cents = ?, tax_usd_cents = ?, journal_entry_id = ?, sent_at = ?, paid_cents = ?,
     closed_on = ?
   WHERE id = ? AND status = 'draft'`,
);
const QUANTITIES = ['1', '1', '1', '2', '3', '5', '10', '0.5', '1.5', '12'];
let invoicesWithPayments = 0;

// With --paid-invoices, invoices paid in full (closed) come first, spread over the three years:
// real books have far more of those than open ones, and aging must not read them.
for (let n = 1; n <= paidInvoiceCount + openInvoiceCount; n += 1) {
  const settled = n <= paidInvoiceCount;
  const id = seededId();
  const number = invoiceNumber(n);
  const customer = pickSkewed(customers);
  const terms = pick([30, 30, 30, 45, 60]);
  // Open: due from 150 days ago to 30 days ahead; terms of 30 days or more keep every issue
  // date on or before the books' last day. Paid: issued at least 90 days before it.
  const dueDate = settled ? addDays(startDate, between(0, daysBetween(startDate, endDate) - 90) + terms) : addDays(endDate, between(-150, 30));
  const issueDate = addDays(dueDate, -terms);
  const items = pickDistinct(revenueAccounts, between(1, 3)).map((accountId) => {
    const quantity = pick(QUANTITIES);
    const unitPriceCents = dollars(40, 6000);
    return { accountId, quantity, unitPriceCents, amountCents: lineAmountCents(quantity, unitPriceCents) };
  });
  const subtotalCents = items.reduce((sum, item) => sum + item.amountCents, 0n);
  const taxRate = chance(0.6) ? pick(TAX_RATES) : null;
  const taxOwedCents = taxRate === null ? 0n : taxCents(subtotalCents, taxRate);
  const totalCents = subtotalCents + taxOwedCents;
  const createdAt = `${issueDate}T09:00:00.000Z`;
  insertInvoice.run(id, business.id, customer.id, number, issueDate, dueDate, terms, taxRate, subtotalCents, taxOwedCents, totalCents, payTokenFingerprint(payToken(db, id)), createdAt);
  items.forEach((item, index) => {
    insertInvoiceLine.run(seededId(), id, index + 1, `${pick(['Services', 'Parts', 'Hours', 'Licence', 'Visit'])} for ${customer.name}`, item.quantity, item.unitPriceCents, item.amountCents, item.accountId);
  });

  // Send: the receivable against revenue (per line account) and sales tax, accrual view only.
  const revenue = byAccount(items);
  const weights = revenue.map((r) => r.amountCents);
  const invoiceEntryId = journal.post({
    date: issueDate,
    memo: `Invoice ${number} to ${customer.name}`,
    sourceType: 'invoice',
    sourceId: id,
    lines: [
      line(account.receivable, 'debit', totalCents, 'accrual'),
      ...allocate(subtotalCents, weights).map((share, index) => line(revenue[index]!.accountId, 'credit', share, 'accrual')),
      ...(taxOwedCents > 0n ? [line(account.salesTax, 'credit', taxOwedCents, 'accrual')] : []),
    ],
  });

  // Open ones: some partly paid, by one or two payments, never the whole balance. Paid ones:
  // one or two payments, the last settling the rest.
  let paidCents = 0n;
  const recognised = revenue.map(() => 0n);
  const payments = settled ? (chance(0.8) ? 1 : 2) : chance(0.3) ? (chance(0.3) ? 2 : 1) : 0;
  let paidAt = issueDate;
  for (let p = 0; p < payments; p += 1) {
    const owedCents = totalCents - paidCents;
    const amountCents = settled && p === payments - 1 ? owedCents : (owedCents * BigInt(between(10, 60))) / 100n;
    if (amountCents <= 0n) break;
    paidAt = addDays(paidAt, between(0, Math.max(0, Math.min(settled ? 40 : 10_000, daysBetween(paidAt, endDate)))));
    const paymentId = seededId();
    const method = pick(PAYMENT_METHODS);
    const cash = cashRecognition({ cashUsdBeforeCents: paidCents, cashUsdThisPaymentCents: amountCents, subtotalCents, totalCents });
    // Revenue recognised so far is spread over the accounts cumulatively, as cashRevenueLines does.
    const targets = allocate(recognised.reduce((sum, r) => sum + r, 0n) + cash.revenueUsdCents, weights);
    const revenueLines = revenue
      .map((r, index) => {
        const difference = targets[index]! - recognised[index]!;
        recognised[index] = targets[index]!;
        return line(r.accountId, difference >= 0n ? 'credit' : 'debit', difference >= 0n ? difference : -difference, 'cash');
      })
      .filter((l) => l.amountCents > 0n);
    const entryId = journal.post({
      date: paidAt,
      memo: `Payment on invoice ${number} (${method})`,
      sourceType: 'invoice_payment',
      sourceId: paymentId,
      lines: [
        line(account.bank, 'debit', amountCents, 'both'),
        line(account.receivable, 'credit', amountCents, 'accrual'),
        ...revenueLines,
        ...(cash.taxUsdCents > 0n ? [line(account.salesTax, 'credit', cash.taxUsdCents, 'cash')] : []),
      ],
    });
    insertInvoicePayment.run(paymentId, id, amountCents, method, paidAt, amountCents, amountCents, entryId, `${paidAt}T15:00:00.000Z`);
    paidCents += amountCents;
  }
  if (!settled && paidCents > 0n) invoicesWithPayments += 1;
  if (settled && paidCents !== totalCents) throw new Error(`invoice ${number} was to be paid in full`);
  const status = settled ? 'paid' : dueDate < endDate ? 'overdue' : paidCents > 0n ? 'partially_paid' : 'sent';
  const sent = sendInvoice.run(status, subtotalCents, taxOwedCents, invoiceEntryId, createdAt, paidCents, settled ? paidAt : null, id);
  if (sent.changes !== 1) throw new Error(`invoice ${number} was not sent`);
  journal.checkpoint();
}
db.prepare('UPDATE businesses SET next_invoice_number = ? WHERE id = ?').run(paidInvoiceCount + openInvoiceCount + 1, business.id);

// ---------------------------------------------------------------------------------------------
// Open bills, as src/books/bills.ts posts them: expense against payables (accrual); a payment
// takes payables (accrual) and the expense (cash) against the bank (both).

const insertBill = db.prepare(
  `INSERT INTO bills (id, business_id, vendor_id, number, issue_date, due_date, amount_cents, paid_cents, ledger_account_id, journal_entry_id, created_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const insertBillPayment = db.prepare('INSERT INTO bill_payments (id, bill_id, amount_cents, paid_on, journal_entry_id, created_at) VALUES (?, ?, ?, ?, ?, ?)');
// As the books do: the payment first, then the bill's paid amount (a trigger holds it to the payments).
const recordBillPaid = db.prepare('UPDATE bills SET paid_cents = paid_cents + ? WHERE id = ?');
let billsWithPayments = 0;
for (let n = 1; n <= openBillCount; n += 1) {
  const id = seededId();
  const vendor = pickSkewed(vendors);
  const number = `B-${String(n).padStart(5, '0')}`;
  const issueDate = addDays(endDate, -between(0, 150));
  const dueDate = addDays(issueDate, pick([15, 30, 30, 45]));
  const amountCents = dollars(50, 10_000);
  const expense = pickSkewed(expenseAccounts);
  const billEntryId = journal.post({
    date: issueDate,
    memo: `Bill ${number} from ${vendor.name}`,
    sourceType: 'bill',
    sourceId: id,
    lines: [line(expense, 'debit', amountCents, 'accrual'), line(account.payable, 'credit', amountCents, 'accrual')],
  });
  const paidCents = chance(0.25) ? (amountCents * BigInt(between(10, 70))) / 100n : 0n;
  insertBill.run(id, business.id, vendor.id, number, issueDate, dueDate, amountCents, 0n, expense, billEntryId, `${issueDate}T10:00:00.000Z`);
  if (paidCents > 0n) {
    const paymentId = seededId();
    const paidOn = addDays(issueDate, between(0, daysBetween(issueDate, endDate)));
    const entryId = journal.post({
      date: paidOn,
      memo: `Payment of bill ${number} to ${vendor.name}`,
      sourceType: 'bill_payment',
      sourceId: paymentId,
      vendorId: vendor.id,
      lines: [line(account.payable, 'debit', paidCents, 'accrual'), line(expense, 'debit', paidCents, 'cash'), line(account.bank, 'credit', paidCents, 'both')],
    });
    insertBillPayment.run(paymentId, id, paidCents, paidOn, entryId, `${paidOn}T16:00:00.000Z`);
    recordBillPaid.run(paidCents, id);
    billsWithPayments += 1;
  }
  journal.checkpoint();
}

// ---------------------------------------------------------------------------------------------
// Three years of everyday history, day by day, up to exactly totalLines lines in all. Its
// invoices and bills are paid in full by the last day, so they leave nothing receivable or
// payable behind.

const documentLines = journal.linesWritten;
// The opening entry's two lines, then room for at least one more entry (or none).
if (documentLines + 2 * MIN_ENTRY_LINES > totalLines) {
  throw new Error(`--lines ${totalLines} leaves no room for history after the ${documentLines} lines of the open invoices and bills`);
}

/** An entry of `size` lines (2 to 6): one payment from the bank or the card over size - 1 expenses. */
function expensePaid(date: string, size: number): EntryDraft {
  const amounts = split(dollars(10, 3000), size - 1);
  const from = chance(0.8) ? account.bank : account.card;
  const vendor = pick(vendors);
  return {
    date,
    memo: `${vendor.name}: expenses`,
    vendorId: vendor.id,
    sourceType: 'expense',
    sourceId: null,
    lines: [...pickDistinct(expenseAccounts, size - 1).map((id, index) => line(id, 'debit', amounts[index]!, 'both')), line(from, 'credit', amounts.reduce((s, a) => s + a, 0n), 'both')],
  };
}

/** Cash sale: the bank against 1 to 3 revenue accounts and maybe sales tax, both views. */
function salesReceipt(date: string): EntryDraft {
  const revenue = pickDistinct(revenueAccounts, between(1, 3));
  const amounts = split(dollars(100, 10_000), revenue.length);
  const subtotal = amounts.reduce((s, a) => s + a, 0n);
  const tax = chance(0.5) ? taxCents(subtotal, pick(TAX_RATES)) : 0n;
  return {
    date,
    memo: `Sales receipt, ${pick(customers).name}`,
    sourceType: 'manual',
    sourceId: null,
    lines: [
      line(account.bank, 'debit', subtotal + tax, 'both'),
      ...revenue.map((id, index) => line(id, 'credit', amounts[index]!, 'both')),
      ...(tax > 0n ? [line(account.salesTax, 'credit', tax, 'both')] : []),
    ],
  };
}

/** An invoice (accrual) and its payment in full some days later (cash view recognises it then). */
function invoicePaid(date: string): EntryDraft[] {
  const customer = pick(customers);
  const revenue = pickDistinct(revenueAccounts, between(1, 3));
  const amounts = split(dollars(200, 25_000), revenue.length);
  const subtotal = amounts.reduce((s, a) => s + a, 0n);
  const tax = chance(0.6) ? taxCents(subtotal, pick(TAX_RATES)) : 0n;
  const paidOn = minDate(addDays(date, between(5, 75)), endDate);
  return [
    {
      date,
      memo: `Invoice to ${customer.name}`,
      sourceType: 'manual',
      sourceId: null,
      lines: [
        line(account.receivable, 'debit', subtotal + tax, 'accrual'),
        ...revenue.map((id, index) => line(id, 'credit', amounts[index]!, 'accrual')),
        ...(tax > 0n ? [line(account.salesTax, 'credit', tax, 'accrual')] : []),
      ],
    },
    {
      date: paidOn,
      memo: `Payment from ${customer.name}`,
      sourceType: 'manual',
      sourceId: null,
      lines: [
        line(account.bank, 'debit', subtotal + tax, 'both'),
        line(account.receivable, 'credit', subtotal + tax, 'accrual'),
        ...revenue.map((id, index) => line(id, 'credit', amounts[index]!, 'cash')),
        ...(tax > 0n ? [line(account.salesTax, 'credit', tax, 'cash')] : []),
      ],
    },
  ];
}

/** A bill over 1 to 3 expenses (accrual) and its payment in full later (cash view expenses it then). */
function billPaid(date: string): EntryDraft[] {
  const vendor = pick(vendors);
  const expenses = pickDistinct(expenseAccounts, between(1, 3));
  const amounts = split(dollars(50, 6000), expenses.length);
  const total = amounts.reduce((s, a) => s + a, 0n);
  const paidOn = minDate(addDays(date, between(10, 45)), endDate);
  return [
    {
      date,
      memo: `Bill from ${vendor.name}`,
      sourceType: 'manual',
      sourceId: null,
      lines: [...expenses.map((id, index) => line(id, 'debit', amounts[index]!, 'accrual')), line(account.payable, 'credit', total, 'accrual')],
    },
    {
      date: paidOn,
      memo: `Payment to ${vendor.name}`,
      sourceType: 'manual',
      sourceId: null,
      vendorId: vendor.id,
      lines: [
        line(account.payable, 'debit', total, 'accrual'),
        ...expenses.map((id, index) => line(id, 'debit', amounts[index]!, 'cash')),
        line(account.bank, 'credit', total, 'both'),
      ],
    },
  ];
}

/** Payroll: 1 to 3 wage accounts against the bank (net pay) and payroll liabilities (withholding). */
function payroll(date: string): EntryDraft {
  const wages = pickDistinct(payrollExpenses, between(1, 3));
  const amounts = split(dollars(1000, 12_000), wages.length);
  const gross = amounts.reduce((s, a) => s + a, 0n);
  const withheld = gross / 4n;
  return {
    date,
    memo: 'Payroll run',
    sourceType: 'manual',
    sourceId: null,
    lines: [
      ...wages.map((id, index) => line(id, 'debit', amounts[index]!, 'both')),
      line(account.bank, 'credit', gross - withheld, 'both'),
      line(account.payrollLiabilities, 'credit', withheld, 'both'),
    ],
  };
}

/** Two-line entries between balance-sheet accounts (transfers, card and loan payments, owner). */
function transfer(date: string): EntryDraft {
  const amount = dollars(100, 20_000);
  const kind = between(0, 5);
  const [debit, credit, memo]: [string, string, string] =
    kind === 0 ? [pick(cashAccounts), account.bank, 'Transfer out of checking']
    : kind === 1 ? [account.bank, pick(cashAccounts), 'Transfer into checking']
    : kind === 2 ? [account.card, account.bank, 'Credit card payment']
    : kind === 3 ? [account.payrollLiabilities, account.bank, 'Payroll tax remittance']
    : kind === 4 ? [account.draws, account.bank, "Owner's draw"]
    : [pick(otherAssets), chance(0.5) ? account.bank : account.card, 'Asset purchase'];
  return { date, memo, sourceType: 'manual', sourceId: null, lines: [line(debit, 'debit', amount, 'both'), line(credit, 'credit', amount, 'both')] };
}

/** A loan payment: principal and interest against the bank. */
function loanPayment(date: string): EntryDraft {
  const principal = dollars(500, 3000);
  const interest = dollars(20, 400);
  return {
    date,
    memo: 'Equipment loan payment',
    sourceType: 'manual',
    sourceId: null,
    lines: [line(account.loan, 'debit', principal, 'both'), line(interestExpense, 'debit', interest, 'both'), line(account.bank, 'credit', principal + interest, 'both')],
  };
}

function minDate(a: string, b: string): string {
  return a < b ? a : b;
}

/** The next entries of an ordinary day, most of them cash-and-accrual alike. */
function everyday(date: string): EntryDraft[] {
  const r = random();
  if (r < 0.4) return [expensePaid(date, between(2, 6))];
  if (r < 0.56) return [salesReceipt(date)];
  if (r < 0.7) return invoicePaid(date);
  if (r < 0.79) return billPaid(date);
  if (r < 0.86) return [payroll(date)];
  if (r < 0.96) return [transfer(date)];
  return [loanPayment(date)];
}

const historyLines = totalLines - documentLines;
const days = daysBetween(startDate, endDate) + 1;
let historyWritten = 0;
const postHistory = (entry: EntryDraft) => {
  journal.post(entry);
  historyWritten += entry.lines.length;
};
// The owner's opening capital, so the bank starts in funds.
postHistory({
  date: startDate,
  memo: 'Opening balance',
  sourceType: 'opening_balance',
  sourceId: null,
  lines: [line(account.bank, 'debit', 25_000_000n, 'both'), line(account.ownerEquity, 'credit', 25_000_000n, 'both')],
});
for (let day = 0; day < days && historyWritten < historyLines; day += 1) {
  const date = addDays(startDate, day);
  const dayTarget = day === days - 1 ? historyLines : Math.round((historyLines * (day + 1)) / days);
  while (historyWritten < dayTarget) {
    const room = historyLines - historyWritten;
    const drafts = everyday(date);
    const size = drafts.reduce((sum, d) => sum + d.lines.length, 0);
    // Near the end, fill the exact remainder with one expense entry, never leaving a single line.
    if (size > room || room - size === 1) {
      const fit = room <= MAX_ENTRY_LINES ? room : room - MAX_ENTRY_LINES >= MIN_ENTRY_LINES ? MAX_ENTRY_LINES : MAX_ENTRY_LINES - 1;
      postHistory(expensePaid(date, fit));
    } else {
      for (const draft of drafts) postHistory(draft);
    }
  }
  journal.checkpoint();
}
journal.commit();
if (journal.linesWritten !== totalLines) throw new Error(`wrote ${journal.linesWritten} lines, not ${totalLines}`);

// The stored sums must agree with the lines, and each view must balance.
const stored = db
  .prepare(`SELECT basis, sum(debit_cents) AS debit, sum(credit_cents) AS credit FROM ledger_balances WHERE business_id = ? AND span = 'year' GROUP BY basis`)
  .all(business.id) as { basis: Basis; debit: bigint; credit: bigint }[];
const raw = db
  .prepare(
    `SELECT basis, sum(CASE direction WHEN 'debit' THEN amount_cents ELSE 0 END) AS debit, sum(CASE direction WHEN 'credit' THEN amount_cents ELSE 0 END) AS credit
     FROM journal_lines WHERE business_id = ? GROUP BY basis`,
  )
  .all(business.id) as { basis: Basis; debit: bigint; credit: bigint }[];
for (const view of ['accrual', 'cash'] as const) {
  const inView = (rows: typeof raw) => rows.filter((r) => r.basis === 'both' || r.basis === view).reduce((s, r) => ({ debit: s.debit + r.debit, credit: s.credit + r.credit }), { debit: 0n, credit: 0n });
  const fromLines = inView(raw);
  const fromSums = inView(stored);
  if (fromLines.debit !== fromLines.credit) throw new Error(`the ${view} view does not balance: ${fromLines.debit} / ${fromLines.credit}`);
  if (fromSums.debit !== fromLines.debit || fromSums.credit !== fromLines.credit) throw new Error(`ledger_balances disagree with the lines in the ${view} view`);
}

const generationSeconds = elapsedSeconds(started);
const { key } = createKey(db, clock, CLI_ACTOR, { tenantId: tenant.id, name: 'report bench', access: 'read', businessIds: [business.id] });
updateTenant(db, clock, CLI_ACTOR, tenant.id, { rateLimit: { mode: 'off' } });
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();

const percent = (n: number) => `${((100 * n) / journal.linesWritten).toFixed(0)} %`;
const { both, accrual, cash } = journal.linesByBasis;
console.log(
  `generated ${journal.linesWritten.toLocaleString('en-US')} journal lines in ${journal.entriesWritten.toLocaleString('en-US')} entries ` +
    `(${startDate} to ${endDate}; basis both ${percent(both)}, accrual ${percent(accrual)}, cash ${percent(cash)}), ` +
    `${chartSize} accounts, ${openInvoiceCount.toLocaleString('en-US')} open invoices (${invoicesWithPayments.toLocaleString('en-US')} partly paid), ` +
    (paidInvoiceCount > 0 ? `${paidInvoiceCount.toLocaleString('en-US')} paid invoices, ` : '') +
    `${openBillCount.toLocaleString('en-US')} open bills (${billsWithPayments.toLocaleString('en-US')} partly paid), ` +
    `${journal.registerRowsWritten.toLocaleString('en-US')} register rows, in ${generationSeconds} s (seed ${seed})`,
);
console.log(`business ${business.id}`);
console.log(`key ${key}`);
console.log(`npm run bench:reports -- --db ${dbPath} --key ${key} --business ${business.id}`);
