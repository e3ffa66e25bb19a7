import { expect } from 'chai';
import { lockPeriod } from '../../src/books/periods.js';
import type { TestApp, TestResponse } from '../support/app.js';
import { buildApiTenant, countRows, expectError, expectInvalid, setTenant, type ApiTenant, useFreshTenantPerTest } from '../support/api.js';
import { accountIdByName, accountIdByRole, anyAccountIdByName, buildBusiness, buildKey, TEST_ACTOR } from '../support/factories.js';

const START = '2026-03-15T12:00:00.000Z';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NO_SUCH_ID = '0b9c3c52-6f1e-4c1a-9d59-4c1f0e7d2a11';

interface EntryRow {
  id: string;
  business_id: string;
  entry_date: string;
  source_type: string;
  source_id: string;
}

interface LineRow {
  line_no: bigint;
  ledger_account_id: string;
  entry_date: string;
  direction: string;
  amount_cents: bigint;
  basis: string;
}

interface TransactionRow {
  business_id: string;
  txn_date: string;
  amount_cents: bigint;
  direction: string;
  vendor_id: string | null;
  ledger_account_id: string | null;
  status: string;
  source: string;
  description: string | null;
  journal_entry_id: string | null;
}

interface ExpenseRow {
  business_id: string;
  vendor_id: string;
  ledger_account_id: string;
  expense_date: string;
  amount_cents: bigint;
  memo: string | null;
  transaction_id: string | null;
  journal_entry_id: string;
}

/** What a POST /expenses may leave behind in one tenant's books. */
interface Written {
  vendors: number;
  entries: number;
  transactions: number;
  expenses: number;
  audit: number;
}

describe('POST /expenses', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  // A fresh account per test: no vendor, lock, billing state or write budget leaks between tests.
  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { plan: 'large' } });

  const accountId = (name: string, businessId = tenant.business.id): string => accountIdByName(app.db, businessId, name);
  const bankId = (businessId = tenant.business.id): string => accountIdByRole(app.db, businessId, 'bank');
  const anyAccountId = (name: string, businessId = tenant.business.id): string => anyAccountIdByName(app.db, businessId, name);

  /** A valid body; an override of `undefined` leaves the field out (JSON.stringify drops it). */
  const expense = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    date: '2026-03-10',
    amountCents: '12345',
    vendorName: 'Staples',
    accountId: accountId('Office Supplies'),
    memo: 'Printer paper',
    ...overrides,
  });
  const post = (body: unknown, headers: Record<string, string> = {}, key = tenant.key): Promise<TestResponse> =>
    app.post('/api/v1/expenses', key, body, headers);

  const written = (t: ApiTenant = tenant): Written => {
    const inBusinesses = 'business_id IN (SELECT id FROM businesses WHERE tenant_id = ?)';
    return {
      vendors: countRows(app.db, 'SELECT count(*) FROM vendors WHERE tenant_id = ?', t.id),
      entries: countRows(app.db, `SELECT count(*) FROM journal_entries WHERE ${inBusinesses}`, t.id),
      transactions: countRows(app.db, `SELECT count(*) FROM transactions WHERE ${inBusinesses}`, t.id),
      expenses: countRows(app.db, `SELECT count(*) FROM expenses WHERE ${inBusinesses}`, t.id),
      audit: countRows(app.db, 'SELECT count(*) FROM audit_log WHERE tenant_id = ?', t.id),
    };
  };
  const vendorsNamed = (name: string, t: ApiTenant = tenant): number =>
    countRows(app.db, 'SELECT count(*) FROM vendors WHERE tenant_id = ? AND name = ?', t.id, name);

  const entryOf = (expenseId: string): EntryRow => {
    const rows = app.db
      .prepare("SELECT id, business_id, entry_date, source_type, source_id FROM journal_entries WHERE source_type = 'expense' AND source_id = ?")
      .all(expenseId) as EntryRow[];
    expect(rows, `journal entries of expense ${expenseId}`).to.have.length(1);
    return rows[0]!;
  };
  const linesOf = (entryId: string): LineRow[] =>
    app.db
      .prepare('SELECT line_no, ledger_account_id, entry_date, direction, amount_cents, basis FROM journal_lines WHERE entry_id = ? ORDER BY line_no')
      .all(entryId) as LineRow[];
  const transactionRow = (id: string): TransactionRow =>
    app.db
      .prepare(
        'SELECT business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, journal_entry_id FROM transactions WHERE id = ?',
      )
      .get(id) as TransactionRow;
  const expenseRow = (id: string): ExpenseRow =>
    app.db
      .prepare(
        'SELECT business_id, vendor_id, ledger_account_id, expense_date, amount_cents, memo, transaction_id, journal_entry_id FROM expenses WHERE id = ?',
      )
      .get(id) as ExpenseRow;
  const vendorIdNamed = (name: string, t: ApiTenant = tenant): string =>
    (app.db.prepare('SELECT id FROM vendors WHERE tenant_id = ? AND name = ?').get(t.id, name) as { id: string }).id;

  /** Sum of debits equals sum of credits over the business's journal lines, in the accrual and the cash view. */
  const expectBalanced = (businessId: string): void => {
    for (const view of ['accrual', 'cash'] as const) {
      const row = app.db
        .prepare(
          `SELECT coalesce(sum(CASE WHEN direction = 'debit' THEN amount_cents END), 0) AS debit,
                  coalesce(sum(CASE WHEN direction = 'credit' THEN amount_cents END), 0) AS credit
           FROM journal_lines WHERE business_id = ? AND basis IN ('both', ?)`,
        )
        .get(businessId, view) as { debit: bigint; credit: bigint };
      expect(row.debit, `${view} view debits vs credits of business ${businessId}`).to.equal(row.credit);
    }
  };

  /** A 201 {expenseId, transactionId} whose business's books still balance. */
  const expectCreated = (res: TestResponse, businessId = tenant.business.id): { expenseId: string; transactionId: string } => {
    expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.equal(201);
    expect(Object.keys(res.body).sort()).to.deep.equal(['expenseId', 'transactionId']);
    expect(res.body.expenseId).to.match(UUID);
    expect(res.body.transactionId).to.match(UUID);
    expect(expenseRow(res.body.expenseId)?.business_id, 'the expense is in the expected business').to.equal(businessId);
    expectBalanced(businessId);
    return res.body;
  };

  const usd = (cents: string, formatted: string) => ({ cents, formatted, currency: 'USD' });

  describe('success', () => {
    it('records the expense (201 {expenseId, transactionId}, uuids, exactly those keys)', async () => {
      const res = await post(expense());
      const { expenseId, transactionId } = expectCreated(res);
      expect(expenseId).to.not.equal(transactionId);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      expect(res.headers['idempotent-replayed']).to.equal(undefined);
    });

    it('posts a journal entry (source expense, source_id = expenseId) debiting the account and crediting the bank by amountCents on the date', async () => {
      const { expenseId } = expectCreated(await post(expense({ date: '2026-03-02', amountCents: '4599' })));
      const entry = entryOf(expenseId);
      expect(entry).to.deep.include({ business_id: tenant.business.id, entry_date: '2026-03-02', source_type: 'expense', source_id: expenseId });
      expect(linesOf(entry.id)).to.deep.equal([
        { line_no: 1n, ledger_account_id: accountId('Office Supplies'), entry_date: '2026-03-02', direction: 'debit', amount_cents: 4599n, basis: 'both' },
        { line_no: 2n, ledger_account_id: bankId(), entry_date: '2026-03-02', direction: 'credit', amount_cents: 4599n, basis: 'both' },
      ]);
    });

    it('writes a transactions row: source manual, status accepted, direction out, description = memo, the vendor and the account', async () => {
      const { expenseId, transactionId } = expectCreated(await post(expense({ memo: 'Toner, 2 boxes' })));
      expect(transactionRow(transactionId)).to.deep.equal({
        business_id: tenant.business.id,
        txn_date: '2026-03-10',
        amount_cents: 12345n,
        direction: 'out',
        vendor_id: vendorIdNamed('Staples'),
        ledger_account_id: accountId('Office Supplies'),
        status: 'accepted',
        source: 'manual',
        description: 'Toner, 2 boxes',
        journal_entry_id: entryOf(expenseId).id,
      });
    });

    it('writes an expenses row tying the vendor, account, transaction and entry together', async () => {
      const { expenseId, transactionId } = expectCreated(await post(expense({ memo: 'Toner, 2 boxes' })));
      expect(expenseRow(expenseId)).to.deep.equal({
        business_id: tenant.business.id,
        vendor_id: vendorIdNamed('Staples'),
        ledger_account_id: accountId('Office Supplies'),
        expense_date: '2026-03-10',
        amount_cents: 12345n,
        memo: 'Toner, 2 boxes',
        transaction_id: transactionId,
        journal_entry_id: entryOf(expenseId).id,
      });
    });

    it('puts nothing in the review queue (no AI categorization)', async () => {
      expectCreated(await post(expense()));
      expect(countRows(app.db, 'SELECT count(*) FROM review_queue_items WHERE business_id = ?', tenant.business.id)).to.equal(0);
    });

    it('records expense.create in the audit log under the key\'s name (authentication rule 9)', async () => {
      const { expenseId } = expectCreated(await post(expense()));
      const rows = app.db
        .prepare('SELECT tenant_id, business_id, actor_type, actor_id, actor_name, action, subject_type FROM audit_log WHERE subject_id = ?')
        .all(expenseId);
      expect(rows).to.deep.equal([
        {
          tenant_id: tenant.id,
          business_id: tenant.business.id,
          actor_type: 'api_key',
          actor_id: tenant.keys[0]!.id,
          actor_name: tenant.keys[0]!.name,
          action: 'expense.create',
          subject_type: 'expense',
        },
      ]);
    });

    it('adds exactly one vendor, entry, transaction and expense, and two audit rows (vendor.create and expense.create) for a new vendor', async () => {
      const before = written();
      expectCreated(await post(expense({ vendorName: 'Brand New Vendor' })));
      expect(written()).to.deep.equal({
        vendors: before.vendors + 1,
        entries: before.entries + 1,
        transactions: before.transactions + 1,
        expenses: before.expenses + 1,
        audit: before.audit + 2,
      });
    });

    it('shows the expense in GET /transactions/{transactionId} (vendor, account, accepted, manual, memo, two balancing lines)', async () => {
      const { transactionId } = expectCreated(await post(expense({ amountCents: '123456', memo: 'Annual licence' })));
      const res = await app.get(`/api/v1/transactions/${transactionId}`, tenant.key);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({
        id: transactionId,
        date: '2026-03-10',
        amount: usd('123456', '$1,234.56'),
        vendor: 'Staples',
        account: 'Office Supplies',
        status: 'accepted',
        source: 'manual',
        description: 'Annual licence',
        rationale: null,
        lines: [
          { account: 'Office Supplies', debit: usd('123456', '$1,234.56'), credit: null },
          { account: 'Business Checking', debit: null, credit: usd('123456', '$1,234.56') },
        ],
      });
    });

    it('lists the expense in GET /transactions for its vendor', async () => {
      const { transactionId } = expectCreated(await post(expense({ vendorName: 'Listed Vendor' })));
      const res = await app.get(`/api/v1/transactions?vendorId=${vendorIdNamed('Listed Vendor')}`, tenant.key);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.transactions.map((t: { id: string }) => t.id)).to.deep.equal([transactionId]);
    });

    it('shows both lines for a cash-basis business too', async () => {
      const cash = buildBusiness(app.db, app.clock, { tenantId: tenant.id, basis: 'cash' });
      const { transactionId } = expectCreated(
        await post(expense({ entityId: cash.id, accountId: accountId('Rent', cash.id), amountCents: '150000' })),
        cash.id,
      );
      const res = await app.get(`/api/v1/transactions/${transactionId}`, tenant.key);
      expect(res.body.lines).to.deep.equal([
        { account: 'Rent', debit: usd('150000', '$1,500.00'), credit: null },
        { account: 'Business Checking', debit: null, credit: usd('150000', '$1,500.00') },
      ]);
    });

    it('keeps the books balanced in both views across several expenses', async () => {
      for (const [amountCents, name] of [
        ['1', 'Travel'],
        ['999', 'Meals'],
        ['250000', 'Rent'],
        ['31415', 'Equipment'],
      ] as const) {
        expectCreated(await post(expense({ amountCents, accountId: accountId(name) })));
      }
      const bank = app.db
        .prepare("SELECT sum(amount_cents) AS credit FROM journal_lines WHERE ledger_account_id = ? AND direction = 'credit'")
        .get(bankId()) as { credit: bigint };
      expect(bank.credit).to.equal(1n + 999n + 250000n + 31415n);
    });

    it('accepts an upper-case accountId (uuids are case-insensitive) and posts the stored account', async () => {
      const { expenseId } = expectCreated(await post(expense({ accountId: accountId('Travel').toUpperCase() })));
      expect(expenseRow(expenseId).ledger_account_id).to.equal(accountId('Travel'));
    });
  });

  describe('vendorName and vendorId', () => {
    it('reuses the vendor whose name matches exactly (no new vendors row)', async () => {
      const first = expectCreated(await post(expense({ vendorName: 'Acme Supply' })));
      const before = written();
      const second = expectCreated(await post(expense({ vendorName: 'Acme Supply', amountCents: '500' })));
      expect(written().vendors).to.equal(before.vendors);
      expect(vendorsNamed('Acme Supply')).to.equal(1);
      expect(transactionRow(second.transactionId).vendor_id).to.equal(transactionRow(first.transactionId).vendor_id);
      expect(countRows(app.db, "SELECT count(*) FROM audit_log WHERE tenant_id = ? AND action = 'vendor.create'", tenant.id)).to.equal(1);
    });

    it('creates a new vendor for a name differing only in case (match is case sensitive), audited vendor.create', async () => {
      const first = expectCreated(await post(expense({ vendorName: 'Acme Supply' })));
      const before = written();
      const second = expectCreated(await post(expense({ vendorName: 'ACME supply' })));
      expect(written().vendors).to.equal(before.vendors + 1);
      const newVendorId = vendorIdNamed('ACME supply');
      expect(newVendorId).to.not.equal(vendorIdNamed('Acme Supply'));
      expect(transactionRow(second.transactionId).vendor_id).to.equal(newVendorId);
      expect(transactionRow(first.transactionId).vendor_id).to.equal(vendorIdNamed('Acme Supply'));
      const audit = app.db
        .prepare('SELECT action, actor_name, detail_json FROM audit_log WHERE subject_id = ?')
        .all(newVendorId) as { action: string; actor_name: string; detail_json: string }[];
      expect(audit.map((row) => [row.action, row.actor_name, JSON.parse(row.detail_json)])).to.deep.equal([
        ['vendor.create', tenant.keys[0]!.name, { name: 'ACME supply' }],
      ]);
    });

    it('creates a vendor for a new name in the same write, and it is listed by GET /vendors', async () => {
      const { expenseId } = expectCreated(await post(expense({ vendorName: 'Fresh Vendor LLC' })));
      const vendorId = vendorIdNamed('Fresh Vendor LLC');
      expect(expenseRow(expenseId).vendor_id).to.equal(vendorId);
      const vendorRow = app.db.prepare('SELECT tenant_id, name, archived FROM vendors WHERE id = ?').get(vendorId);
      expect(vendorRow).to.deep.equal({ tenant_id: tenant.id, name: 'Fresh Vendor LLC', archived: 0n });
      const listed = await app.get('/api/v1/vendors', tenant.key);
      expect(listed.status).to.equal(200);
      expect(listed.body.vendors).to.deep.equal([{ id: vendorId, name: 'Fresh Vendor LLC', is1099Eligible: false }]);
    });

    it('accepts vendorId of the tenant\'s own vendor (no new vendor)', async () => {
      expectCreated(await post(expense({ vendorName: 'Known Vendor' })));
      const vendorId = vendorIdNamed('Known Vendor');
      const before = written();
      const { transactionId } = expectCreated(await post(expense({ vendorName: undefined, vendorId, amountCents: '777' })));
      expect(written().vendors).to.equal(before.vendors);
      expect(transactionRow(transactionId).vendor_id).to.equal(vendorId);
      const shown = await app.get(`/api/v1/transactions/${transactionId}`, tenant.key);
      expect(shown.body.vendor).to.equal('Known Vendor');
    });

    it('refuses an unknown vendorId (404 not_found "vendorId:") and writes nothing', async () => {
      const before = written();
      expectError(await post(expense({ vendorName: undefined, vendorId: NO_SUCH_ID })), 404, 'not_found', 'vendorId:');
      expect(written()).to.deep.equal(before);
    });

    it('refuses the vendorId of another tenant\'s vendor (404 not_found "vendorId:") and writes nothing in either', async () => {
      const other = buildApiTenant(app);
      expectCreated(await post(expense({ vendorName: 'Their Vendor', accountId: accountId('Office Supplies', other.business.id) }), {}, other.key), other.business.id);
      const theirVendorId = vendorIdNamed('Their Vendor', other);
      const before = [written(), written(other)];
      expectError(await post(expense({ vendorName: undefined, vendorId: theirVendorId })), 404, 'not_found', 'vendorId:');
      expect([written(), written(other)]).to.deep.equal(before);
    });

    it('refuses both vendorName and vendorId (422 validation_failed "vendorId:")', async () => {
      expectCreated(await post(expense({ vendorName: 'Both Vendor' })));
      const before = written();
      expectInvalid(await post(expense({ vendorName: 'Both Vendor', vendorId: vendorIdNamed('Both Vendor') })), 'vendorId');
      expect(written()).to.deep.equal(before);
    });

    it('refuses neither vendorName nor vendorId (422 validation_failed "vendorName:")', async () => {
      const before = written();
      expectInvalid(await post(expense({ vendorName: undefined })), 'vendorName');
      expect(written()).to.deep.equal(before);
    });

    const badNames: Array<[label: string, vendorName: unknown]> = [
      ['an empty vendorName', ''],
      ['a blank vendorName', '   '],
      ['a vendorName with a control character', 'Bell\u0007Vendor'],
      ['a vendorName with a newline', 'Two\nLines'],
      ['a vendorName with a bidi override', 'Evil\u202eVendor'],
      ['a vendorName over 200 characters', 'v'.repeat(201)],
      ['a vendorName that is a number', 42],
      ['a null vendorName', null],
    ];
    for (const [label, vendorName] of badNames) {
      it(`refuses ${label} (422 validation_failed "vendorName:"), creating no vendor`, async () => {
        const before = written();
        expectInvalid(await post(expense({ vendorName })), 'vendorName');
        expect(written()).to.deep.equal(before);
      });
    }

    it('accepts a vendorName of exactly 200 characters, counted in characters (201)', async () => {
      expectCreated(await post(expense({ vendorName: 'v'.repeat(200) })));
      expectCreated(await post(expense({ vendorName: '\u00e9'.repeat(200) })));
      expectCreated(await post(expense({ vendorName: '\u{1F600}'.repeat(200) })));
      expect(vendorsNamed('v'.repeat(200)) + vendorsNamed('\u00e9'.repeat(200)) + vendorsNamed('\u{1F600}'.repeat(200))).to.equal(3);
    });

    it('keeps vendors per account: another account\'s vendor of the same name is not reused', async () => {
      const other = buildApiTenant(app);
      expectCreated(await post(expense({ vendorName: 'Shared Name Vendor', accountId: accountId('Meals', other.business.id) }), {}, other.key), other.business.id);
      const { transactionId } = expectCreated(await post(expense({ vendorName: 'Shared Name Vendor' })));
      expect(transactionRow(transactionId).vendor_id).to.equal(vendorIdNamed('Shared Name Vendor'));
      expect(vendorIdNamed('Shared Name Vendor')).to.not.equal(vendorIdNamed('Shared Name Vendor', other));
    });

    it('matches the name exactly, not by Unicode form: a decomposed é makes another vendor', async () => {
      expectCreated(await post(expense({ vendorName: 'Caf\u00e9 Noir' })));
      expectCreated(await post(expense({ vendorName: 'Cafe\u0301 Noir' })));
      expect(vendorsNamed('Caf\u00e9 Noir') + vendorsNamed('Cafe\u0301 Noir')).to.equal(2);
    });

    it('refuses a vendorId that is not a uuid (422 "vendorId:")', async () => {
      expectInvalid(await post(expense({ vendorName: undefined, vendorId: 'not-a-uuid' })), 'vendorId');
    });
  });

  describe('accountId', () => {
    it('refuses an unknown accountId (404 not_found "accountId:") and writes nothing', async () => {
      const before = written();
      expectError(await post(expense({ accountId: NO_SUCH_ID, vendorName: 'Never Created' })), 404, 'not_found', 'accountId:');
      expect(written()).to.deep.equal(before);
      expect(vendorsNamed('Never Created')).to.equal(0);
    });

    it('refuses an account of another business of the same tenant (404 not_found "accountId:")', async () => {
      const second = buildBusiness(app.db, app.clock, { tenantId: tenant.id });
      const before = written();
      expectError(
        await post(expense({ entityId: tenant.business.id, accountId: accountId('Office Supplies', second.id) })),
        404,
        'not_found',
        'accountId:',
      );
      expect(written()).to.deep.equal(before);
    });

    it('refuses an account of another tenant\'s business (404 not_found "accountId:")', async () => {
      const other = buildApiTenant(app);
      const before = [written(), written(other)];
      expectError(await post(expense({ accountId: accountId('Office Supplies', other.business.id) })), 404, 'not_found', 'accountId:');
      expect([written(), written(other)]).to.deep.equal(before);
    });

    it('refuses a heading account such as Operating Expenses (422 validation_failed "accountId:")', async () => {
      const heading = anyAccountId('Operating Expenses');
      expect((app.db.prepare('SELECT is_heading FROM ledger_accounts WHERE id = ?').get(heading) as { is_heading: bigint }).is_heading).to.equal(1n);
      const before = written();
      expectInvalid(await post(expense({ accountId: heading })), 'accountId');
      expect(written()).to.deep.equal(before);
    });

    it('refuses an archived account (422 validation_failed "accountId:")', async () => {
      const travel = accountId('Travel');
      app.db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(travel);
      const before = written();
      expectInvalid(await post(expense({ accountId: travel })), 'accountId');
      expect(written()).to.deep.equal(before);
    });

    it('refuses the bank account the expense is paid from (422 validation_failed "accountId:")', async () => {
      const before = written();
      expectInvalid(await post(expense({ accountId: bankId() })), 'accountId');
      expect(written()).to.deep.equal(before);
    });

    for (const [name, role] of [
      ['Accounts Receivable', 'accounts_receivable'],
      ['Accounts Payable', 'accounts_payable'],
      ['Sales Tax Payable', 'sales_tax_payable'],
      ['Sales', 'sales'],
      ["Owner's Equity", 'owner_equity'],
      ['Retained Earnings', 'retained_earnings'],
      ['Realized FX Gain or Loss', 'fx_gain_loss'],
      ['Card Payments Clearing', 'card_clearing'],
      ['Customer Deposits', 'customer_deposits'],
    ]) {
      it(`refuses ${name}, an account Daybook keeps itself (422 validation_failed "accountId:")`, async () => {
        const before = written();
        const res = await post(expense({ accountId: accountId(name!) }));
        expectInvalid(res, 'accountId');
        expect(res.body.error.message).to.contain(role);
        expect(written()).to.deep.equal(before);
      });
    }

    it('accepts Uncategorized Expense and Payment Processing Fees, the system accounts an expense may name (201)', async () => {
      expectCreated(await post(expense({ accountId: accountId('Uncategorized Expense') })));
      // A processor's fee billed apart from a payment (a monthly charge) is the firm's to book.
      expectCreated(await post(expense({ accountId: accountId('Payment Processing Fees') })));
    });

    it('accepts an asset account such as Equipment and posts it as sent (201)', async () => {
      const equipment = accountId('Equipment');
      const { expenseId, transactionId } = expectCreated(await post(expense({ accountId: equipment, amountCents: '250000' })));
      expect(linesOf(entryOf(expenseId).id).map((line) => [line.ledger_account_id, line.direction, line.amount_cents])).to.deep.equal([
        [equipment, 'debit', 250000n],
        [bankId(), 'credit', 250000n],
      ]);
      expect(transactionRow(transactionId).ledger_account_id).to.equal(equipment);
    });

    it('refuses a missing accountId (422 "accountId:")', async () => {
      expectInvalid(await post(expense({ accountId: undefined })), 'accountId');
    });

    it('refuses an accountId that is not a uuid (422 "accountId:")', async () => {
      expectInvalid(await post(expense({ accountId: '6160' })), 'accountId');
    });
  });

  describe('amountCents', () => {
    const invalid: Array<[label: string, amountCents: unknown]> = [
      ["'0'", '0'],
      ["'000'", '000'],
      ['a JSON number', 12345],
      ["'12.50'", '12.50'],
      ['a negative amount', '-500'],
      ["'1000000000000000' (the ceiling)", '1000000000000000'],
      ['an amount far over the ceiling', '99999999999999999999'],
      ['an empty string', ''],
      ["'1e5'", '1e5'],
      ["' 500'", ' 500'],
      ['31 digits', '1'.repeat(31)],
      ['null', null],
    ];
    for (const [label, amountCents] of invalid) {
      it(`refuses ${label} (422 validation_failed "amountCents:") and writes nothing`, async () => {
        const before = written();
        expectInvalid(await post(expense({ amountCents, vendorName: 'Amount Vendor' })), 'amountCents');
        expect(written()).to.deep.equal(before);
      });
    }

    it('refuses a missing amountCents (422 "amountCents:")', async () => {
      expectInvalid(await post(expense({ amountCents: undefined })), 'amountCents');
    });

    it("accepts '999999999999999', just under the ceiling (201)", async () => {
      const { expenseId, transactionId } = expectCreated(await post(expense({ amountCents: '999999999999999' })));
      expect(expenseRow(expenseId).amount_cents).to.equal(999999999999999n);
      expect(linesOf(entryOf(expenseId).id).map((line) => line.amount_cents)).to.deep.equal([999999999999999n, 999999999999999n]);
      const shown = await app.get(`/api/v1/transactions/${transactionId}`, tenant.key);
      expect(shown.body.amount).to.deep.equal(usd('999999999999999', '$9,999,999,999,999.99'));
    });

    it("reads leading zeros as the number they spell ('0500' is 500 cents)", async () => {
      const { expenseId, transactionId } = expectCreated(await post(expense({ amountCents: '0500' })));
      expect(expenseRow(expenseId).amount_cents).to.equal(500n);
      expect(transactionRow(transactionId).amount_cents).to.equal(500n);
      expect(linesOf(entryOf(expenseId).id).map((line) => line.amount_cents)).to.deep.equal([500n, 500n]);
    });

    it("accepts '1', one cent (201)", async () => {
      const { expenseId } = expectCreated(await post(expense({ amountCents: '1' })));
      expect(expenseRow(expenseId).amount_cents).to.equal(1n);
    });
  });

  describe('date', () => {
    const invalid: Array<[label: string, date: unknown]> = [
      ["a date that does not exist ('2026-02-30')", '2026-02-30'],
      ["29 February of a common year ('2026-02-29')", '2026-02-29'],
      ["month 13 ('2026-13-01')", '2026-13-01'],
      ["a date without zero padding ('2026-3-1')", '2026-3-1'],
      ['a date-time', '2026-03-10T00:00:00Z'],
      ['a number', 20260310],
    ];
    for (const [label, date] of invalid) {
      it(`refuses ${label} (422 validation_failed "date:") and writes nothing`, async () => {
        const before = written();
        expectInvalid(await post(expense({ date })), 'date');
        expect(written()).to.deep.equal(before);
      });
    }

    it('refuses a missing date (422 "date:")', async () => {
      const before = written();
      expectInvalid(await post(expense({ date: undefined })), 'date');
      expect(written()).to.deep.equal(before);
    });

    // The schema's date format takes years 0000 to 0099, but the books' own date check
    // (isIsoDate, through Date.UTC) reads them as 1900 to 1999 and refuses them as bad_date,
    // which the expense command does not map: the caller gets internal_error.
    for (const date of ['0099-01-01', '0000-01-01']) {
      it(`answers a date in the years 0000 to 0099 (${date}) as a refusal naming "date:" or a record, never a 500, and never half-written`, async () => {
        const before = written();
        const res = await post(expense({ date, vendorName: 'Ancient Vendor' }));
        expect(res.status, `status (body: ${res.text.slice(0, 300)})`).to.be.oneOf([201, 422]);
        if (res.status === 422) {
          expectInvalid(res, 'date');
          expect(written()).to.deep.equal(before);
        } else {
          expect(entryOf(expectCreated(res).expenseId).entry_date).to.equal(date);
        }
      });
    }

    it('accepts the first and last dates of years 0100 and 9999', async () => {
      expectCreated(await post(expense({ date: '0100-01-01' })));
      expectCreated(await post(expense({ date: '9999-12-31' })));
    });

    it('accepts 29 February of a leap year and posts on that date', async () => {
      const { expenseId } = expectCreated(await post(expense({ date: '2028-02-29' })));
      expect(entryOf(expenseId).entry_date).to.equal('2028-02-29');
    });
  });

  describe('memo', () => {
    it('refuses a memo over 2000 characters (422 validation_failed "memo:")', async () => {
      const before = written();
      expectInvalid(await post(expense({ memo: 'm'.repeat(2001) })), 'memo');
      expect(written()).to.deep.equal(before);
    });

    it('accepts a memo of exactly 2000 characters, kept as the description', async () => {
      const memo = 'm'.repeat(2000);
      const { expenseId, transactionId } = expectCreated(await post(expense({ memo })));
      expect(transactionRow(transactionId).description).to.equal(memo);
      expect(expenseRow(expenseId).memo).to.equal(memo);
    });

    it('counts memo length in characters, not UTF-16 units (2000 emoji accepted)', async () => {
      const memo = '\u{1F600}'.repeat(2000);
      const { transactionId } = expectCreated(await post(expense({ memo })));
      expect(transactionRow(transactionId).description).to.equal(memo);
    });

    it('leaves the description null when the memo is absent', async () => {
      const { expenseId, transactionId } = expectCreated(await post(expense({ memo: undefined })));
      expect(transactionRow(transactionId).description).to.equal(null);
      expect(expenseRow(expenseId).memo).to.equal(null);
      const shown = await app.get(`/api/v1/transactions/${transactionId}`, tenant.key);
      expect(shown.body.description).to.equal(null);
    });

    it('refuses a null memo (422 "memo:")', async () => {
      expectInvalid(await post(expense({ memo: null })), 'memo');
    });
  });

  describe('period_locked', () => {
    beforeEach(() => {
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
    });

    it('refuses an expense dated on the lock day (409 period_locked) and writes nothing, not even a new vendor', async () => {
      const before = written();
      expectError(await post(expense({ date: '2026-02-28', vendorName: 'Locked Out Vendor' })), 409, 'period_locked');
      expect(written()).to.deep.equal(before);
      expect(vendorsNamed('Locked Out Vendor')).to.equal(0);
    });

    it('refuses an expense dated well inside the closed period (409 period_locked)', async () => {
      expectError(await post(expense({ date: '2025-12-31' })), 409, 'period_locked');
    });

    it('accepts an expense dated the day after the lock (201)', async () => {
      const { expenseId } = expectCreated(await post(expense({ date: '2026-03-01' })));
      expect(entryOf(expenseId).entry_date).to.equal('2026-03-01');
    });

    it('answers period_locked before the amount’s ceiling (a caller can act on it)', async () => {
      expectError(await post(expense({ date: '2026-02-01', amountCents: '1000000000000000' })), 409, 'period_locked');
    });

    it('refuses a zero amount with the body’s form, before the period (422: the document calls it invalid)', async () => {
      expectInvalid(await post(expense({ date: '2026-02-01', amountCents: '0' })), 'amountCents');
    });
  });

  describe('read_only_billing_state', () => {
    it('refuses an expense while billing is past due (402) and writes nothing, not even a new vendor', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const before = written();
      expectError(await post(expense({ vendorName: 'Unpaid Vendor' })), 402, 'read_only_billing_state');
      expect(written()).to.deep.equal(before);
      expect(vendorsNamed('Unpaid Vendor')).to.equal(0);
    });

    it('still serves reads and POST /customers while past due, and expenses again once billing is active (201)', async () => {
      setTenant(app, tenant.id, { billingState: 'past_due' });
      expectError(await post(expense()), 402, 'read_only_billing_state');
      const customer = await app.post('/api/v1/customers', tenant.key, { name: 'Still A Customer' });
      expect(customer.status, customer.text).to.equal(201);
      expect((await app.get(`/api/v1/accounts`, tenant.key)).status).to.equal(200);

      setTenant(app, tenant.id, { billingState: 'active' });
      expectCreated(await post(expense()));
    });
  });

  describe('entity rules', () => {
    it('uses the only business when entityId is omitted and the key reaches one', async () => {
      expectCreated(await post(expense({ entityId: undefined })), tenant.business.id);
    });

    it('accepts the entityId of the tenant\'s business', async () => {
      expectCreated(await post(expense({ entityId: tenant.business.id })), tenant.business.id);
    });

    it('refuses an omitted entityId when the key reaches several businesses (422 validation_failed "entityId:")', async () => {
      const multi = buildApiTenant(app, { businesses: 2 });
      const before = written(multi);
      const res = await post(expense({ accountId: accountId('Office Supplies', multi.businesses[0]!.id) }), {}, multi.key);
      expectInvalid(res, 'entityId');
      expect(written(multi)).to.deep.equal(before);
    });

    it('posts to the named business when the key reaches several', async () => {
      const multi = buildApiTenant(app, { businesses: 2 });
      const target = multi.businesses[1]!;
      const res = await post(expense({ entityId: target.id, accountId: accountId('Office Supplies', target.id) }), {}, multi.key);
      const { expenseId } = expectCreated(res, target.id);
      expect(entryOf(expenseId).business_id).to.equal(target.id);
    });

    it('refuses another entityId from a key limited to one business (403 entity_not_allowed) and writes nothing', async () => {
      const multi = buildApiTenant(app, { businesses: 2 });
      const [granted, other] = multi.businesses as [typeof multi.business, typeof multi.business];
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [granted.id] });
      const before = written(multi);
      const res = await post(expense({ entityId: other.id, accountId: accountId('Office Supplies', other.id) }), {}, limited.key);
      expectError(res, 403, 'entity_not_allowed');
      expect(written(multi)).to.deep.equal(before);
    });

    it('uses the granted business when a key limited to one business omits entityId', async () => {
      const multi = buildApiTenant(app, { businesses: 2 });
      const granted = multi.businesses[1]!;
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [granted.id] });
      const res = await post(expense({ accountId: accountId('Office Supplies', granted.id) }), {}, limited.key);
      expectCreated(res, granted.id);
    });

    it('refuses an omitted entityId from a key limited to two of three businesses (422 "entityId:")', async () => {
      const multi = buildApiTenant(app, { businesses: 3 });
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [multi.businesses[0]!.id, multi.businesses[1]!.id] });
      expectInvalid(await post(expense({ accountId: accountId('Office Supplies', multi.businesses[0]!.id) }), {}, limited.key), 'entityId');
    });

    it('refuses, from an unlimited key, a business of another tenant (404 not_found) and writes nothing in either', async () => {
      const other = buildApiTenant(app);
      const before = [written(), written(other)];
      const res = await post(expense({ entityId: other.business.id, accountId: accountId('Office Supplies', other.business.id) }));
      expectError(res, 404, 'not_found');
      expect([written(), written(other)]).to.deep.equal(before);
    });

    it('refuses an unknown entityId (404 not_found)', async () => {
      expectError(await post(expense({ entityId: NO_SUCH_ID })), 404, 'not_found');
    });

    it('refuses an entityId that is not a uuid (422 "entityId:")', async () => {
      expectInvalid(await post(expense({ entityId: 'main' })), 'entityId');
    });
  });

  describe('access', () => {
    it('refuses a Read only key (403 insufficient_scope) and writes nothing', async () => {
      const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
      const before = written();
      expectError(await post(expense({ vendorName: 'Read Only Vendor' }), {}, readOnly.key), 403, 'insufficient_scope');
      expect(written()).to.deep.equal(before);
    });

    it('refuses a request without a key (401 invalid_key)', async () => {
      const before = written();
      expectError(await app.post('/api/v1/expenses', null, expense()), 401, 'invalid_key');
      expect(written()).to.deep.equal(before);
    });
  });

  describe('idempotency', () => {
    it('replays the same 201 body with idempotent-replayed: true for the same key and body, posting once', async () => {
      const body = expense({ vendorName: 'Replayed Vendor' });
      const before = written();
      const first = await post(body, { 'idempotency-key': 'expense-1' });
      const { expenseId } = expectCreated(first);
      const second = await post(body, { 'idempotency-key': 'expense-1' });
      expect(second.status).to.equal(201);
      expect(second.text).to.equal(first.text);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(written()).to.deep.equal({
        vendors: before.vendors + 1,
        entries: before.entries + 1,
        transactions: before.transactions + 1,
        expenses: before.expenses + 1,
        audit: before.audit + 2,
      });
      expect(countRows(app.db, "SELECT count(*) FROM journal_entries WHERE source_type = 'expense' AND source_id = ?", expenseId)).to.equal(1);
      expectBalanced(tenant.business.id);
    });

    it('refuses the same key with a different amount (409 conflict) and writes nothing new', async () => {
      expectCreated(await post(expense(), { 'idempotency-key': 'expense-2' }));
      const before = written();
      const clash = await post(expense({ amountCents: '54321' }), { 'idempotency-key': 'expense-2' });
      expectError(clash, 409, 'conflict');
      expect(clash.headers['idempotent-replayed']).to.equal(undefined);
      expect(written()).to.deep.equal(before);
    });

    it('frees the key after a 422: the corrected body with the same key runs (201, not a replay)', async () => {
      const before = written();
      expectInvalid(await post(expense({ amountCents: '0' }), { 'idempotency-key': 'expense-3' }), 'amountCents');
      expect(written()).to.deep.equal(before);
      const corrected = await post(expense({ amountCents: '100' }), { 'idempotency-key': 'expense-3' });
      const { expenseId } = expectCreated(corrected);
      expect(corrected.headers['idempotent-replayed']).to.equal(undefined);
      expect(expenseRow(expenseId).amount_cents).to.equal(100n);
    });

    it('frees the key after a 404: the corrected account with the same key runs (201)', async () => {
      expectError(await post(expense({ accountId: NO_SUCH_ID }), { 'idempotency-key': 'expense-4' }), 404, 'not_found', 'accountId:');
      const corrected = await post(expense(), { 'idempotency-key': 'expense-4' });
      expectCreated(corrected);
      expect(corrected.headers['idempotent-replayed']).to.equal(undefined);
    });

    it('posts twice without an Idempotency-Key (two expenses, one vendor)', async () => {
      const before = written();
      const first = expectCreated(await post(expense()));
      const second = expectCreated(await post(expense()));
      expect(second.expenseId).to.not.equal(first.expenseId);
      expect(written()).to.deep.include({ vendors: before.vendors + 1, entries: before.entries + 2, expenses: before.expenses + 2 });
    });
  });

  describe('body', () => {
    /** A valid expense body as raw bytes, with `vendorBytes` as the vendor name's bytes. */
    const rawExpense = (vendorBytes: Buffer): Buffer =>
      Buffer.concat([
        Buffer.from(`{"date":"2026-03-10","amountCents":"250","accountId":"${accountId('Meals')}","vendorName":"`, 'utf8'),
        vendorBytes,
        Buffer.from('"}', 'utf8'),
      ]);
    const postRaw = (bytes: Buffer): Promise<TestResponse> =>
      app.request('POST', '/api/v1/expenses', { key: tenant.key, rawBody: bytes, headers: { 'content-type': 'application/json' } });

    it('refuses a body that is not valid UTF-8 (a vendorName holding the byte 0xFF: 422 "body:") and writes nothing', async () => {
      const before = written();
      expectInvalid(await postRaw(rawExpense(Buffer.from([0x43, 0x61, 0x66, 0xff]))), 'body');
      expect(written()).to.deep.equal(before);
    });

    it('refuses an overlong UTF-8 encoding (0xC0 0xAF: 422 "body:")', async () => {
      const before = written();
      expectInvalid(await postRaw(rawExpense(Buffer.from([0x41, 0xc0, 0xaf]))), 'body');
      expect(written()).to.deep.equal(before);
    });

    it('stores a valid UTF-8 vendorName exactly as sent (Café, 201)', async () => {
      expectCreated(await postRaw(rawExpense(Buffer.from('Caf\u00e9', 'utf8'))));
      expect(vendorsNamed('Caf\u00e9')).to.equal(1);
    });

    it('refuses an unknown field, naming it (422 "category:") and writes nothing', async () => {
      const before = written();
      const res = await post(expense({ category: 'Office' }));
      expectInvalid(res, 'category');
      expect(written()).to.deep.equal(before);
    });

    it('refuses a body that is not a JSON object (422 "body:")', async () => {
      expectInvalid(await post([expense()]), 'body');
    });

    it('refuses an empty body: date is required (422)', async () => {
      const res = await app.request('POST', '/api/v1/expenses', { key: tenant.key });
      expectError(res, 422, 'validation_failed');
      expect(written().expenses).to.equal(0);
    });
  });
});
