import { expect } from 'chai';
import { osUserName } from '../../src/store/audit.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { accountIdByName, anyAccountIdByName } from '../support/factories.js';
import { CliHarness, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';

/**
 * `daybook bill create` and `daybook bill pay`, run in-process over a books file whose account
 * and business were made through the CLI. The clock stands at 2026-03-15T12:00Z. Every refusal
 * is checked to leave the books exactly as they were.
 *
 * The bill most tests use: A-1001 from Miller & Sons, issued 2026-03-02, due 2026-04-01,
 * $1,250.00 (125,000 cents) of Office Supplies.
 */

const VENDOR = 'Miller & Sons';
const NUMBER = 'A-1001';
const ISSUE_DATE = '2026-03-02';
const DUE_DATE = '2026-04-01';
const AMOUNT_CENTS = 125_000n;

interface BillRow {
  id: string;
  business_id: string;
  vendor: string;
  number: string;
  issue_date: string;
  due_date: string;
  amount_cents: bigint;
  paid_cents: bigint;
  ledger_account_id: string;
  journal_entry_id: string;
  closed_on: string | null;
  created_at: string;
}

interface PaymentRow {
  id: string;
  amount_cents: bigint;
  paid_on: string;
  journal_entry_id: string;
  created_at: string;
}

interface EntryRow {
  id: string;
  business_id: string;
  entry_date: string;
  memo: string | null;
  source_type: string;
  source_id: string | null;
  reverses_entry_id: string | null;
  line_count: bigint;
  actor: string;
}

interface Line {
  account: string;
  direction: string;
  amountCents: bigint;
  basis: string;
}

describe('daybook bill', () => {
  let cli: CliHarness;
  let accountId: string;
  let businessId: string;
  let officeSupplies: string;

  beforeEach(async () => {
    cli = new CliHarness();
    accountId = await cli.createAccount();
    businessId = await cli.createBusiness(accountId, ['--name', 'Lakeside Bakery']);
    officeSupplies = accountIdOf('Office Supplies');
  });
  afterEach(() => cli.cleanup());

  const accountIdOf = (name: string, business = businessId) => cli.withDb((db) => accountIdByName(db, business, name));
  /** Any account by name, headings and archived ones included (accountIdByName lists postable leaves only). */
  const anyAccountId = (name: string, business = businessId) =>
    cli.withDb((db) => anyAccountIdByName(db, business, name));

  interface BillFlags {
    business?: string;
    vendor?: string;
    number?: string;
    issueDate?: string;
    dueDate?: string;
    amountCents?: string;
    account?: string;
  }
  const createArgs = (flags: BillFlags = {}) => [
    'bill',
    'create',
    '--business',
    flags.business ?? businessId,
    '--vendor',
    flags.vendor ?? VENDOR,
    '--number',
    flags.number ?? NUMBER,
    '--issue-date',
    flags.issueDate ?? ISSUE_DATE,
    '--due-date',
    flags.dueDate ?? DUE_DATE,
    '--amount-cents',
    flags.amountCents ?? AMOUNT_CENTS.toString(),
    '--account',
    flags.account ?? officeSupplies,
  ];
  const payArgs = (billId: string, amountCents: string, date?: string) => ['bill', 'pay', '--id', billId, '--amount-cents', amountCents, ...(date ? ['--date', date] : [])];

  /** Creates a bill through the CLI (--json) and returns its id. */
  async function createBill(flags: BillFlags = {}): Promise<string> {
    return (await cli.json<{ id: string }>(createArgs(flags))).id;
  }
  async function pay(billId: string, amountCents: string, date?: string): Promise<{ paymentId: string }> {
    return cli.json<{ paymentId: string }>(payArgs(billId, amountCents, date));
  }

  const billRow = (id: string) =>
    cli.withDb((db) =>
      db
        .prepare(
          `SELECT b.id, b.business_id, v.name AS vendor, b.number, b.issue_date, b.due_date, b.amount_cents, b.paid_cents, b.ledger_account_id,
             b.journal_entry_id, b.closed_on, b.created_at
           FROM bills b JOIN vendors v ON v.id = b.vendor_id WHERE b.id = ?`,
        )
        .get(id),
    ) as BillRow;
  const payments = (billId: string) =>
    cli.withDb((db) =>
      db.prepare('SELECT id, amount_cents, paid_on, journal_entry_id, created_at FROM bill_payments WHERE bill_id = ? ORDER BY rowid').all(billId),
    ) as PaymentRow[];
  const entry = (id: string) => cli.withDb((db) => db.prepare('SELECT * FROM journal_entries WHERE id = ?').get(id)) as EntryRow;
  const linesOf = (entryId: string): Line[] =>
    (
      cli.withDb((db) =>
        db
          .prepare(
            `SELECT a.name AS account, l.direction, l.amount_cents, l.basis FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
             WHERE l.entry_id = ? ORDER BY l.line_no`,
          )
          .all(entryId),
      ) as { account: string; direction: string; amount_cents: bigint; basis: string }[]
    ).map((row) => ({ account: row.account, direction: row.direction, amountCents: row.amount_cents, basis: row.basis }));
  /** Debits less credits of one account over the lines a report in `view` reads. */
  const balance = (accountName: string, view: 'accrual' | 'cash') =>
    cli.withDb(
      (db) =>
        (
          db
            .prepare(
              `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS balance
               FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
               WHERE l.business_id = ? AND a.name = ? AND l.basis IN ('both', ?)`,
            )
            .get(businessId, accountName, view) as { balance: bigint }
        ).balance,
    );
  const balances = (view: 'accrual' | 'cash') => ({
    officeSupplies: balance('Office Supplies', view),
    payable: balance('Accounts Payable', view),
    bank: balance('Business Checking', view),
  });
  const totals = (view: 'accrual' | 'cash') => cli.withDb((db) => ledgerTotals(db, businessId, view));
  const vendors = () => cli.withDb((db) => db.prepare('SELECT id, name FROM vendors ORDER BY rowid').all()) as { id: string; name: string }[];
  const auditRows = (action: string) =>
    cli.withDb((db) =>
      db.prepare('SELECT tenant_id, business_id, actor_type, actor_name, subject_type, subject_id, detail_json, at FROM audit_log WHERE action = ? ORDER BY id').all(action),
    ) as {
      tenant_id: string;
      business_id: string | null;
      actor_type: string;
      actor_name: string;
      subject_type: string;
      subject_id: string;
      detail_json: string;
      at: string;
    }[];
  /** The row count of every table: a refusal must leave all of them as they were. */
  const tableCounts = () =>
    cli.withDb((db) => {
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
        (row) => row.name,
      );
      return Object.fromEntries(tables.map((table) => [table, Number((db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: bigint }).n)]));
    });

  /** Every bill as stored: a refused payment must not have touched paid_cents or closed_on either. */
  const allBills = () => cli.withDb((db) => db.prepare('SELECT * FROM bills ORDER BY id').all());

  /** Refused with exactly this stderr line (exit 2, nothing on stdout), with and without --json, and nothing written. */
  async function expectRefused(args: string[], line: string): Promise<void> {
    const before = tableCounts();
    const billsBefore = allBills();
    for (const json of [false, true]) {
      const result = await cli.run(json ? ['--json', ...args] : args);
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.equal(`daybook: ${line}\n`);
    }
    expect(tableCounts(), 'nothing written').to.deep.equal(before);
    expect(allBills(), 'no bill changed').to.deep.equal(billsBefore);
  }

  describe('bill create', () => {
    it('records the bill, posts the expense against accounts payable on the issue date (accrual only), and prints one line', async () => {
      const result = await cli.run(createArgs());
      expectOk(result);
      expect(result.stderr).to.equal('');
      const [billId] = cli.withDb((db) => (db.prepare('SELECT id FROM bills').all() as { id: string }[]).map((row) => row.id));
      expect(result.stdout).to.equal(`Bill A-1001 from Miller & Sons: $1,250.00, due 2026-04-01 (id ${billId}).\n`);

      const bill = billRow(billId!);
      expect(bill).to.deep.equal({
        id: billId,
        business_id: businessId,
        vendor: VENDOR,
        number: NUMBER,
        issue_date: ISSUE_DATE,
        due_date: DUE_DATE,
        amount_cents: AMOUNT_CENTS,
        paid_cents: 0n,
        ledger_account_id: officeSupplies,
        journal_entry_id: bill.journal_entry_id,
        closed_on: null,
        created_at: '2026-03-15T12:00:00.000Z',
      });

      expect(entry(bill.journal_entry_id)).to.deep.include({
        business_id: businessId,
        entry_date: ISSUE_DATE,
        memo: 'Bill A-1001 from Miller & Sons',
        source_type: 'bill',
        source_id: billId,
        reverses_entry_id: null,
        line_count: 2n,
        actor: 'cli',
      });
      expect(linesOf(bill.journal_entry_id)).to.deep.equal([
        { account: 'Office Supplies', direction: 'debit', amountCents: AMOUNT_CENTS, basis: 'accrual' },
        { account: 'Accounts Payable', direction: 'credit', amountCents: AMOUNT_CENTS, basis: 'accrual' },
      ]);
      // The bill's entry is the only one in the books.
      expect(tableCounts()).to.include({ journal_entries: 1, journal_lines: 2, bills: 1, bill_payments: 0 });

      // The vendor was new: created under its exact name, and audited.
      const [vendor] = vendors();
      expect(vendors()).to.deep.equal([{ id: vendor!.id, name: VENDOR }]);
      expect(auditRows('vendor.create').map((row) => [row.subject_id, JSON.parse(row.detail_json)])).to.deep.equal([[vendor!.id, { name: VENDOR }]]);

      const audits = auditRows('bill.create');
      expect(audits).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: businessId,
          actor_type: 'cli',
          actor_name: osUserName(),
          subject_type: 'bill',
          subject_id: billId,
          detail_json: audits[0]!.detail_json,
          at: '2026-03-15T12:00:00.000Z',
        },
      ]);
      expect(JSON.parse(audits[0]!.detail_json)).to.deep.equal({
        vendorId: vendor!.id,
        number: NUMBER,
        issueDate: ISSUE_DATE,
        dueDate: DUE_DATE,
        amountCents: '125000',
        accountId: officeSupplies,
      });
    });

    it('prints one JSON object with --json: the bill, amounts as digit strings', async () => {
      const result = await cli.run(['--json', ...createArgs()]);
      expectOk(result);
      const printed = parseOneObject<Record<string, unknown>>(result.stdout);
      expect(printed).to.deep.equal({
        id: printed.id,
        businessId,
        vendor: VENDOR,
        number: NUMBER,
        issueDate: ISSUE_DATE,
        dueDate: DUE_DATE,
        amountCents: '125000',
        paidCents: '0',
        owedCents: '125000',
      });
      expect(billRow(printed.id as string).number).to.equal(NUMBER);
    });

    it('after create, the accrual view owes the bill (expense +1,250.00, payable -1,250.00) and the cash view holds nothing', async () => {
      await createBill();
      expect(balances('accrual')).to.deep.equal({ officeSupplies: 125_000n, payable: -125_000n, bank: 0n });
      expect(totals('accrual')).to.deep.equal({ debitCents: 125_000n, creditCents: 125_000n });
      expect(balances('cash')).to.deep.equal({ officeSupplies: 0n, payable: 0n, bank: 0n });
      expect(totals('cash')).to.deep.equal({ debitCents: 0n, creditCents: 0n });
    });

    it('reuses a vendor by its exact name; a name differing only in case is another vendor', async () => {
      const first = await createBill();
      const second = await createBill({ number: 'A-1002' });
      const third = await createBill({ vendor: 'miller & sons', number: 'A-1003' });
      const [miller, lowerCase] = vendors();
      expect(vendors().map((vendor) => vendor.name)).to.deep.equal([VENDOR, 'miller & sons']);
      const vendorIdOf = (billId: string) => cli.withDb((db) => (db.prepare('SELECT vendor_id FROM bills WHERE id = ?').get(billId) as { vendor_id: string }).vendor_id);
      expect([vendorIdOf(first), vendorIdOf(second), vendorIdOf(third)]).to.deep.equal([miller!.id, miller!.id, lowerCase!.id]);
      expect(auditRows('vendor.create')).to.have.length(2);
      expect(auditRows('bill.create').map((row) => row.subject_id)).to.deep.equal([first, second, third]);
    });

    it('takes the same number from another vendor, or from the same vendor in another business', async () => {
      await createBill();
      await createBill({ vendor: 'Blue Bottle' });
      const otherBusiness = await cli.createBusiness(accountId, ['--name', 'Ridgeline Landscaping']);
      const otherId = await createBill({ business: otherBusiness, account: accountIdOf('Office Supplies', otherBusiness) });
      expect(billRow(otherId)).to.include({ business_id: otherBusiness, vendor: VENDOR, number: NUMBER });
      // Vendors belong to the account, shared by its businesses.
      expect(vendors().map((vendor) => vendor.name)).to.deep.equal([VENDOR, 'Blue Bottle']);
      expect(tableCounts()).to.include({ bills: 3, journal_entries: 3 });
    });

    it('takes the edges: due on the issue date, and 999,999,999,999,999 cents (one under the ceiling)', async () => {
      const id = await createBill({ dueDate: ISSUE_DATE, amountCents: '999999999999999' });
      expect(billRow(id)).to.include({ issue_date: ISSUE_DATE, due_date: ISSUE_DATE, amount_cents: 999_999_999_999_999n });
      expect(balances('accrual')).to.deep.equal({ officeSupplies: 999_999_999_999_999n, payable: -999_999_999_999_999n, bank: 0n });
    });
  });

  describe('bill pay', () => {
    let billId: string;
    beforeEach(async () => {
      billId = await createBill();
    });

    it('pays in part, then in full: three lines per payment, paid_cents the sum, closed_on the final payment date', async () => {
      const partial = await cli.run(payArgs(billId, '50000', '2026-03-10'));
      expectOk(partial);
      expect(partial.stdout).to.equal('Paid $500.00 on bill A-1001 from Miller & Sons; $750.00 still owed.\n');
      expect(billRow(billId)).to.include({ paid_cents: 50_000n, closed_on: null });

      const final = await cli.run(payArgs(billId, '75000', '2026-03-12'));
      expectOk(final);
      expect(final.stdout).to.equal('Paid $750.00 on bill A-1001 from Miller & Sons; it is paid in full.\n');
      expect(billRow(billId)).to.include({ amount_cents: AMOUNT_CENTS, paid_cents: AMOUNT_CENTS, closed_on: '2026-03-12' });

      const rows = payments(billId);
      expect(rows.map(({ amount_cents, paid_on, created_at }) => ({ amount_cents, paid_on, created_at }))).to.deep.equal([
        { amount_cents: 50_000n, paid_on: '2026-03-10', created_at: '2026-03-15T12:00:00.000Z' },
        { amount_cents: 75_000n, paid_on: '2026-03-12', created_at: '2026-03-15T12:00:00.000Z' },
      ]);
      for (const [payment, amountCents] of [
        [rows[0]!, 50_000n],
        [rows[1]!, 75_000n],
      ] as const) {
        expect(entry(payment.journal_entry_id)).to.deep.include({
          business_id: businessId,
          entry_date: payment.paid_on,
          memo: 'Payment of bill A-1001 to Miller & Sons',
          source_type: 'bill_payment',
          source_id: payment.id,
          reverses_entry_id: null,
          line_count: 3n,
          actor: 'cli',
        });
        expect(linesOf(payment.journal_entry_id)).to.deep.equal([
          { account: 'Accounts Payable', direction: 'debit', amountCents, basis: 'accrual' },
          { account: 'Office Supplies', direction: 'debit', amountCents, basis: 'cash' },
          { account: 'Business Checking', direction: 'credit', amountCents, basis: 'both' },
        ]);
      }
      // The bill's own entry is left as it was.
      expect(linesOf(billRow(billId).journal_entry_id)).to.deep.equal([
        { account: 'Office Supplies', direction: 'debit', amountCents: AMOUNT_CENTS, basis: 'accrual' },
        { account: 'Accounts Payable', direction: 'credit', amountCents: AMOUNT_CENTS, basis: 'accrual' },
      ]);

      const audits = auditRows('bill.payment');
      expect(audits.map(({ tenant_id, business_id, actor_type, subject_type, subject_id, detail_json }) => ({
        tenant_id,
        business_id,
        actor_type,
        subject_type,
        subject_id,
        detail: JSON.parse(detail_json) as unknown,
      }))).to.deep.equal([
        { tenant_id: accountId, business_id: businessId, actor_type: 'cli', subject_type: 'bill_payment', subject_id: rows[0]!.id, detail: { billId, amountCents: '50000', date: '2026-03-10' } },
        { tenant_id: accountId, business_id: businessId, actor_type: 'cli', subject_type: 'bill_payment', subject_id: rows[1]!.id, detail: { billId, amountCents: '75000', date: '2026-03-12' } },
      ]);
    });

    it('prints one JSON object with --json: the payment id and the bill as it now stands', async () => {
      const first = await cli.run(['--json', ...payArgs(billId, '50000', '2026-03-10')]);
      expectOk(first);
      const firstPayment = parseOneObject<Record<string, unknown>>(first.stdout);
      const bill = { id: billId, businessId, vendor: VENDOR, number: NUMBER, issueDate: ISSUE_DATE, dueDate: DUE_DATE, amountCents: '125000' };
      expect(firstPayment).to.deep.equal({ paymentId: payments(billId)[0]!.id, ...bill, paidCents: '50000', owedCents: '75000' });

      const second = await cli.run(['--json', ...payArgs(billId, '75000', '2026-03-12')]);
      expectOk(second);
      expect(parseOneObject(second.stdout)).to.deep.equal({ paymentId: payments(billId)[1]!.id, ...bill, paidCents: '125000', owedCents: '0' });
    });

    it('closes the bill on the latest payment date, also when the last payment recorded is dated earlier', async () => {
      await pay(billId, '75000', '2026-03-12');
      expect(billRow(billId)).to.include({ paid_cents: 75_000n, closed_on: null });
      await pay(billId, '50000', '2026-03-05');
      expect(billRow(billId)).to.include({ paid_cents: AMOUNT_CENTS, closed_on: '2026-03-12' });
    });

    it('dates a payment today (UTC, from the clock) without --date, and takes the issue date and today as edges', async () => {
      cli.clock.set('2026-03-20T23:30:00.000Z');
      const { paymentId } = await pay(billId, '100');
      expect(payments(billId).map((row) => [row.id, row.paid_on])).to.deep.equal([[paymentId, '2026-03-20']]);
      expect(entry(payments(billId)[0]!.journal_entry_id).entry_date).to.equal('2026-03-20');
      expect(JSON.parse(auditRows('bill.payment')[0]!.detail_json)).to.deep.include({ date: '2026-03-20' });

      await pay(billId, '200', ISSUE_DATE);
      await pay(billId, '124700', '2026-03-20');
      expect(payments(billId).map((row) => row.paid_on)).to.deep.equal(['2026-03-20', ISSUE_DATE, '2026-03-20']);
      expect(billRow(billId)).to.include({ paid_cents: AMOUNT_CENTS, closed_on: '2026-03-20' });
    });

    it('moves the expense into the cash view as it is paid; once paid in full both views show it, payable zero, bank -1,250.00', async () => {
      await pay(billId, '50000', '2026-03-10');
      expect(balances('accrual')).to.deep.equal({ officeSupplies: 125_000n, payable: -75_000n, bank: -50_000n });
      expect(balances('cash')).to.deep.equal({ officeSupplies: 50_000n, payable: 0n, bank: -50_000n });

      await pay(billId, '75000', '2026-03-12');
      expect(balances('accrual')).to.deep.equal({ officeSupplies: 125_000n, payable: 0n, bank: -125_000n });
      expect(balances('cash')).to.deep.equal({ officeSupplies: 125_000n, payable: 0n, bank: -125_000n });
      // Both views balance: accrual 125,000 + 125,000 debited (expense, payable), cash 125,000 (expense).
      expect(totals('accrual')).to.deep.equal({ debitCents: 250_000n, creditCents: 250_000n });
      expect(totals('cash')).to.deep.equal({ debitCents: 125_000n, creditCents: 125_000n });
      // Dated views: on the issue date the cash view is still empty.
      cli.withDb((db) => {
        expect(ledgerTotals(db, businessId, 'cash', '2026-03-09')).to.deep.equal({ debitCents: 0n, creditCents: 0n });
        expect(ledgerTotals(db, businessId, 'accrual', '2026-03-09')).to.deep.equal({ debitCents: 125_000n, creditCents: 125_000n });
      });
    });
  });

  describe('refusals (exit 2, one stderr line naming the flag, nothing written)', () => {
    describe('bill create', () => {
      it('an unknown business, and a business id that is not an id', async () => {
        await expectRefused(createArgs({ business: UNKNOWN_ID }), '--business: no such business.');
        await expectRefused(
          createArgs({ business: 'lakeside' }),
          "option '--business <id>' argument 'lakeside' is invalid. Must be an id (a UUID, as printed when it was created).",
        );
      });

      it('a missing required flag', async () => {
        const args = createArgs();
        for (const [flag, spec] of [
          ['--vendor', '--vendor <name>'],
          ['--number', '--number <text>'],
          ['--issue-date', '--issue-date <YYYY-MM-DD>'],
          ['--due-date', '--due-date <YYYY-MM-DD>'],
          ['--amount-cents', '--amount-cents <cents>'],
          ['--account', '--account <id>'],
          ['--business', '--business <id>'],
        ] as const) {
          const at = args.indexOf(flag);
          await expectRefused([...args.slice(0, at), ...args.slice(at + 2)], `required option '${spec}' not specified`);
        }
      });

      it('an amount that is not whole cents written as digits', async () => {
        for (const amount of ['12.50', '-100', '1e5', '$100', '12345678901234567']) {
          await expectRefused(
            createArgs({ amountCents: amount }),
            `option '--amount-cents <cents>' argument '${amount}' is invalid. Must be whole cents written as digits (e.g. 125000 for $1,250.00).`,
          );
        }
      });

      it('an amount of 0 cents, or of 10^15 cents (ten trillion dollars) and more', async () => {
        await expectRefused(createArgs({ amountCents: '0' }), '--amount-cents: must be greater than zero');
        await expectRefused(createArgs({ amountCents: '1000000000000000' }), '--amount-cents: must be under ten trillion dollars');
        await expectRefused(createArgs({ amountCents: '9999999999999999' }), '--amount-cents: must be under ten trillion dollars');
      });

      it('a date that is not a real YYYY-MM-DD date', async () => {
        await expectRefused(
          createArgs({ issueDate: '2026-02-30' }),
          "option '--issue-date <YYYY-MM-DD>' argument '2026-02-30' is invalid. Must be a real calendar date written YYYY-MM-DD.",
        );
        await expectRefused(
          createArgs({ dueDate: '1/4/2026' }),
          "option '--due-date <YYYY-MM-DD>' argument '1/4/2026' is invalid. Must be a real calendar date written YYYY-MM-DD.",
        );
      });

      it('a vendor name or number that breaks the name rule', async () => {
        await expectRefused(createArgs({ vendor: '' }), "option '--vendor <name>' argument '' is invalid. Must be a name of 1 to 200 characters: it must not be empty.");
        const long = 'x'.repeat(201);
        await expectRefused(
          createArgs({ number: long }),
          `option '--number <text>' argument '${long}' is invalid. Must be a name of 1 to 200 characters: it must be at most 200 characters.`,
        );
      });

      it('a due date before the issue date', async () => {
        await expectRefused(createArgs({ dueDate: '2026-03-01' }), '--due-date: must not be before the issue date (2026-03-02)');
      });

      it('an account that is a heading, archived, the bank, accounts payable, or of another business', async () => {
        await expectRefused(createArgs({ account: anyAccountId('Operating Expenses') }), '--account: is a heading; choose one of the accounts GET /accounts lists');

        const travel = accountIdOf('Travel');
        cli.withDb((db) => db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(travel));
        await expectRefused(createArgs({ account: travel }), '--account: is archived; choose one of the accounts GET /accounts lists');

        await expectRefused(createArgs({ account: accountIdOf('Business Checking') }), '--account: is the bank account the expense is paid from');
        await expectRefused(
          createArgs({ account: accountIdOf('Accounts Payable') }),
          '--account: is an account Daybook keeps itself (accounts_payable); choose an expense or asset account',
        );

        const otherBusiness = await cli.createBusiness(accountId, ['--name', 'Ridgeline Landscaping']);
        await expectRefused(createArgs({ account: accountIdOf('Office Supplies', otherBusiness) }), '--account: no such account in this business.');
        await expectRefused(createArgs({ account: UNKNOWN_ID }), '--account: no such account in this business.');
      });

      it('a number already recorded for the same vendor in the business (conflict)', async () => {
        const first = await createBill();
        await expectRefused(createArgs({ amountCents: '100' }), `--number: bill A-1001 from Miller & Sons is already recorded (id ${first})`);
        expect(tableCounts()).to.include({ bills: 1, journal_entries: 1 });
      });

      it('an issue date in a locked period', async () => {
        expectOk(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-03-05']));
        await expectRefused(createArgs({ issueDate: '2026-03-05', dueDate: '2026-03-31' }), '--issue-date: 2026-03-05 falls in a closed period (locked through 2026-03-05)');
        // The day after the lock is open.
        await createBill({ issueDate: '2026-03-06' });
      });

      it('any bill while the account is past due on billing, until billing is active again', async () => {
        expectOk(await cli.run(['account', 'set', '--id', accountId, '--billing', 'past_due']));
        await expectRefused(createArgs(), 'billing is past due; the books are read only until it is settled');
        expectOk(await cli.run(['account', 'set', '--id', accountId, '--billing', 'active']));
        await createBill();
      });
    });

    describe('bill pay', () => {
      let billId: string;
      beforeEach(async () => {
        billId = await createBill();
      });

      it('an unknown bill id, and an id that is not an id', async () => {
        await expectRefused(payArgs(UNKNOWN_ID, '100', '2026-03-10'), '--id: no such bill.');
        await expectRefused(payArgs('A-1001', '100', '2026-03-10'), "option '--id <id>' argument 'A-1001' is invalid. Must be an id (a UUID, as printed when it was created).");
      });

      it('missing or bad flags', async () => {
        await expectRefused(['bill', 'pay', '--id', billId], "required option '--amount-cents <cents>' not specified");
        await expectRefused(['bill', 'pay', '--amount-cents', '100'], "required option '--id <id>' not specified");
        await expectRefused(payArgs(billId, '5.00'), "option '--amount-cents <cents>' argument '5.00' is invalid. Must be whole cents written as digits (e.g. 125000 for $1,250.00).");
        await expectRefused(payArgs(billId, '100', '2026-3-10'), "option '--date <YYYY-MM-DD>' argument '2026-3-10' is invalid. Must be a real calendar date written YYYY-MM-DD.");
      });

      it('an amount of 0 cents, or of 10^15 cents and more', async () => {
        await expectRefused(payArgs(billId, '0', '2026-03-10'), '--amount-cents: must be greater than zero');
        await expectRefused(payArgs(billId, '1000000000000000', '2026-03-10'), '--amount-cents: must be under ten trillion dollars');
      });

      it('more than is still owed, by one cent', async () => {
        await expectRefused(payArgs(billId, '125001', '2026-03-10'), '--amount-cents: is more than the $1,250.00 (125000 cents) still owed on the bill');
        await pay(billId, '50000', '2026-03-10');
        await expectRefused(payArgs(billId, '75001', '2026-03-11'), '--amount-cents: is more than the $750.00 (75000 cents) still owed on the bill');
        expect(billRow(billId)).to.include({ paid_cents: 50_000n, closed_on: null });
      });

      it('a bill already paid in full (conflict)', async () => {
        await pay(billId, '125000', '2026-03-10');
        await expectRefused(payArgs(billId, '1', '2026-03-11'), '--id: bill A-1001 from Miller & Sons is paid in full');
        expect(billRow(billId)).to.include({ paid_cents: AMOUNT_CENTS, closed_on: '2026-03-10' });
      });

      it("a payment dated before the bill's issue date, or after today", async () => {
        await expectRefused(payArgs(billId, '100', '2026-03-01'), "--date: must not be before the bill's issue date (2026-03-02)");
        await expectRefused(payArgs(billId, '100', '2026-03-16'), '--date: must not be after today (2026-03-15): record a payment once it is made');
      });

      it('a payment dated in a locked period, given or defaulted to today', async () => {
        expectOk(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-03-05']));
        await expectRefused(payArgs(billId, '100', '2026-03-04'), '--date: 2026-03-04 falls in a closed period (locked through 2026-03-05)');
        expectOk(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-03-15']));
        await expectRefused(payArgs(billId, '100'), '--date: 2026-03-15 falls in a closed period (locked through 2026-03-15)');
      });

      it("a payment whose bill's account was archived since names --id, the flag pay has", async () => {
        cli.withDb((db) => db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(officeSupplies));
        await expectRefused(payArgs(billId, '100', '2026-03-10'), "--id: the bill's account (Office Supplies) is archived; it cannot take the payment");
      });

      it('any payment while the account is past due on billing', async () => {
        expectOk(await cli.run(['account', 'set', '--id', accountId, '--billing', 'past_due']));
        await expectRefused(payArgs(billId, '100', '2026-03-10'), 'billing is past due; the books are read only until it is settled');
        expectOk(await cli.run(['account', 'set', '--id', accountId, '--billing', 'active']));
        await pay(billId, '100', '2026-03-10');
      });
    });
  });

  describe('the database guards', () => {
    let billId: string;
    beforeEach(async () => {
      billId = await createBill();
      await pay(billId, '50000', '2026-03-10');
    });

    /** Runs `sql` on the books and expects a trigger to refuse it with `message`, leaving the bill and its payments as they were. */
    function expectTriggerRefuses(sql: string, params: readonly unknown[], message: string): void {
      const bill = billRow(billId);
      const paid = payments(billId);
      cli.withDb((db) => expect(() => db.prepare(sql).run(...params)).to.throw(message));
      expect(billRow(billId)).to.deep.equal(bill);
      expect(payments(billId)).to.deep.equal(paid);
    }

    it("refuses an UPDATE of a bill's amount, or any of its terms", async () => {
      const keeps = 'a bill keeps its vendor, number, dates, amount, account and posting';
      expectTriggerRefuses('UPDATE bills SET amount_cents = 100000 WHERE id = ?', [billId], keeps);
      expectTriggerRefuses("UPDATE bills SET due_date = '2026-05-01' WHERE id = ?", [billId], keeps);
      expectTriggerRefuses("UPDATE bills SET number = 'A-9999' WHERE id = ?", [billId], keeps);
      expectTriggerRefuses('UPDATE bills SET ledger_account_id = ? WHERE id = ?', [accountIdOf('Travel'), billId], keeps);
    });

    it('refuses a DELETE of a bill or of a bill payment, and any UPDATE of a payment', async () => {
      expectTriggerRefuses('DELETE FROM bills WHERE id = ?', [billId], 'bills are kept; they are part of the books');
      expectTriggerRefuses('DELETE FROM bill_payments WHERE bill_id = ?', [billId], 'bill payments are immutable');
      expectTriggerRefuses('UPDATE bill_payments SET amount_cents = 1 WHERE bill_id = ?', [billId], 'bill payments are immutable');
    });

    it('keeps paid_cents the sum of the payments', async () => {
      const sum = 'a bill\'s paid amount is the sum of its recorded payments';
      expectTriggerRefuses('UPDATE bills SET paid_cents = 0 WHERE id = ?', [billId], sum);
      expectTriggerRefuses('UPDATE bills SET paid_cents = 125000 WHERE id = ?', [billId], sum);
      expectTriggerRefuses('UPDATE bills SET paid_cents = paid_cents + 1 WHERE id = ?', [billId], sum);
      // Writing the sum it already is passes.
      cli.withDb((db) => db.prepare('UPDATE bills SET paid_cents = 50000 WHERE id = ?').run(billId));
      expect(billRow(billId).paid_cents).to.equal(50_000n);
    });

    it('refuses an INSERT of a bill already paid or closed: payments come through bill_payments', async () => {
      const start = 'a bill starts unpaid; payments are recorded in bill_payments';
      const copy = (paid: number, closedOn: string | null) => [
        `INSERT INTO bills (id, business_id, vendor_id, number, issue_date, due_date, amount_cents, paid_cents, ledger_account_id, journal_entry_id, created_at, closed_on)
         SELECT '0b8e1f5e-2222-4222-8222-222222222222', business_id, vendor_id, 'A-COPY', issue_date, due_date, amount_cents, ?, ledger_account_id, journal_entry_id, created_at, ?
         FROM bills WHERE id = ?`,
        [paid, closedOn, billId],
      ] as const;
      expectTriggerRefuses(...copy(125_000, null), start);
      expectTriggerRefuses(...copy(0, '2026-03-10'), start);
      expect(cli.withDb((db) => db.prepare("SELECT count(*) AS n FROM bills WHERE number = 'A-COPY'").get())).to.deep.equal({ n: 0n });
    });

    it('refuses an INSERT of a payment over what is owed, or dated before the bill', async () => {
      const within = "a bill payment is at most what is owed, on or after the bill's date";
      const payment = (amount: number, paidOn: string) => [
        `INSERT INTO bill_payments (id, bill_id, amount_cents, paid_on, journal_entry_id, created_at)
         SELECT '0b8e1f5e-3333-4333-8333-333333333333', bill_id, ?, ?, journal_entry_id, created_at FROM bill_payments WHERE bill_id = ?`,
        [amount, paidOn, billId],
      ] as const;
      expectTriggerRefuses(...payment(75_001, '2026-03-11'), within);
      expectTriggerRefuses(...payment(100, '2026-02-27'), within);
    });

    it('sets closed_on once, and only when paid in full', async () => {
      const once = 'a bill is closed once, when it is paid in full';
      expectTriggerRefuses("UPDATE bills SET closed_on = '2026-03-10' WHERE id = ?", [billId], once);
      await pay(billId, '75000', '2026-03-12');
      expectTriggerRefuses("UPDATE bills SET closed_on = '2026-03-13' WHERE id = ?", [billId], once);
      expectTriggerRefuses('UPDATE bills SET closed_on = NULL WHERE id = ?', [billId], once);
      expect(billRow(billId).closed_on).to.equal('2026-03-12');
    });
  });
});
