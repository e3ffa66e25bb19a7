import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { createBill, payBill } from '../../src/books/bills.js';
import type { Business } from '../../src/books/businesses.js';
import { setRate } from '../../src/books/fx.js';
import { inTransaction } from '../../src/db/connection.js';
import type { TestApp, TestResponse } from '../support/app.js';
import { buildApiTenant, expectError, expectInvalid, setTenant, type ApiTenant, useTenantApp } from '../support/api.js';
import { accountIdByName, buildBusiness, buildKey, postDeposit, TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer, createInvoice, payInvoice, sendInvoice } from '../support/invoicing.js';
import { withQuery } from '../support/register.js';

/**
 * The five reports over hand-checked books: every figure below is worked out by hand from the
 * postings listed in `buildHandCheckedBooks`, once for a business on the accrual basis and once
 * for the same history on the cash basis (spec "Report rows", "Report responses").
 */

const TODAY = '2026-03-15T12:00:00.000Z';

type Row = [account: string, type: string, depth: number, isTotal: boolean, amountCents: string, priorCents?: string];

interface MoneyBody {
  cents: string;
  formatted: string;
  currency: string;
}

const cents = (money: MoneyBody) => {
  expect(money.currency).to.equal('USD');
  return money.cents;
};

/**
 * The history, the same in each business:
 * - 2025-11-01 owner's deposit $10,000.00 (bank / owner's equity)
 * - 2025-11-15 bill from Hale & Co, Professional Fees $800.00, due 2025-12-15, never paid
 * - 2025-12-10 expense Rent $1,500.00
 * - 2026-01-05 invoice in USD: 2 x $1,000.00 Service Revenue + 10 % tax = $2,200.00, due 2026-02-04;
 *   $1,000.00 paid on 2026-02-10
 * - 2026-02-01 bill from City Power, Utilities $300.00, due 2026-03-03; $100.00 paid 2026-03-05
 * - 2026-02-15 expense Office Supplies $245.50
 * - 2026-02-20 invoice in EUR: €1,000.00 Sales, no tax, due 2026-03-22, at 1.10 = $1,100.00;
 *   paid in full on 2026-03-10 at 1.12 = $1,120.00 (a realised gain of $20.00)
 */
async function buildHandCheckedBooks(app: TestApp, tenant: ApiTenant, business: Business): Promise<{ usdInvoice: string; eurInvoice: string; bills: string[] }> {
  const account = (name: string) => accountIdByName(app.db, business.id, name);
  inTransaction(app.db, () => postDeposit(app.db, app.clock, business.id, '2025-11-01', 1_000_000n));
  const hale = inTransaction(app.db, () =>
    createBill(app.db, app.clock, TEST_ACTOR, {
      businessId: business.id,
      vendorName: 'Hale & Co',
      number: 'H-17',
      issueDate: '2025-11-15',
      dueDate: '2025-12-15',
      amountCents: 80_000n,
      accountId: account('Professional Fees'),
    }),
  );
  const expense = async (date: string, amountCents: string, accountName: string) => {
    const res = await app.post('/api/v1/expenses', tenant.key, { entityId: business.id, date, amountCents, vendorName: `Vendor for ${accountName}`, accountId: account(accountName) });
    expect(res.status, res.text).to.equal(201);
  };
  await expense('2025-12-10', '150000', 'Rent');

  const usdCustomer = addBilledCustomer(app, tenant.id, { name: `Harbor Catering ${business.basis}` });
  const usdInvoice = await createInvoice(app, tenant.key, {
    entityId: business.id,
    customerId: usdCustomer,
    issueDate: '2026-01-05',
    dueDate: '2026-02-04',
    taxRatePercent: '10',
    lines: [{ description: 'Consulting', quantity: '2', unitPriceCents: '100000', accountId: account('Service Revenue') }],
  });
  await sendInvoice(app, tenant.key, usdInvoice.invoiceId);
  await payInvoice(app, tenant.key, usdInvoice.invoiceId, '100000', '2026-02-10');

  const power = inTransaction(app.db, () =>
    createBill(app.db, app.clock, TEST_ACTOR, {
      businessId: business.id,
      vendorName: 'City Power',
      number: 'CP-0226',
      issueDate: '2026-02-01',
      dueDate: '2026-03-03',
      amountCents: 30_000n,
      accountId: account('Utilities'),
    }),
  );
  inTransaction(app.db, () => payBill(app.db, app.clock, TEST_ACTOR, { billId: power.id, amountCents: 10_000n, date: '2026-03-05' }));
  await expense('2026-02-15', '24550', 'Office Supplies');

  setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-02-20', usdPerUnit: '1.10' });
  setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-10', usdPerUnit: '1.12' });
  const eurCustomer = addBilledCustomer(app, tenant.id, { name: `Boulangerie Lyon ${business.basis}`, currency: 'EUR' });
  const eurInvoice = await createInvoice(app, tenant.key, {
    entityId: business.id,
    customerId: eurCustomer,
    currency: 'EUR',
    issueDate: '2026-02-20',
    dueDate: '2026-03-22',
    lines: [{ description: 'Pastry course', quantity: '1', unitPriceCents: '100000', accountId: account('Sales') }],
  });
  await sendInvoice(app, tenant.key, eurInvoice.invoiceId);
  await payInvoice(app, tenant.key, eurInvoice.invoiceId, '100000', '2026-03-10');
  return { usdInvoice: usdInvoice.invoiceId, eurInvoice: eurInvoice.invoiceId, bills: [hale.id, power.id] };
}

describe('reports over hand-checked books', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  let accrual: Business;
  let cash: Business;
  let ids: { usdInvoice: string; eurInvoice: string; bills: string[] };

  useTenantApp((started) => ({ app, tenant } = started), { plan: 'large', name: 'Harbor & Pine' });

  before(async () => {
    app.clock.set(TODAY);
    accrual = buildBusiness(app.db, app.clock, { tenantId: tenant.id, name: 'Harbor Coffee', basis: 'accrual' });
    cash = buildBusiness(app.db, app.clock, { tenantId: tenant.id, name: 'Pine Bakery', basis: 'cash' });
    ids = await buildHandCheckedBooks(app, tenant, accrual);
    await buildHandCheckedBooks(app, tenant, cash);
  });

  const report = async (path: string, query: Record<string, string | undefined>, key = tenant.key): Promise<TestResponse> => app.get(withQuery(`/api/v1/reports/${path}`, query), key);
  const ok = async (path: string, query: Record<string, string | undefined>) => {
    const res = await report(path, query);
    expect(res.status, res.text.slice(0, 300)).to.equal(200);
    return res.body;
  };
  const rowsOf = (body: { rows: Array<{ account: string; type: string; depth: number; isTotal: boolean; amount: MoneyBody; prior?: MoneyBody }> }): Row[] =>
    body.rows.map((row) => {
      const shown: Row = [row.account, row.type, row.depth, row.isTotal, cents(row.amount)];
      if (row.prior) shown.push(cents(row.prior));
      return shown;
    });

  describe('trial balance', () => {
    it('lists every account with a balance on its side, in chart order, debits = credits (accrual)', async () => {
      const body = await ok('trial-balance', { entityId: accrual.id, asOf: '2026-03-15' });
      expect(Object.keys(body).sort()).to.deep.equal(['asOf', 'basis', 'entity', 'rows', 'totals']);
      expect([body.entity, body.basis, body.asOf]).to.deep.equal(['Harbor Coffee', 'accrual', '2026-03-15']);
      expect(body.rows.map((row: { account: string; debit: MoneyBody; credit: MoneyBody }) => [row.account, cents(row.debit), cents(row.credit)])).to.deep.equal([
        ['Business Checking', '1027450', '0'],
        ['Accounts Receivable', '120000', '0'],
        ['Accounts Payable', '0', '100000'],
        ['Sales Tax Payable', '0', '20000'],
        ["Owner's Equity", '0', '1000000'],
        ['Sales', '0', '110000'],
        ['Service Revenue', '0', '200000'],
        ['Office Supplies', '24550', '0'],
        ['Professional Fees', '80000', '0'],
        ['Rent', '150000', '0'],
        ['Utilities', '30000', '0'],
        ['Realized FX Gain or Loss', '0', '2000'],
      ]);
      expect([cents(body.totals.debit), cents(body.totals.credit)]).to.deep.equal(['1432000', '1432000']);
      expect(body.totals.debit.formatted).to.equal('$14,320.00');
    });

    it('reads the cash view in a cash-basis business: revenue and tax as money arrived, bills as paid', async () => {
      const body = await ok('trial-balance', { entityId: cash.id, asOf: '2026-03-15' });
      expect(body.basis).to.equal('cash');
      expect(body.rows.map((row: { account: string; debit: MoneyBody; credit: MoneyBody }) => [row.account, cents(row.debit), cents(row.credit)])).to.deep.equal([
        ['Business Checking', '1027450', '0'],
        ['Sales Tax Payable', '0', '9091'],
        ["Owner's Equity", '0', '1000000'],
        ['Sales', '0', '112000'],
        ['Service Revenue', '0', '90909'],
        ['Office Supplies', '24550', '0'],
        ['Rent', '150000', '0'],
        ['Utilities', '10000', '0'],
      ]);
      expect([cents(body.totals.debit), cents(body.totals.credit)]).to.deep.equal(['1212000', '1212000']);
    });

    it('stops at asOf: on 2026-01-31 only what was posted by then', async () => {
      const body = await ok('trial-balance', { entityId: accrual.id, asOf: '2026-01-31' });
      expect(body.rows.map((row: { account: string; debit: MoneyBody; credit: MoneyBody }) => [row.account, cents(row.debit), cents(row.credit)])).to.deep.equal([
        ['Business Checking', '850000', '0'],
        ['Accounts Receivable', '220000', '0'],
        ['Accounts Payable', '0', '80000'],
        ['Sales Tax Payable', '0', '20000'],
        ["Owner's Equity", '0', '1000000'],
        ['Service Revenue', '0', '200000'],
        ['Professional Fees', '80000', '0'],
        ['Rent', '150000', '0'],
      ]);
    });

    it('is empty before the first posting', async () => {
      const body = await ok('trial-balance', { entityId: accrual.id, asOf: '2025-10-31' });
      expect(body.rows).to.deep.equal([]);
      expect([cents(body.totals.debit), cents(body.totals.credit)]).to.deep.equal(['0', '0']);
    });
  });

  describe('balance sheet', () => {
    it('has assets = liabilities + equity, earlier years in Retained Earnings and this year in Current Year Earnings (accrual)', async () => {
      const body = await ok('balance-sheet', { entityId: accrual.id, asOf: '2026-03-15' });
      expect(Object.keys(body).sort()).to.deep.equal(['asOf', 'basis', 'entity', 'rows', 'totals']);
      expect(rowsOf(body)).to.deep.equal([
        ['Assets', 'asset', 0, true, '1147450'],
        ['Cash and Bank', 'asset', 1, true, '1027450'],
        ['Business Checking', 'asset', 2, false, '1027450'],
        ['Accounts Receivable', 'asset', 1, false, '120000'],
        ['Total Assets', 'total', 0, true, '1147450'],
        ['Liabilities', 'liability', 0, true, '120000'],
        ['Accounts Payable', 'liability', 1, false, '100000'],
        ['Sales Tax Payable', 'liability', 1, false, '20000'],
        ['Total Liabilities', 'total', 0, true, '120000'],
        ['Equity', 'equity', 0, true, '1027450'],
        ["Owner's Equity", 'equity', 1, false, '1000000'],
        // 2025: Rent $1,500 and Professional Fees $800, a loss.
        ['Retained Earnings', 'equity', 1, false, '-230000'],
        // 2026 so far: revenue $3,100.00 less Office Supplies $245.50 and Utilities $300, plus the $20 FX gain.
        ['Current Year Earnings', 'equity', 1, false, '257450'],
        ['Total Equity', 'total', 0, true, '1027450'],
        ['Total Liabilities and Equity', 'total', 0, true, '1147450'],
      ]);
      expect([cents(body.totals.assets), cents(body.totals.liabilities), cents(body.totals.equity)]).to.deep.equal(['1147450', '120000', '1027450']);
      expect(body.totals.equity.formatted).to.equal('$10,274.50');
    });

    it('writes a negative figure with a leading minus in cents and in the display text', async () => {
      const body = await ok('balance-sheet', { entityId: accrual.id, asOf: '2025-12-31' });
      const retained = body.rows.find((row: { account: string }) => row.account === 'Retained Earnings');
      const current = body.rows.find((row: { account: string }) => row.account === 'Current Year Earnings');
      expect([retained.amount, current.amount]).to.deep.equal([
        { cents: '0', formatted: '$0.00', currency: 'USD' },
        { cents: '-230000', formatted: '-$2,300.00', currency: 'USD' },
      ]);
    });

    it('balances in the cash view too', async () => {
      const body = await ok('balance-sheet', { entityId: cash.id, asOf: '2026-03-15' });
      expect(rowsOf(body)).to.deep.equal([
        ['Assets', 'asset', 0, true, '1027450'],
        ['Cash and Bank', 'asset', 1, true, '1027450'],
        ['Business Checking', 'asset', 2, false, '1027450'],
        ['Total Assets', 'total', 0, true, '1027450'],
        ['Liabilities', 'liability', 0, true, '9091'],
        ['Sales Tax Payable', 'liability', 1, false, '9091'],
        ['Total Liabilities', 'total', 0, true, '9091'],
        ['Equity', 'equity', 0, true, '1018359'],
        ["Owner's Equity", 'equity', 1, false, '1000000'],
        ['Retained Earnings', 'equity', 1, false, '-150000'],
        // 2026 cash: $909.09 + $1,120.00 in, less $245.50 and the $100 paid to City Power.
        ['Current Year Earnings', 'equity', 1, false, '168359'],
        ['Total Equity', 'total', 0, true, '1018359'],
        ['Total Liabilities and Equity', 'total', 0, true, '1027450'],
      ]);
    });
  });

  describe('profit and loss', () => {
    it('shows February with January as prior, revenue then expenses, headings summing their rows (accrual)', async () => {
      const body = await ok('profit-and-loss', { entityId: accrual.id, periodStart: '2026-02-01', periodEnd: '2026-02-28' });
      expect(Object.keys(body).sort()).to.deep.equal(['basis', 'entity', 'period', 'prior', 'rows', 'totals']);
      expect([body.entity, body.basis, body.period]).to.deep.equal(['Harbor Coffee', 'accrual', { start: '2026-02-01', end: '2026-02-28' }]);
      expect(rowsOf(body)).to.deep.equal([
        ['Revenue', 'revenue', 0, true, '110000', '200000'],
        ['Sales', 'revenue', 1, false, '110000', '0'],
        ['Service Revenue', 'revenue', 1, false, '0', '200000'],
        ['Total Revenue', 'total', 0, true, '110000', '200000'],
        ['Expenses', 'expense', 0, true, '54550', '0'],
        ['Operating Expenses', 'expense', 1, true, '54550', '0'],
        ['Office Supplies', 'expense', 2, false, '24550', '0'],
        ['Utilities', 'expense', 2, false, '30000', '0'],
        ['Total Expenses', 'total', 0, true, '54550', '0'],
        ['Net Income', 'total', 0, true, '55450', '200000'],
      ]);
      expect([cents(body.totals.revenue), cents(body.totals.expenses), cents(body.totals.netIncome)]).to.deep.equal(['110000', '54550', '55450']);
      expect([cents(body.prior.revenue), cents(body.prior.expenses), cents(body.prior.netIncome)]).to.deep.equal(['200000', '0', '200000']);
    });

    it('takes as prior the calendar month before the month of periodStart, whatever the range', async () => {
      // 2026-02-20 .. 2026-03-15: the EUR invoice, the FX gain; prior is January, not the 23 days before.
      const body = await ok('profit-and-loss', { entityId: accrual.id, periodStart: '2026-02-20', periodEnd: '2026-03-15' });
      expect(rowsOf(body)).to.deep.equal([
        ['Revenue', 'revenue', 0, true, '110000', '200000'],
        ['Sales', 'revenue', 1, false, '110000', '0'],
        ['Service Revenue', 'revenue', 1, false, '0', '200000'],
        ['Total Revenue', 'total', 0, true, '110000', '200000'],
        ['Expenses', 'expense', 0, true, '-2000', '0'],
        ['Other Expenses', 'expense', 1, true, '-2000', '0'],
        ['Realized FX Gain or Loss', 'expense', 2, false, '-2000', '0'],
        ['Total Expenses', 'total', 0, true, '-2000', '0'],
        ['Net Income', 'total', 0, true, '112000', '200000'],
      ]);
    });

    it('shows a loss as a negative net income, and leaves out accounts with no activity in either period', async () => {
      const body = await ok('profit-and-loss', { entityId: accrual.id, periodStart: '2025-11-01', periodEnd: '2025-12-31' });
      expect(rowsOf(body)).to.deep.equal([
        ['Total Revenue', 'total', 0, true, '0', '0'],
        ['Expenses', 'expense', 0, true, '230000', '0'],
        ['Operating Expenses', 'expense', 1, true, '230000', '0'],
        ['Professional Fees', 'expense', 2, false, '80000', '0'],
        ['Rent', 'expense', 2, false, '150000', '0'],
        ['Total Expenses', 'total', 0, true, '230000', '0'],
        ['Net Income', 'total', 0, true, '-230000', '0'],
      ]);
      expect(body.totals.netIncome).to.deep.equal({ cents: '-230000', formatted: '-$2,300.00', currency: 'USD' });
    });

    it('recognises revenue as payments arrive in the cash view', async () => {
      const body = await ok('profit-and-loss', { entityId: cash.id, periodStart: '2026-01-01', periodEnd: '2026-03-31' });
      expect(rowsOf(body)).to.deep.equal([
        ['Revenue', 'revenue', 0, true, '202909', '0'],
        ['Sales', 'revenue', 1, false, '112000', '0'],
        // $1,000.00 of a $2,200.00 invoice: round(1000 x 2000 / 2200) = $909.09 is revenue, the rest tax.
        ['Service Revenue', 'revenue', 1, false, '90909', '0'],
        ['Total Revenue', 'total', 0, true, '202909', '0'],
        ['Expenses', 'expense', 0, true, '34550', '150000'],
        ['Operating Expenses', 'expense', 1, true, '34550', '150000'],
        ['Office Supplies', 'expense', 2, false, '24550', '0'],
        ['Rent', 'expense', 2, false, '0', '150000'],
        ['Utilities', 'expense', 2, false, '10000', '0'],
        ['Total Expenses', 'total', 0, true, '34550', '150000'],
        ['Net Income', 'total', 0, true, '168359', '-150000'],
      ]);
    });
  });

  describe('receivables aging', () => {
    it('buckets what is owed as of today (the default): the USD invoice 39 days past due', async () => {
      const body = await ok('ar-aging', { entityId: accrual.id });
      expect(Object.keys(body).sort(), 'the spec\'s fields exactly').to.deep.equal(['buckets', 'grandTotal', 'items']);
      expect(Object.fromEntries(Object.entries(body.buckets).map(([bucket, money]) => [bucket, cents(money as MoneyBody)]))).to.deep.equal({
        current: '0',
        d1_30: '0',
        d31_60: '120000',
        d61_90: '0',
        d90plus: '0',
      });
      expect(cents(body.grandTotal)).to.equal('120000');
      expect(body.items).to.deep.equal([
        {
          id: ids.usdInvoice,
          customerOrVendor: 'Harbor Catering accrual',
          number: 'INV-0001',
          dueDate: '2026-02-04',
          daysOverdue: 39,
          balance: { cents: '120000', formatted: '$1,200.00', currency: 'USD' },
        },
      ]);
    });

    it('ages as of an earlier date: payments after it still owed, the EUR invoice current at its issue-rate dollars', async () => {
      const body = await ok('ar-aging', { entityId: accrual.id, asOf: '2026-02-25' });
      expect(body.items.map((item: { number: string; daysOverdue: number; balance: MoneyBody }) => [item.number, item.daysOverdue, cents(item.balance)])).to.deep.equal([
        ['INV-0001', 21, '120000'],
        ['INV-0002', -25, '110000'],
      ]);
      expect([cents(body.buckets.current), cents(body.buckets.d1_30), cents(body.grandTotal)]).to.deep.equal(['110000', '120000', '230000']);
    });

    it('ages the same invoices in a cash-basis business (what customers owe does not depend on the basis)', async () => {
      const body = await ok('ar-aging', { entityId: cash.id, asOf: '2026-03-15' });
      expect([cents(body.buckets.d31_60), cents(body.grandTotal)]).to.deep.equal(['120000', '120000']);
    });
  });

  describe('payables aging', () => {
    it('buckets the unpaid bills: City Power 12 days past due, Hale & Co exactly 90 days', async () => {
      const body = await ok('ap-aging', { entityId: accrual.id, asOf: '2026-03-15' });
      expect(Object.keys(body).sort(), 'the spec\'s fields exactly').to.deep.equal(['buckets', 'grandTotal', 'items']);
      expect(Object.fromEntries(Object.entries(body.buckets).map(([bucket, money]) => [bucket, cents(money as MoneyBody)]))).to.deep.equal({
        current: '0',
        d1_30: '20000',
        d31_60: '0',
        d61_90: '80000',
        d90plus: '0',
      });
      expect(cents(body.grandTotal)).to.equal('100000');
      expect(body.items.map((item: { id: string; customerOrVendor: string; number: string; dueDate: string; daysOverdue: number; balance: MoneyBody }) => [
        item.id,
        item.customerOrVendor,
        item.number,
        item.dueDate,
        item.daysOverdue,
        cents(item.balance),
      ])).to.deep.equal([
        [ids.bills[0], 'Hale & Co', 'H-17', '2025-12-15', 90, '80000'],
        [ids.bills[1], 'City Power', 'CP-0226', '2026-03-03', 12, '20000'],
      ]);
    });

    it('moves a bill to over 90 days the day after, and leaves out what was not yet billed', async () => {
      const later = await ok('ap-aging', { entityId: accrual.id, asOf: '2026-03-16' });
      expect([cents(later.buckets.d61_90), cents(later.buckets.d90plus)]).to.deep.equal(['0', '80000']);
      const early = await ok('ap-aging', { entityId: accrual.id, asOf: '2025-12-31' });
      expect(early.items.map((item: { number: string; daysOverdue: number }) => [item.number, item.daysOverdue])).to.deep.equal([['H-17', 16]]);
    });
  });

  describe('the receivables items', () => {
    it('lists only the 25 largest balances, largest first, while the buckets count every invoice', async () => {
      const business = buildBusiness(app.db, app.clock, { tenantId: tenant.id, name: 'Many Invoices' });
      const customer = addBilledCustomer(app, tenant.id, { name: 'Regular' });
      for (let n = 1; n <= 27; n += 1) {
        const created = await createInvoice(app, tenant.key, {
          entityId: business.id,
          customerId: customer,
          issueDate: '2026-03-01',
          dueDate: '2026-03-31',
          lines: [{ description: `Order ${n}`, quantity: '1', unitPriceCents: String(1000 * n), accountId: accountIdByName(app.db, business.id, 'Sales') }],
        });
        await sendInvoice(app, tenant.key, created.invoiceId);
      }
      const body = await ok('ar-aging', { entityId: business.id });
      expect(body.items).to.have.length(25);
      expect(body.items.map((item: { balance: MoneyBody }) => Number(cents(item.balance)) / 1000)).to.deep.equal(Array.from({ length: 25 }, (_, i) => 27 - i));
      expect(cents(body.grandTotal)).to.equal(String((1000 * 27 * 28) / 2));
      expect(cents(body.buckets.current)).to.equal(cents(body.grandTotal));
    });
  });

  describe('when a document stops being owed (closed_on, what aging reads first)', () => {
    const closedOn = (table: 'invoices' | 'bills', id: string) => (app.db.prepare(`SELECT closed_on FROM ${table} WHERE id = ?`).get(id) as { closed_on: string | null }).closed_on;

    it('is the settling payment\'s date for a paid invoice, and nothing while money is owed', () => {
      expect([closedOn('invoices', ids.usdInvoice), closedOn('invoices', ids.eurInvoice)]).to.deep.equal([null, '2026-03-10']);
      expect(ids.bills.map((id) => closedOn('bills', id))).to.deep.equal([null, null]);
    });

    it('is the latest payment date when the settling payment is dated earlier than one before it', async () => {
      const customer = addBilledCustomer(app, tenant.id, { name: 'Out of Order' });
      const created = await createInvoice(app, tenant.key, {
        entityId: accrual.id,
        customerId: customer,
        issueDate: '2026-03-01',
        dueDate: '2026-03-31',
        lines: [{ description: 'Cake', quantity: '1', unitPriceCents: '10000', accountId: accountIdByName(app.db, accrual.id, 'Sales') }],
      });
      await sendInvoice(app, tenant.key, created.invoiceId);
      await payInvoice(app, tenant.key, created.invoiceId, '4000', '2026-03-12');
      await payInvoice(app, tenant.key, created.invoiceId, '6000', '2026-03-05');
      expect(closedOn('invoices', created.invoiceId)).to.equal('2026-03-12');
      // On the 11th only the payment of the 5th ($60.00) had been made: $40.00 was still owed.
      const aging = await ok('ar-aging', { entityId: accrual.id, asOf: '2026-03-11' });
      expect(aging.items.find((item: { id: string }) => item.id === created.invoiceId).balance.cents).to.equal('4000');
      expect(() => app.db.prepare("UPDATE invoices SET closed_on = '2026-03-13' WHERE id = ?").run(created.invoiceId)).to.throw(/closed once/);
    });
  });

  describe('bad input (422 naming the field)', () => {
    it('a missing required date', async () => {
      expectInvalid(await report('profit-and-loss', { entityId: accrual.id, periodEnd: '2026-02-28' }), 'periodStart');
      expectInvalid(await report('profit-and-loss', { entityId: accrual.id, periodStart: '2026-02-01' }), 'periodEnd');
      expectInvalid(await report('balance-sheet', { entityId: accrual.id }), 'asOf');
      expectInvalid(await report('trial-balance', { entityId: accrual.id }), 'asOf');
    });

    it('a malformed or impossible date', async () => {
      expectInvalid(await report('trial-balance', { entityId: accrual.id, asOf: '2026-02-30' }), 'asOf');
      expectInvalid(await report('balance-sheet', { entityId: accrual.id, asOf: '15/03/2026' }), 'asOf');
      expectInvalid(await report('ar-aging', { entityId: accrual.id, asOf: '2026-3-1' }), 'asOf');
      expectInvalid(await report('ap-aging', { entityId: accrual.id, asOf: '' }), 'asOf');
      expectInvalid(await report('profit-and-loss', { entityId: accrual.id, periodStart: '2026-02-01', periodEnd: 'yesterday' }), 'periodEnd');
    });

    it('a periodEnd before periodStart', async () => {
      const res = await report('profit-and-loss', { entityId: accrual.id, periodStart: '2026-02-01', periodEnd: '2026-01-31' });
      expectInvalid(res, 'periodEnd');
      expect(res.body.error.message).to.equal('periodEnd: must not be before periodStart (2026-02-01)');
    });

    it('an unknown parameter, named', async () => {
      expectInvalid(await report('trial-balance', { entityId: accrual.id, asOf: '2026-03-15', basis: 'cash' }), 'basis');
      expectInvalid(await report('ar-aging', { entityId: accrual.id, limit: '10' }), 'limit');
    });
  });

  describe('entity rules and access', () => {
    it('refuses an omitted entityId when the key reaches several businesses (422 "entityId:")', async () => {
      expectInvalid(await report('trial-balance', { asOf: '2026-03-15' }), 'entityId');
    });

    it('refuses a business the key was not given (403 entity_not_allowed), and another account\'s business (404)', async () => {
      const limited = buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'cash only', access: 'read', businessIds: [cash.id] });
      expectError(await report('balance-sheet', { entityId: accrual.id, asOf: '2026-03-15' }, limited.key), 403, 'entity_not_allowed', 'entityId:');
      const limitedOwn = await report('balance-sheet', { asOf: '2026-03-15' }, limited.key);
      expect([limitedOwn.status, limitedOwn.body.entity]).to.deep.equal([200, 'Pine Bakery']);
      const other = buildApiTenant(app);
      expectError(await report('ap-aging', { entityId: other.business.id }), 404, 'not_found');
    });

    it('serves a read-only key (reports:read), refuses no key (401), and still answers while billing is past due', async () => {
      const reader = buildKey(app.db, app.clock, { tenantId: tenant.id, name: 'reader', access: 'read' });
      expect((await report('profit-and-loss', { entityId: accrual.id, periodStart: '2026-01-01', periodEnd: '2026-01-31' }, reader.key)).status).to.equal(200);
      expectError(await app.get(withQuery('/api/v1/reports/trial-balance', { entityId: accrual.id, asOf: '2026-03-15' }), null), 401, 'invalid_key');
      setTenant(app, tenant.id, { billingState: 'past_due' });
      try {
        expect((await report('trial-balance', { entityId: accrual.id, asOf: '2026-03-15' })).status).to.equal(200);
      } finally {
        setTenant(app, tenant.id, { billingState: 'active' });
      }
    });
  });
});
