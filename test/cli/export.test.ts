import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Business } from '../../src/books/businesses.js';
import { type AccountType, chartTree, listPostableAccounts } from '../../src/books/chart.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { recordExpense } from '../../src/books/expenses.js';
import { setRate } from '../../src/books/fx.js';
import { recordPayment, sendInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice, findInvoice } from '../../src/books/invoices.js';
import { type JournalEntry, type JournalLineDraft, postEntry, reverseEntry } from '../../src/books/ledger.js';
import { ledgerAccountPaths, ledgerAmount, safeAccountComponent, safeDescription } from '../../src/books/reports/ledger-export.js';
import { trialBalance } from '../../src/books/reports/statements.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { nowIso } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { type Db, inTransaction, openDb } from '../../src/db/connection.js';
import { one } from '../../src/db/statements.js';
import { ApiError } from '../../src/errors.js';
import { parseCsv } from '../../src/books/import/csv.js';
import { startTestApp } from '../support/app.js';
import { buildBusiness, buildKey, TEST_ACTOR } from '../support/factories.js';
import { CliHarness, expectBadArguments, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';
import { seededRandom } from '../../src/seeded-random.js';

/**
 * `daybook export ledger`: exact journals for small books made through the real write paths,
 * then the proof: generated books exported and read by hledger and ledger-cli, whose balances
 * must equal the trial balance account by account, to the cent, in both views.
 */

const MAIL = { siteUrl: 'http://localhost:3000' };
/** hledger reads files in the locale's encoding: journals are UTF-8. */
const TOOL_ENV = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };

/** The standard chart's declarations, as every export of a business without extra accounts starts. */
const STANDARD_DECLARATIONS = `commodity USD
    format USD 1000.00

account Assets
    ; type: A
account Assets:Cash and Bank
    ; type: A
account Assets:Cash and Bank:Business Checking
    ; type: A
account Assets:Cash and Bank:Business Savings
    ; type: A
account Assets:Cash and Bank:Card Payments Clearing
    ; type: A
account Assets:Accounts Receivable
    ; type: A
account Assets:Prepaid Expenses
    ; type: A
account Assets:Equipment
    ; type: A
account Liabilities
    ; type: L
account Liabilities:Accounts Payable
    ; type: L
account Liabilities:Sales Tax Payable
    ; type: L
account Liabilities:Business Credit Card
    ; type: L
account Liabilities:Customer Deposits
    ; type: L
account Equity
    ; type: E
account Equity:Owner's Equity
    ; type: E
account Equity:Owner's Draws
    ; type: E
account Equity:Retained Earnings
    ; type: E
account Revenue
    ; type: R
account Revenue:Sales
    ; type: R
account Revenue:Service Revenue
    ; type: R
account Revenue:Other Income
    ; type: R
account Expenses
    ; type: X
account Expenses:Operating Expenses
    ; type: X
account Expenses:Operating Expenses:Advertising and Marketing
    ; type: X
account Expenses:Operating Expenses:Bank Fees
    ; type: X
account Expenses:Operating Expenses:Payment Processing Fees
    ; type: X
account Expenses:Operating Expenses:Contractors
    ; type: X
account Expenses:Operating Expenses:Insurance
    ; type: X
account Expenses:Operating Expenses:Meals
    ; type: X
account Expenses:Operating Expenses:Office Supplies
    ; type: X
account Expenses:Operating Expenses:Professional Fees
    ; type: X
account Expenses:Operating Expenses:Rent
    ; type: X
account Expenses:Operating Expenses:Software and Subscriptions
    ; type: X
account Expenses:Operating Expenses:Travel
    ; type: X
account Expenses:Operating Expenses:Utilities
    ; type: X
account Expenses:Operating Expenses:Uncategorized Expense
    ; type: X
account Expenses:Other Expenses
    ; type: X
account Expenses:Other Expenses:Realized FX Gain or Loss
    ; type: X
`;

function header(businessId: string, basis: string, name = 'Lakeside Bakery'): string {
  return `; Daybook journal of ${name} (business ${businessId}), ${basis} basis.\n; Amounts in US dollars: debits positive, credits negative.\n\n`;
}

/** The transactions of an exported journal: everything after the last account declaration. */
function transactionsOf(journal: string): string {
  const start = journal.search(/\n\n\d{4}-\d{2}-\d{2} /);
  return start === -1 ? '' : journal.slice(start + 2);
}

/** A books file driven by the real write paths, with `daybook` run over it in-process. */
class Books {
  readonly cli = new CliHarness();
  db!: Db;
  tenantId!: string;

  async open(): Promise<this> {
    this.tenantId = await this.cli.createAccount();
    this.db = openDb(this.cli.dbPath, { synchronous: 'normal' });
    ensureServerSecrets(this.db, this.cli.clock);
    return this;
  }

  close(): void {
    this.db.close();
    this.cli.cleanup();
  }

  business(basis: 'accrual' | 'cash', name = 'Lakeside Bakery'): Business {
    return buildBusiness(this.db, this.cli.clock, { tenantId: this.tenantId, basis, name });
  }

  accountId(businessId: string, name: string): string {
    const found = chartTree(this.db, businessId).filter((node) => node.name === name);
    if (found.length !== 1) throw new Error(`${found.length} accounts named ${name}`);
    return found[0]!.id;
  }

  expense(business: Business, date: string, amountCents: bigint, account: string, memo?: string): void {
    inTransaction(this.db, () =>
      recordExpense(this.db, this.cli.clock, TEST_ACTOR, {
        business,
        date,
        amountCents,
        vendor: { name: 'Office Depot' },
        accountId: account.length === 36 ? account : this.accountId(business.id, account),
        ...(memo === undefined ? {} : { memo }),
      }),
    );
  }

  customer(name: string): string {
    return inTransaction(this.db, () => findOrCreateCustomer(this.db, this.cli.clock, TEST_ACTOR, this.tenantId, { name, email: 'ap@example.com' })).id;
  }

  /** Creates and sends an invoice; returns its id. */
  invoice(
    business: Business,
    input: { customer: string; issueDate: string; currency: 'USD' | 'EUR'; taxRatePercent?: string; lines: { quantity: string; unitPriceCents: bigint; accountId: string }[] },
  ): string {
    const customerId = this.customer(input.customer);
    const { invoiceId } = inTransaction(this.db, () =>
      createInvoice(this.db, this.cli.clock, TEST_ACTOR, {
        business,
        customerId,
        issueDate: input.issueDate,
        currency: input.currency,
        ...(input.taxRatePercent === undefined ? {} : { taxRatePercent: input.taxRatePercent }),
        lines: input.lines.map((line, index) => ({ description: `Line ${index + 1}`, ...line })),
      }),
    );
    inTransaction(this.db, () => sendInvoice(this.db, this.cli.clock, TEST_ACTOR, invoiceId, MAIL));
    return invoiceId;
  }

  pay(invoiceId: string, amountCents: bigint, paidAt: string): void {
    inTransaction(this.db, () => recordPayment(this.db, this.cli.clock, TEST_ACTOR, { invoiceId, amountCents, method: 'wire', paidAt }));
  }

  post(businessId: string, date: string, memo: string | null, lines: JournalLineDraft[]): JournalEntry {
    return postEntry(this.db, this.cli.clock, TEST_ACTOR, { businessId, date, memo, sourceType: 'manual', lines });
  }

  /** A chart account inserted as it is (no API checks its name), under `parentId` or at the top. */
  insertAccount(businessId: string, parentId: string | null, code: string, name: string, type: AccountType, isHeading = false): string {
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, ?)`,
      )
      .run(id, businessId, parentId, code, name, type, isHeading ? 1 : 0, nowIso(this.cli.clock));
    return id;
  }

  /** `daybook export ledger`, expected to succeed; returns stdout and stderr. */
  async export(businessId: string, ...extra: string[]): Promise<{ stdout: string; stderr: string }> {
    const result = await this.cli.run(['export', 'ledger', '--business', businessId, ...extra]);
    expectOk(result);
    return result;
  }
}

/**
 * Accounts with names the journal format cannot hold as they are, each child of a heading of
 * the standard chart (or at the top), with the ledger path each must be written as.
 */
const AWKWARD_ACCOUNTS: { parent: string | null; code: string; name: string; type: AccountType; heading?: boolean; path: string }[] = [
  { parent: 'Operating Expenses', code: '6301', name: 'Meals: Client', type: 'expense', path: 'Expenses:Operating Expenses:Meals- Client' },
  { parent: 'Operating Expenses', code: '6302', name: 'Two  spaces', type: 'expense', path: 'Expenses:Operating Expenses:Two spaces' },
  { parent: 'Operating Expenses', code: '6303', name: '(Old) Meals', type: 'expense', path: 'Expenses:Operating Expenses:_(Old) Meals' },
  // The standard chart has Travel (6200) under the same heading: both get their code.
  { parent: 'Operating Expenses', code: '6304', name: 'Travel', type: 'expense', path: 'Expenses:Operating Expenses:Travel (6304)' },
  { parent: 'Operating Expenses', code: '6305', name: 'Tab\there', type: 'expense', path: 'Expenses:Operating Expenses:Tab here' },
  // A no-break space reads as a space in hledger: it collides with 6307, so both get their code.
  { parent: 'Operating Expenses', code: '6306', name: 'No\u00a0break', type: 'expense', path: 'Expenses:Operating Expenses:No break (6306)' },
  { parent: 'Operating Expenses', code: '6307', name: 'No break', type: 'expense', path: 'Expenses:Operating Expenses:No break (6307)' },
  { parent: 'Operating Expenses', code: '6308', name: '*Starred', type: 'expense', path: 'Expenses:Operating Expenses:_*Starred' },
  { parent: 'Operating Expenses', code: '6309', name: ';Semi', type: 'expense', path: 'Expenses:Operating Expenses:_;Semi' },
  { parent: 'Operating Expenses', code: '6310', name: '[Bracketed]', type: 'expense', path: 'Expenses:Operating Expenses:_[Bracketed]' },
  // Decomposed é (e + combining acute) is written composed (NFC).
  { parent: 'Operating Expenses', code: '6311', name: 'Cafe\u0301 € 東京 a ; b', type: 'expense', path: 'Expenses:Operating Expenses:Café € 東京 a ; b' },
  { parent: 'Operating Expenses', code: '6312', name: ' Trailing\u3000 ', type: 'expense', path: 'Expenses:Operating Expenses:Trailing' },
  { parent: 'Operating Expenses', code: '6313', name: '!Bang', type: 'expense', path: 'Expenses:Operating Expenses:_!Bang' },
  { parent: 'Operating Expenses', code: '6400', name: 'Projects: 2026', type: 'expense', heading: true, path: 'Expenses:Operating Expenses:Projects- 2026' },
  { parent: 'Projects: 2026', code: '6401', name: 'Site  A', type: 'expense', path: 'Expenses:Operating Expenses:Projects- 2026:Site A (6401)' },
  { parent: 'Projects: 2026', code: '6402', name: 'Site A', type: 'expense', path: 'Expenses:Operating Expenses:Projects- 2026:Site A (6402)' },
  { parent: 'Revenue', code: '4300', name: 'Consulting: EU', type: 'revenue', path: 'Revenue:Consulting- EU' },
  { parent: 'Revenue', code: '4301', name: '(Misc)', type: 'revenue', path: 'Revenue:_(Misc)' },
  { parent: 'Cash and Bank', code: '1140', name: 'Petty cash: front desk', type: 'asset', path: 'Assets:Cash and Bank:Petty cash- front desk' },
  // At the top of the chart a leading ( or [ would make the posting virtual.
  { parent: null, code: '8000', name: '(Suspense)', type: 'asset', path: '_(Suspense)' },
  { parent: null, code: '8100', name: '[Clearing]', type: 'liability', path: '_[Clearing]' },
];

function addAwkwardAccounts(books: Books, businessId: string): Map<string, string> {
  const pathById = new Map<string, string>();
  for (const account of AWKWARD_ACCOUNTS) {
    const parentId = account.parent === null ? null : books.accountId(businessId, account.parent);
    pathById.set(books.insertAccount(businessId, parentId, account.code, account.name, account.type, account.heading ?? false), account.path);
  }
  return pathById;
}

describe('daybook export ledger', () => {
  describe('names, descriptions and amounts', () => {
    it('writes amounts as USD with two decimals, credits negative, no separators', () => {
      expect(ledgerAmount(0n)).to.equal('USD 0.00');
      expect(ledgerAmount(5n)).to.equal('USD 0.05');
      expect(ledgerAmount(-5n)).to.equal('USD -0.05');
      expect(ledgerAmount(123456n)).to.equal('USD 1234.56');
      expect(ledgerAmount(-100n)).to.equal('USD -1.00');
      expect(ledgerAmount(999_999_999_999_999n)).to.equal('USD 9999999999999.99');
      expect(ledgerAmount(-(10n ** 20n) - 1n)).to.equal('USD -1000000000000000000.01');
    });

    it('makes each account name safe: no colon, one space at a time, no leading mark, never empty', () => {
      expect(safeAccountComponent('Meals: Client')).to.equal('Meals- Client');
      expect(safeAccountComponent('a  b\t\tc\nd\r\ne')).to.equal('a b c d e');
      expect(safeAccountComponent('\u2003x\u00a0\u00a0y\u202f')).to.equal('x y');
      expect(safeAccountComponent('x\u202ey\u2066')).to.equal('xy');
      for (const mark of ['(', '[', '<', '{', '*', '!', ';', '#', '%', '|']) {
        expect(safeAccountComponent(`${mark}x`), mark).to.equal(`_${mark}x`);
        expect(safeAccountComponent(`x${mark}`), mark).to.equal(`x${mark}`);
      }
      expect(safeAccountComponent(' \t ')).to.equal('_');
      expect(safeAccountComponent(':')).to.equal('-');
    });

    it('keeps descriptions on one line, without a comment or a leading status or code', () => {
      expect(safeDescription('Lunch; with client')).to.equal('Lunch, with client');
      expect(safeDescription('(draft) estimate')).to.equal('_(draft) estimate');
      expect(safeDescription('* urgent')).to.equal('_* urgent');
      expect(safeDescription('!')).to.equal('_!');
      expect(safeDescription('two\nlines  and\ttabs ')).to.equal('two lines and tabs');
      expect(safeDescription('Invoice INV-0001 to Müller (Köln) #4')).to.equal('Invoice INV-0001 to Müller (Köln) #4');
    });

    it('never maps two accounts to one path: siblings that would share a name get their code, then their id', () => {
      const node = (id: string, parentId: string | null, code: string, name: string) => ({
        id,
        parentId,
        code,
        name,
        type: 'expense' as const,
        isHeading: false,
        archived: false,
        depth: parentId === null ? 0 : 1,
        path: name,
      });
      const paths = ledgerAccountPaths([
        node('top', null, '1', 'Top'),
        node('a', 'top', '10', 'Rent'),
        node('b', 'top', '11', 'Rent'),
        node('c', 'top', '12', 'Rent (10)'),
        node('d', 'top', 'x:1', 'Dup'),
        node('e', 'top', 'x-1', 'Dup'),
        node('f', 'top', '13', 'Other'),
      ]);
      expect(Object.fromEntries(paths)).to.deep.equal({
        top: 'Top',
        a: 'Top:Rent (a)',
        b: 'Top:Rent (11)',
        c: 'Top:Rent (10) (c)',
        d: 'Top:Dup (d)',
        e: 'Top:Dup (e)',
        f: 'Top:Other',
      });
    });
  });

  describe('exact journals', () => {
    let books: Books;
    beforeEach(async () => (books = await new Books().open()));
    afterEach(() => books.close());

    it('an expense: the header, the whole chart declared, then one transaction', async () => {
      const business = books.business('accrual');
      books.expense(business, '2026-03-03', 4250n, 'Office Supplies', 'Printer paper');
      const { stdout, stderr } = await books.export(business.id);
      expect(stdout).to.equal(
        header(business.id, 'accrual') +
          STANDARD_DECLARATIONS +
          `
2026-03-03 Printer paper
    Expenses:Operating Expenses:Office Supplies  USD 42.50
    Assets:Cash and Bank:Business Checking  USD -42.50
`,
      );
      expect(stderr).to.equal('daybook: exported 1 entry (2 lines, accrual basis) of Lakeside Bakery\n');
    });

    /*
     * EUR 10 x 100.00 + 10 % tax = 1100.00, sent 2026-03-02 at 1.10 USD per EUR: receivable USD
     * 1210.00 (1100.00 sales, 110.00 tax). EUR 500.00 paid 2026-03-10 at 1.20: USD 600.00 in the
     * bank, 500 x 1.10 = 550.00 of the receivable cleared, 50.00 realised FX gain. The cash view
     * recognises 600.00 x 1000 / 1100 = 545.45 of sales and 54.55 of tax.
     */
    it('an invoice sent and paid in EUR: the accrual view holds the FX gain, the cash view revenue and tax as money arrives', async () => {
      const business = books.business('accrual');
      setRate(books.db, books.cli.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-02', usdPerUnit: '1.1' });
      setRate(books.db, books.cli.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-10', usdPerUnit: '1.2' });
      const invoiceId = books.invoice(business, {
        customer: 'Müller GmbH',
        issueDate: '2026-03-02',
        currency: 'EUR',
        taxRatePercent: '10',
        lines: [{ quantity: '10', unitPriceCents: 10000n, accountId: books.accountId(business.id, 'Sales') }],
      });
      books.pay(invoiceId, 50000n, '2026-03-10');
      books.expense(business, '2026-03-04', 1999n, 'Bank Fees', '(wire) fee; EUR account');

      const accrual = await books.export(business.id);
      expect(accrual.stdout.startsWith(header(business.id, 'accrual') + STANDARD_DECLARATIONS)).to.equal(true);
      expect(transactionsOf(accrual.stdout)).to.equal(`2026-03-02 Invoice INV-0001 to Müller GmbH
    Assets:Accounts Receivable  USD 1210.00
    Revenue:Sales  USD -1100.00
    Liabilities:Sales Tax Payable  USD -110.00

2026-03-04 _(wire) fee, EUR account
    Expenses:Operating Expenses:Bank Fees  USD 19.99
    Assets:Cash and Bank:Business Checking  USD -19.99

2026-03-10 Payment on invoice INV-0001 (wire)
    Assets:Cash and Bank:Business Checking  USD 600.00
    Assets:Accounts Receivable  USD -550.00
    Expenses:Other Expenses:Realized FX Gain or Loss  USD -50.00
`);

      const cash = await books.export(business.id, '--basis', 'cash');
      expect(cash.stdout.startsWith(header(business.id, 'cash'))).to.equal(true);
      expect(transactionsOf(cash.stdout)).to.equal(`2026-03-04 _(wire) fee, EUR account
    Expenses:Operating Expenses:Bank Fees  USD 19.99
    Assets:Cash and Bank:Business Checking  USD -19.99

2026-03-10 Payment on invoice INV-0001 (wire)
    Assets:Cash and Bank:Business Checking  USD 600.00
    Revenue:Sales  USD -545.45
    Liabilities:Sales Tax Payable  USD -54.55
`);
      expect(cash.stderr).to.equal('daybook: exported 2 entries (5 lines, cash basis) of Lakeside Bakery\n');
    });

    it('a cash-basis business exports its cash view by default: an unpaid invoice is left out until paid', async () => {
      const business = books.business('cash', 'Corner Shop');
      const serviceRevenue = books.accountId(business.id, 'Service Revenue');
      const paid = books.invoice(business, {
        customer: 'Harbor Cafe',
        issueDate: '2026-03-01',
        currency: 'USD',
        taxRatePercent: '8.875',
        lines: [{ quantity: '2', unitPriceCents: 40000n, accountId: serviceRevenue }],
      });
      books.invoice(business, { customer: 'Harbor Cafe', issueDate: '2026-03-05', currency: 'USD', lines: [{ quantity: '1', unitPriceCents: 5000n, accountId: serviceRevenue }] });
      // 871.00 due; 300.00 paid: revenue round(300 x 800 / 871) = 275.55, tax 24.45.
      books.pay(paid, 30000n, '2026-03-06');
      books.expense(business, '2026-03-02', 1200n, 'Meals');

      const { stdout } = await books.export(business.id);
      expect(stdout.startsWith(header(business.id, 'cash', 'Corner Shop') + STANDARD_DECLARATIONS)).to.equal(true);
      expect(transactionsOf(stdout)).to.equal(`2026-03-02 Office Depot
    Expenses:Operating Expenses:Meals  USD 12.00
    Assets:Cash and Bank:Business Checking  USD -12.00

2026-03-06 Payment on invoice INV-0001 (wire)
    Assets:Cash and Bank:Business Checking  USD 300.00
    Revenue:Service Revenue  USD -275.55
    Liabilities:Sales Tax Payable  USD -24.45
`);
      const accrual = await books.export(business.id, '--basis', 'accrual');
      expect(transactionsOf(accrual.stdout)).to.equal(`2026-03-01 Invoice INV-0001 to Harbor Cafe
    Assets:Accounts Receivable  USD 871.00
    Revenue:Service Revenue  USD -800.00
    Liabilities:Sales Tax Payable  USD -71.00

2026-03-02 Office Depot
    Expenses:Operating Expenses:Meals  USD 12.00
    Assets:Cash and Bank:Business Checking  USD -12.00

2026-03-05 Invoice INV-0002 to Harbor Cafe
    Assets:Accounts Receivable  USD 50.00
    Revenue:Service Revenue  USD -50.00

2026-03-06 Payment on invoice INV-0001 (wire)
    Assets:Cash and Bank:Business Checking  USD 300.00
    Assets:Accounts Receivable  USD -300.00
`);
    });

    it('orders entries by date, then as written; an entry without a memo is described by its source', async () => {
      const business = books.business('accrual');
      const bank = books.accountId(business.id, 'Business Checking');
      const equity = books.accountId(business.id, "Owner's Equity");
      const deposit = (date: string, memo: string | null, cents: bigint) =>
        books.post(business.id, date, memo, [
          { accountId: bank, direction: 'debit', amountCents: cents },
          { accountId: equity, direction: 'credit', amountCents: cents },
        ]);
      deposit('2026-03-05', 'second on the 5th', 200n);
      deposit('2026-03-01', null, 100n);
      deposit('2026-03-05', 'third on the 5th', 300n);
      deposit('2026-03-05', '   ', 400n);
      expect(transactionsOf((await books.export(business.id)).stdout)).to.equal(`2026-03-01 manual
    Assets:Cash and Bank:Business Checking  USD 1.00
    Equity:Owner's Equity  USD -1.00

2026-03-05 second on the 5th
    Assets:Cash and Bank:Business Checking  USD 2.00
    Equity:Owner's Equity  USD -2.00

2026-03-05 third on the 5th
    Assets:Cash and Bank:Business Checking  USD 3.00
    Equity:Owner's Equity  USD -3.00

2026-03-05 manual
    Assets:Cash and Bank:Business Checking  USD 4.00
    Equity:Owner's Equity  USD -4.00
`);
    });

    it('books with no entries: the declarations only', async () => {
      const business = books.business('cash');
      const { stdout, stderr } = await books.export(business.id);
      expect(stdout).to.equal(header(business.id, 'cash') + STANDARD_DECLARATIONS);
      expect(stderr).to.equal('daybook: exported 0 entries (0 lines, cash basis) of Lakeside Bakery\n');
    });
  });

  describe('the command', () => {
    let books: Books;
    let business: Business;
    beforeEach(async () => {
      books = await new Books().open();
      business = books.business('accrual');
      books.expense(business, '2026-03-03', 4250n, 'Office Supplies', 'Printer paper');
      books.expense(business, '2026-03-04', 1000n, 'Rent');
    });
    afterEach(() => books.close());

    it('--to FILE writes the journal there and prints a summary line; nothing else is left in the folder', async () => {
      const file = join(books.cli.dir, 'out', 'books.journal');
      mkdirSync(join(books.cli.dir, 'out'));
      const { stdout, stderr } = await books.export(business.id, '--to', file);
      expect(stdout).to.equal(`Exported 2 entries (4 lines, accrual basis) of Lakeside Bakery to ${file}.\n`);
      expect(stderr).to.equal('');
      const stdoutJournal = (await books.export(business.id)).stdout;
      expect(readFileSync(file, 'utf8')).to.equal(stdoutJournal);
      expect(readdirSync(join(books.cli.dir, 'out'))).to.deep.equal(['books.journal']);
    });

    it('--json with --to prints one object', async () => {
      const file = join(books.cli.dir, 'cash.journal');
      const result = await books.cli.run(['--json', 'export', 'ledger', '--business', business.id, '--basis', 'cash', '--to', file]);
      expectOk(result);
      expect(parseOneObject(result.stdout)).to.deep.equal({
        businessId: business.id,
        basis: 'cash',
        entries: 2,
        lines: 4,
        file,
        firstDate: '2026-03-03',
        lastDate: '2026-03-04',
      });
      expect(existsSync(file)).to.equal(true);
    });

    it('refuses --json without --to, an unknown business, a bad basis and a folder or missing folder as --to (exit 2, no file)', async () => {
      const file = join(books.cli.dir, 'never.journal');
      expectBadArguments(await books.cli.run(['--json', 'export', 'ledger', '--business', business.id]), /--json needs --to/);
      expectBadArguments(await books.cli.run(['export', 'ledger', '--business', UNKNOWN_ID, '--to', file]), /no business with id/);
      expectBadArguments(await books.cli.run(['export', 'ledger', '--business', business.id, '--basis', 'both', '--to', file]), /--basis/);
      expectBadArguments(await books.cli.run(['export', 'ledger', '--business', 'nope', '--to', file]), /--business/);
      expectBadArguments(await books.cli.run(['export', 'ledger', '--business', business.id, '--to', books.cli.dir]), /is a folder/);
      expectBadArguments(await books.cli.run(['export', 'ledger', '--business', business.id, '--to', join(books.cli.dir, 'no', 'such.journal')]), /no such folder/);
      expect(existsSync(file)).to.equal(false);
      expect(readdirSync(books.cli.dir).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
    });

    it('replaces an existing file whole', async () => {
      const file = join(books.cli.dir, 'books.journal');
      await books.export(business.id, '--to', file);
      books.expense(business, '2026-03-05', 500n, 'Rent');
      await books.export(business.id, '--to', file);
      expect(readFileSync(file, 'utf8')).to.equal((await books.export(business.id)).stdout);
      expect(readFileSync(file, 'utf8')).to.contain('USD -5.00');
    });
  });

  describe('checked by hledger and ledger-cli', function () {
    this.timeout(120_000);
    const TODAY = '2026-03-15';
    /** The dates each view is compared at: before the first entry, month and year ends, today. */
    const AS_OF_DATES = ['2024-12-31', '2025-01-01', '2025-03-31', '2025-06-30', '2025-12-31', '2026-02-14', TODAY];
    const toolPresent = (tool: string) => !spawnSync(tool, ['--version'], { encoding: 'utf8' }).error;
    const present = { hledger: toolPresent('hledger'), ledger: toolPresent('ledger') };

    /** Skips the test when `tool` is missing, except in CI, where it must be installed (.ci/run does). */
    function requireTool(context: Mocha.Context, tool: 'hledger' | 'ledger'): void {
      if (present[tool]) return;
      if (process.env.CI === 'true') throw new Error(`${tool} is not installed: CI must run this test (.ci/run installs it)`);
      console.warn(`      skipped: ${tool} is not installed (apt-get install hledger ledger); CI runs this test`);
      context.skip(); // reason: ${tool} is not installed on this machine; CI installs it and never skips (see above)
    }

    let books: Books;
    let awkward: { business: Business; paths: Map<string, string>; file: string };
    let generated: Business[];
    const fileOf = (business: Business, view: 'accrual' | 'cash') => join(books.cli.dir, `${business.basis}-books-${view}.journal`);

    before(async function () {
      if (!present.hledger && !present.ledger && process.env.CI !== 'true') return;
      books = await new Books().open();
      awkward = awkwardBooks(books);
      await books.export(awkward.business.id, '--to', awkward.file);
      generated = generateBooks(books, TODAY);
      for (const business of generated) {
        for (const view of ['accrual', 'cash'] as const) {
          const result = await books.cli.run(['--json', 'export', 'ledger', '--business', business.id, '--basis', view, '--to', fileOf(business, view)]);
          expectOk(result);
          const summary = parseOneObject<{ entries: number; lines: number }>(result.stdout);
          const stored = one<{ entries: bigint; lines: bigint }>(
            books.db,
            `SELECT count(DISTINCT entry_id) AS entries, count(*) AS lines FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?)`,
            business.id,
            view,
          )!;
          expect(summary, `${business.name}, ${view} view`).to.include({ entries: Number(stored.entries), lines: Number(stored.lines) });
        }
      }
    });
    after(() => books?.close());

    const hledger = (...args: string[]) => execFileSync('hledger', args, { encoding: 'utf8', env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe'] });

    /** Each account's balance (debits positive) as hledger computes it through `asOf` (-e is exclusive). */
    function hledgerBalances(file: string, asOf: string): Map<string, bigint> {
      const csv = hledger('-f', file, '--strict', 'balance', '--flat', '--no-total', '-O', 'csv', '-e', addDays(asOf, 1));
      const [head, ...records] = parseCsv(csv);
      expect(head?.fields).to.deep.equal(['account', 'balance']);
      const balances = new Map<string, bigint>();
      for (const record of records) {
        const [account, amount] = record.fields as [string, string];
        expect(balances.has(account), `${account} listed twice`).to.equal(false);
        balances.set(account, parseAmount(amount));
      }
      return balances;
    }

    /** `ledger -f FILE --pedantic balance --flat`: each account's balance, after checking the total is zero. */
    function ledgerBalances(file: string): Map<string, bigint> {
      const run = spawnSync('ledger', ['-f', file, '--pedantic', 'balance', '--flat'], { encoding: 'utf8', env: TOOL_ENV });
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stderr).to.equal('');
      const output = run.stdout.trimEnd().split('\n');
      expect(output.at(-2)).to.match(/^-+$/);
      expect(output.at(-1)!.trim(), 'the total of every balance').to.equal('0');
      const balances = new Map<string, bigint>();
      for (const line of output.slice(0, -2)) {
        const match = /^ *(USD -?[0-9]+\.[0-9]{2}|0)  (.+)$/.exec(line);
        if (!match) throw new Error(`ledger printed a line that is not a balance: ${JSON.stringify(line)}`);
        balances.set(match[2]!, parseAmount(match[1]!));
      }
      return balances;
    }

    /** `USD -1234.56` (or `0`) as signed cents, exactly. */
    function parseAmount(text: string): bigint {
      if (text === '0') return 0n;
      const match = /^USD (-?)([0-9]+)\.([0-9]{2})$/.exec(text);
      if (!match) throw new Error(`not an amount in USD with two decimals: ${JSON.stringify(text)}`);
      const cents = BigInt(match[2]!) * 100n + BigInt(match[3]!);
      return match[1] === '-' ? -cents : cents;
    }

    /** The trial balance through `asOf` in `view`, as signed cents by ledger path. */
    function trialBalances(business: Business, view: 'accrual' | 'cash', asOf: string): Map<string, bigint> {
      const paths = ledgerAccountPaths(chartTree(books.db, business.id));
      const balances = new Map<string, bigint>();
      for (const row of trialBalance(books.db, { ...business, basis: view }, asOf).rows) {
        const path = paths.get(row.accountId)!;
        balances.set(path, (balances.get(path) ?? 0n) + row.debitCents - row.creditCents);
      }
      return balances;
    }

    function expectSameBalances(actual: Map<string, bigint>, expected: Map<string, bigint>, what: string): void {
      const differences: string[] = [];
      for (const path of new Set([...actual.keys(), ...expected.keys()])) {
        const tool = actual.get(path) ?? 0n;
        const books = expected.get(path) ?? 0n;
        if (tool !== books) differences.push(`${path}: tool ${tool}, trial balance ${books}`);
      }
      expect(differences, `${what}: accounts that differ`).to.deep.equal([]);
    }

    const postedAwkwardPaths = () => [...awkward.paths.values()].filter((path) => !path.endsWith('Projects- 2026'));

    it('hledger reads every awkward account name back exactly as exported, each declared once, every posting real', function () {
      requireTool(this, 'hledger');
      const exported = ledgerAccountPaths(chartTree(books.db, awkward.business.id));
      for (const [accountId, path] of awkward.paths) expect(exported.get(accountId)).to.equal(path);
      expect([...exported.values()]).to.include('Expenses:Operating Expenses:Travel (6200)').and.not.include('Expenses:Operating Expenses:Travel');

      const declared = hledger('-f', awkward.file, 'accounts', '--declared').trimEnd().split('\n');
      expect(declared).to.have.length(chartTree(books.db, awkward.business.id).length);
      expect(new Set(declared)).to.deep.equal(new Set(exported.values()));
      const posted = hledger('-f', awkward.file, '--strict', 'accounts', '--used').trimEnd().split('\n');
      expect(new Set(posted)).to.deep.equal(new Set([...postedAwkwardPaths(), 'Assets:Cash and Bank:Business Checking']));
      // None read as virtual: the real postings balance, and each account holds what the books say.
      expectSameBalances(hledgerBalances(awkward.file, TODAY), trialBalances(awkward.business, 'accrual', TODAY), 'awkward accounts');
    });

    it('ledger-cli reads the same awkward names, and their balances', function () {
      requireTool(this, 'ledger');
      const posted = execFileSync('ledger', ['-f', awkward.file, '--pedantic', 'accounts'], { encoding: 'utf8', env: TOOL_ENV }).trimEnd().split('\n');
      expect(new Set(posted)).to.deep.equal(new Set([...postedAwkwardPaths(), 'Assets:Cash and Bank:Business Checking']));
      expectSameBalances(ledgerBalances(awkward.file), trialBalances(awkward.business, 'accrual', TODAY), 'ledger-cli, awkward accounts');
    });

    it('generated books: every hledger balance equals the trial balance, account by account, in both views, at several dates', function () {
      requireTool(this, 'hledger');
      let comparisons = 0;
      for (const business of generated) {
        for (const view of ['accrual', 'cash'] as const) {
          for (const asOf of AS_OF_DATES) {
            const expected = trialBalances(business, view, asOf);
            if (asOf === TODAY) expect(expected.size, 'the books hold balances to compare').to.be.greaterThan(25);
            expectSameBalances(hledgerBalances(fileOf(business, view), asOf), expected, `${business.name}, ${view} view, as of ${asOf}`);
            comparisons += 1;
          }
        }
      }
      expect(comparisons).to.equal(generated.length * 2 * AS_OF_DATES.length);
    });

    it('generated books: the trial balance endpoint, over HTTP, answers row for row the figures hledger matched', async function () {
      requireTool(this, 'hledger');
      const { key } = buildKey(books.db, books.cli.clock, { tenantId: books.tenantId, access: 'read' });
      const app = await startTestApp(`${TODAY}T12:00:00.000Z`, { dbPath: books.cli.dbPath });
      try {
        for (const business of generated) {
          for (const asOf of AS_OF_DATES) {
            const res = await app.get(`/api/v1/reports/trial-balance?entityId=${business.id}&asOf=${asOf}`, key);
            expect(res.status).to.equal(200);
            const body = res.body as { basis: string; rows: { account: string; debit: { cents: string }; credit: { cents: string } }[] };
            const expected = trialBalance(books.db, business, asOf).rows.map((row) => [row.account, row.debitCents.toString(), row.creditCents.toString()]);
            expect(body.basis).to.equal(business.basis);
            expect(body.rows.map((row) => [row.account, row.debit.cents, row.credit.cents]), `${business.name} as of ${asOf}`).to.deep.equal(expected);
          }
        }
      } finally {
        await app.close();
      }
    });

    it('generated books: ledger-cli reads the accrual business own view, each balance matches and the total is zero', function () {
      requireTool(this, 'ledger');
      const business = generated.find((found) => found.basis === 'accrual')!;
      expectSameBalances(ledgerBalances(fileOf(business, 'accrual')), trialBalances(business, 'accrual', TODAY), 'ledger-cli, accrual view');
    });
  });
});

/** A business with every awkward account, one posting on each leaf; the journal file it is exported to. */
function awkwardBooks(books: Books): { business: Business; paths: Map<string, string>; file: string } {
  const business = books.business('accrual', 'Awkward Names');
  const paths = addAwkwardAccounts(books, business.id);
  const bank = books.accountId(business.id, 'Business Checking');
  let cents = 100n;
  for (const [accountId, path] of paths) {
    if (path.endsWith('Projects- 2026')) continue; // a heading takes no postings
    books.post(business.id, '2026-03-01', path, [
      { accountId, direction: 'debit', amountCents: cents },
      { accountId: bank, direction: 'credit', amountCents: cents },
    ]);
    cents += 1n;
  }
  return { business, paths, file: join(books.cli.dir, 'awkward.journal') };
}

/**
 * A few hundred random postings through the books' own write paths over an accrual and a cash
 * business, awkward accounts included: expenses; invoices in USD and EUR, sent and paid in
 * parts at their own rates; manual entries with lines of both views, accrual-only and
 * cash-only; reversals of some of them.
 */
function generateBooks(books: Books, today: string): Business[] {
  const random = seededRandom(20260315);
  const firstDay = '2025-01-01';
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]!;
  const someDate = (from = firstDay) => addDays(from, int(0, Math.round((Date.parse(today) - Date.parse(from)) / 86_400_000)));
  const someCents = (): bigint => (random() < 0.1 ? BigInt(int(1, 99)) : random() < 0.05 ? BigInt(int(1, 9_999_999)) * 100_003n : BigInt(int(100, 2_500_000)));
  const memos = [null, 'Lunch; with client', '(draft) estimate', '*urgent*', '!', 'two\nlines', '   ', 'tab\there', 'Café €5 東京', 'Plain memo'];

  const counts = { expenses: 0, invoices: 0, payments: 0, manual: 0, reversals: 0 };
  const businesses = [books.business('accrual', 'Generated Accrual'), books.business('cash', 'Generated Cash')];
  for (const business of businesses) {
    addAwkwardAccounts(books, business.id);
    const leaves = listPostableAccounts(books.db, business.id);
    const expenseAccounts = leaves.filter((a) => a.type === 'expense' && a.name !== 'Realized FX Gain or Loss').map((a) => a.id);
    const revenueAccounts = leaves.filter((a) => a.type === 'revenue').map((a) => a.id);
    const anyAccount = leaves.map((a) => a.id);
    const manualEntries: JournalEntry[] = [];
    for (let step = 0; step < 220; step += 1) {
      const roll = random();
      if (roll < 0.35) {
        books.expense(business, someDate(), someCents(), pick(expenseAccounts), pick(memos) ?? undefined);
        counts.expenses += 1;
      } else if (roll < 0.6) {
        const currency = random() < 0.5 ? 'EUR' : 'USD';
        const issueDate = someDate();
        if (currency === 'EUR') setRate(books.db, books.cli.clock, CLI_ACTOR, { currency, date: issueDate, usdPerUnit: `1.${int(0, 3999)}` });
        const invoiceId = books.invoice(business, {
          customer: pick(['Harbor Cafe', 'Müller GmbH', 'Acme; Inc']),
          issueDate,
          currency,
          ...(random() < 0.6 ? { taxRatePercent: pick(['8.875', '10', '0', '7.25']) } : {}),
          lines: Array.from({ length: int(1, 3) }, () => ({
            quantity: pick(['1', '2', '1.5', '0.333', '12']),
            unitPriceCents: BigInt(int(100, 900_000)),
            accountId: pick(revenueAccounts),
          })),
        });
        counts.invoices += 1;
        let paidAt = issueDate;
        for (let part = int(0, 3); part > 0; part -= 1) {
          const invoice = findInvoice(books.db, invoiceId)!;
          const balanceCents = invoice.totalCents - invoice.paidCents;
          if (balanceCents === 0n) break;
          const amountCents = part === 1 || balanceCents < 200n ? balanceCents : balanceCents / BigInt(int(2, 4));
          paidAt = someDate(paidAt);
          if (currency === 'EUR') setRate(books.db, books.cli.clock, CLI_ACTOR, { currency, date: paidAt, usdPerUnit: `1.${int(0, 3999)}` });
          try {
            books.pay(invoiceId, amountCents, paidAt);
            counts.payments += 1;
          } catch (error) {
            // A payment the books refuse (a rate they will not use) writes nothing.
            if (!(error instanceof ApiError && error.code === 'validation_failed')) throw error;
          }
        }
      } else if (roll < 0.93) {
        const pair = (basis: 'both' | 'accrual' | 'cash'): JournalLineDraft[] => {
          const amountCents = someCents();
          return [
            { accountId: pick(anyAccount), direction: 'debit', amountCents, basis },
            { accountId: pick(anyAccount), direction: 'credit', amountCents, basis },
          ];
        };
        const lines = [
          ...(random() < 0.8 ? pair('both') : []),
          ...(random() < 0.4 ? pair('accrual') : []),
          ...(random() < 0.4 ? pair('cash') : []),
          ...(random() < 0.3 ? pair('both') : []),
        ];
        if (lines.length < 2) lines.push(...pair(pick(['both', 'accrual', 'cash'] as const)));
        manualEntries.push(books.post(business.id, someDate(), pick(memos), lines));
        counts.manual += 1;
      } else if (manualEntries.length > 0) {
        const original = manualEntries.splice(int(0, manualEntries.length - 1), 1)[0]!;
        reverseEntry(books.db, books.cli.clock, TEST_ACTOR, original.id, someDate(original.date));
        counts.reversals += 1;
      }
    }
  }
  expect(counts.payments, JSON.stringify(counts)).to.be.greaterThan(30);
  expect(counts.reversals, JSON.stringify(counts)).to.be.greaterThan(3);
  return businesses;
}

