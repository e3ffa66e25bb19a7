import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setRate } from '../../src/books/fx.js';
import { voidInvoice } from '../../src/books/invoice-posting.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { lockPeriod } from '../../src/books/periods.js';
import { inTransaction } from '../../src/db/connection.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { type ApiTenant, buildApiTenant, countRows, expectError, expectInvalid, setTenant } from '../support/api.js';
import { accountIdByName, buildBusiness, TEST_ACTOR } from '../support/factories.js';
import { type FakeProvider, frankfurterBody, useAppWithFakeProvider } from '../support/rate-provider.js';
import { addCustomer, UUID } from '../support/register.js';

/**
 * What sending, paying and reminding do to the books: each journal line read back from the
 * database (account, direction, amount, basis) against figures worked out by hand in the
 * comments, following DESIGN.md's posting-engine rules (round = half away from zero).
 */

const START = '2026-03-15T12:00:00.000Z';
const TODAY = '2026-03-15';

// ---------------------------------------------------------------------------------------
// A Frankfurter-speaking rate provider on loopback (test/support/rate-provider.ts)

/** Frankfurter's answer for one day: fixed CAD, GBP and MXN quotes, and the USD one given. */
function frankfurterDay(date: string, usdPerEur: string): string {
  return frankfurterBody(date, { CAD: '1.4591', GBP: '0.8573', MXN: '19.6543', USD: usdPerEur });
}

/** The request Daybook makes for one day's quotes. */
const frankfurterRequest = (date: string) => `GET /${date}?from=EUR&to=USD,CAD,GBP,MXN`;

/** A loopback URL nothing listens on: a port the system handed out, then closed again. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------------------------------
// Reading the books back

interface Line {
  account: string;
  direction: 'debit' | 'credit';
  amountCents: bigint;
  basis: 'both' | 'accrual' | 'cash';
}

const line = (account: string, direction: 'debit' | 'credit', amountCents: bigint, basis: Line['basis']): Line => ({ account, direction, amountCents, basis });

interface EntryRow {
  id: string;
  entry_date: string;
  source_type: string;
  source_id: string;
  reverses_entry_id: string | null;
}

function entriesFor(app: TestApp, sourceType: string, sourceId: string): EntryRow[] {
  return app.db
    .prepare('SELECT id, entry_date, source_type, source_id, reverses_entry_id FROM journal_entries WHERE source_type = ? AND source_id = ? ORDER BY created_at, id')
    .all(sourceType, sourceId) as EntryRow[];
}

function oneEntryFor(app: TestApp, sourceType: string, sourceId: string): EntryRow {
  const entries = entriesFor(app, sourceType, sourceId);
  expect(entries, `${sourceType} entries of ${sourceId}`).to.have.length(1);
  return entries[0]!;
}

function linesOf(app: TestApp, entryId: string): Line[] {
  const rows = app.db
    .prepare(
      `SELECT a.name AS account, l.direction, l.amount_cents, l.basis FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
       WHERE l.entry_id = ? ORDER BY l.line_no`,
    )
    .all(entryId) as { account: string; direction: Line['direction']; amount_cents: bigint | number; basis: Line['basis'] }[];
  return rows.map((row) => line(row.account, row.direction, BigInt(row.amount_cents), row.basis));
}

/** Debits minus credits on one account of a business, in one view (the lines with basis both or that view). */
function balanceOf(app: TestApp, businessId: string, account: string, view: 'accrual' | 'cash'): bigint {
  const row = app.db
    .prepare(
      `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS balance
       FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
       WHERE l.business_id = ? AND a.name = ? AND l.basis IN ('both', ?)`,
    )
    .get(businessId, account, view) as { balance: bigint | number };
  return BigInt(row.balance);
}

function expectTrialBalance(app: TestApp, businessId: string): void {
  for (const view of ['accrual', 'cash'] as const) {
    const totals = ledgerTotals(app.db, businessId, view);
    expect(totals.debitCents, `${view} view: debits = credits`).to.equal(totals.creditCents);
  }
}

interface InvoiceRow {
  status: string;
  paid_cents: bigint;
  journal_entry_id: string | null;
  usd_per_unit: string | null;
  subtotal_usd_cents: bigint | null;
  tax_usd_cents: bigint | null;
}

function invoiceRow(app: TestApp, id: string): InvoiceRow {
  return app.db.prepare('SELECT status, paid_cents, journal_entry_id, usd_per_unit, subtotal_usd_cents, tax_usd_cents FROM invoices WHERE id = ?').get(id) as InvoiceRow;
}

/** Every column of the invoice's row, to show a refused write left it exactly as it was. */
function wholeInvoiceRow(app: TestApp, id: string): Record<string, unknown> {
  return app.db.prepare('SELECT * FROM invoices WHERE id = ?').get(id) as Record<string, unknown>;
}

interface EmailRow {
  kind: string;
  to_address: string;
  status: string;
  sent_at: string | null;
}

function emailsOf(app: TestApp, invoiceId: string): EmailRow[] {
  return app.db.prepare('SELECT kind, to_address, status, sent_at FROM email_outbox WHERE invoice_id = ? ORDER BY created_at, id').all(invoiceId) as EmailRow[];
}

/** What a write may leave behind in one tenant's books. */
function written(app: TestApp, tenant: ApiTenant) {
  const inTenant = 'business_id IN (SELECT id FROM businesses WHERE tenant_id = ?)';
  const invoicesOfTenant = `invoice_id IN (SELECT id FROM invoices WHERE ${inTenant})`;
  return {
    entries: countRows(app.db, `SELECT count(*) FROM journal_entries WHERE ${inTenant}`, tenant.id),
    lines: countRows(app.db, `SELECT count(*) FROM journal_lines WHERE ${inTenant}`, tenant.id),
    emails: countRows(app.db, 'SELECT count(*) FROM email_outbox WHERE tenant_id = ?', tenant.id),
    payments: countRows(app.db, `SELECT count(*) FROM invoice_payments WHERE ${invoicesOfTenant}`, tenant.id),
    reminders: countRows(app.db, `SELECT count(*) FROM invoice_reminders WHERE ${invoicesOfTenant}`, tenant.id),
    rates: countRows(app.db, 'SELECT count(*) FROM exchange_rates'),
    audit: countRows(app.db, 'SELECT count(*) FROM audit_log WHERE tenant_id = ?', tenant.id),
  };
}

const usdMoney = (cents: string, formatted: string) => ({ cents, formatted, currency: 'USD' });
const eurMoney = (cents: string, formatted: string) => ({ cents, formatted, currency: 'EUR' });

// ---------------------------------------------------------------------------------------

describe('invoice posting over the API (send, payments, remind)', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  let provider: FakeProvider;

  // Every look-up goes to the loopback provider: no test reaches the real Frankfurter.
  useAppWithFakeProvider(START, (suite) => ({ app, tenant, provider } = suite));

  const accountId = (name: string, businessId = tenant.business.id) => accountIdByName(app.db, businessId, name);
  const customer = (name: string, email?: string) => addCustomer(app, tenant.id, email === undefined ? { name } : { name, email });

  async function draft(body: Record<string, unknown>): Promise<string> {
    const res = await app.post('/api/v1/invoices', tenant.key, body);
    expect(res.status, res.text).to.equal(201);
    return res.body.invoiceId as string;
  }
  const send = (id: string, headers: Record<string, string> = {}) => app.post(`/api/v1/invoices/${id}/send`, tenant.key, undefined, headers);
  const pay = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.post(`/api/v1/invoices/${id}/payments`, tenant.key, body, headers);
  const remind = (id: string, body?: unknown) => app.post(`/api/v1/invoices/${id}/remind`, tenant.key, body);
  const getInvoice = (id: string) => app.get(`/api/v1/invoices/${id}`, tenant.key);

  async function sent(id: string): Promise<TestResponse> {
    const res = await send(id);
    expect(res.status, res.text).to.equal(200);
    return res;
  }
  async function paid(id: string, body: Record<string, unknown>): Promise<TestResponse> {
    const res = await pay(id, body);
    expect(res.status, res.text).to.equal(201);
    return res;
  }

  /**
   * The accrual invoice of these tests, USD with 8.875 % tax over two revenue accounts:
   *   Design work        12.5 x 150.00 = 1,875.00            Service Revenue
   *   Printed brochures   2.5 x  51.99 =   129.975 -> 129.98  Sales (half a cent rounds away from zero)
   *   Setup fee           1   x  31.02 =    31.02            Service Revenue
   *   subtotal 1,875.00 + 129.98 + 31.02 = 2,036.00
   *   tax      2,036.00 x 8.875 % = 180.695 -> 180.70 (again half a cent, away from zero)
   *   total    2,036.00 + 180.70 = 2,216.70
   * Service Revenue earns 1,875.00 + 31.02 = 1,906.02; Sales 129.98.
   */
  function accrualInvoice(customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      customerId,
      issueDate: '2026-03-02',
      taxRatePercent: '8.875',
      lines: [
        { description: 'Design work', quantity: '12.5', unitPriceCents: '15000', accountId: accountId('Service Revenue') },
        { description: 'Printed brochures', quantity: '2.5', unitPriceCents: '5199', accountId: accountId('Sales') },
        { description: 'Setup fee', quantity: '1', unitPriceCents: '3102', accountId: accountId('Service Revenue') },
      ],
      ...overrides,
    };
  }
  const ACCRUAL_SEND_LINES: Line[] = [
    line('Accounts Receivable', 'debit', 221670n, 'accrual'),
    line('Service Revenue', 'credit', 190602n, 'accrual'),
    line('Sales', 'credit', 12998n, 'accrual'),
    line('Sales Tax Payable', 'credit', 18070n, 'accrual'),
  ];

  /**
   * The foreign invoice: EUR 1,000.00 of translation (8 x 125.00) plus 20 % tax = EUR 200.00,
   * total EUR 1,200.00, issued 2026-03-02.
   */
  function eurInvoice(customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      customerId,
      issueDate: '2026-03-02',
      currency: 'EUR',
      taxRatePercent: '20',
      lines: [{ description: 'Translation', quantity: '8', unitPriceCents: '12500', accountId: accountId('Service Revenue') }],
      ...overrides,
    };
  }
  /**
   * Sent at 1.0812 USD per EUR:
   *   subtotal 100,000 cents x 1.0812 = 108,120.00 -> 108,120 (USD 1,081.20)
   *   tax       20,000 cents x 1.0812 =  21,624.00 ->  21,624 (USD 216.24)
   *   receivable 108,120 + 21,624 = 129,744 (USD 1,297.44), the sum, not a third conversion
   */
  const EUR_SEND_LINES: Line[] = [
    line('Accounts Receivable', 'debit', 129744n, 'accrual'),
    line('Service Revenue', 'credit', 108120n, 'accrual'),
    line('Sales Tax Payable', 'credit', 21624n, 'accrual'),
  ];

  describe('POST /invoices/{id}/send on an accrual business', () => {
    it('answers 200 with the detail, status sent, and posts one accrual entry on the issue date', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Harbor Cafe', 'ap@harbor.example')));
      const res = await sent(invoiceId);

      expect(res.body).to.deep.include({
        id: invoiceId,
        number: 'INV-0001',
        status: 'sent',
        issueDate: '2026-03-02',
        currency: 'USD',
        subtotal: usdMoney('203600', '$2,036.00'),
        tax: usdMoney('18070', '$180.70'),
        total: usdMoney('221670', '$2,216.70'),
        paid: usdMoney('0', '$0.00'),
        balance: usdMoney('221670', '$2,216.70'),
        payments: [],
      });
      expect(res.body.lines.map((l: { amount: { cents: string }; account: string }) => [l.amount.cents, l.account])).to.deep.equal([
        ['187500', 'Service Revenue'],
        ['12998', 'Sales'],
        ['3102', 'Service Revenue'],
      ]);
      expect((await getInvoice(invoiceId)).body).to.deep.equal(res.body);

      const entry = oneEntryFor(app, 'invoice', invoiceId);
      expect(entry.entry_date).to.equal('2026-03-02');
      expect(invoiceRow(app, invoiceId)).to.include({ status: 'sent', journal_entry_id: entry.id, usd_per_unit: '1' });
      // Debits 2,216.70 = credits 1,906.02 + 129.98 + 180.70.
      expect(linesOf(app, entry.id)).to.deep.equal(ACCRUAL_SEND_LINES);
      expect(balanceOf(app, tenant.business.id, 'Accounts Receivable', 'accrual')).to.equal(221670n);
      // The cash view sees nothing until money arrives.
      expect(ledgerTotals(app.db, tenant.business.id, 'cash')).to.deep.equal({ debitCents: 0n, creditCents: 0n });
      expectTrialBalance(app, tenant.business.id);
    });

    it('writes the invoice email to the outbox and, with no SMTP server set, delivers it to the log (sent)', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Harbor Cafe', 'ap@harbor.example')));
      await sent(invoiceId);
      const emails = emailsOf(app, invoiceId);
      expect(emails).to.have.length(1);
      expect(emails[0]).to.include({ kind: 'invoice', to_address: 'ap@harbor.example', status: 'sent' });
      expect(emails[0]!.sent_at).to.equal(START);
    });

    it('sends and posts for a customer without an email address, with no outbox row', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Walk-in Customer')));
      const res = await sent(invoiceId);
      expect(res.body.status).to.equal('sent');
      expect(linesOf(app, oneEntryFor(app, 'invoice', invoiceId).id)).to.deep.equal(ACCRUAL_SEND_LINES);
      expect(emailsOf(app, invoiceId)).to.deep.equal([]);
    });

    it('refuses a second send (409 conflict) and writes nothing more', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Harbor Cafe', 'ap@harbor.example')));
      await sent(invoiceId);
      const before = written(app, tenant);
      const row = wholeInvoiceRow(app, invoiceId);
      expectError(await send(invoiceId), 409, 'conflict');
      expect(written(app, tenant)).to.deep.equal(before);
      expect(wholeInvoiceRow(app, invoiceId)).to.deep.equal(row);
    });

    it('refuses an issue date in a locked period (409 period_locked) and leaves the draft as it was', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Harbor Cafe', 'ap@harbor.example')));
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-03-05');
      const before = written(app, tenant);
      const row = wholeInvoiceRow(app, invoiceId);
      expectError(await send(invoiceId), 409, 'period_locked', 'issueDate:');
      expect(wholeInvoiceRow(app, invoiceId)).to.deep.equal(row);
      expect(row.status).to.equal('draft');
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it('refuses while billing is past due (402 read_only_billing_state) and leaves the draft as it was', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Harbor Cafe', 'ap@harbor.example')));
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const before = written(app, tenant);
      const row = wholeInvoiceRow(app, invoiceId);
      expectError(await send(invoiceId), 402, 'read_only_billing_state');
      expect(wholeInvoiceRow(app, invoiceId)).to.deep.equal(row);
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it('replays the same 200 for the same Idempotency-Key and writes nothing more (one entry, one email)', async () => {
      const invoiceId = await draft(accrualInvoice(customer('Harbor Cafe', 'ap@harbor.example')));
      const headers = { 'Idempotency-Key': 'send-inv-0001' };
      const first = await send(invoiceId, headers);
      expect(first.status, first.text).to.equal(200);
      const after = written(app, tenant);
      const replay = await send(invoiceId, headers);
      expect(replay.status).to.equal(200);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(written(app, tenant)).to.deep.equal(after);
      expect(entriesFor(app, 'invoice', invoiceId)).to.have.length(1);
      expect(emailsOf(app, invoiceId)).to.have.length(1);
    });
  });

  describe('a cash-basis business', () => {
    /**
     * USD, 8.875 % tax:
     *   Consulting  1 x 600.00 = 600.00  Service Revenue
     *   Parts       4 x 100.00 = 400.00  Sales
     *   subtotal 1,000.00; tax 1,000.00 x 8.875 % = 88.75; total 1,088.75
     */
    it('posts the send in the accrual view only, then recognises revenue and tax as each payment arrives', async () => {
      const cashBusiness = buildBusiness(app.db, app.clock, { tenantId: tenant.id, basis: 'cash' });
      const invoiceId = await draft({
        entityId: cashBusiness.id,
        customerId: customer('Corner Bakery', 'owner@bakery.example'),
        issueDate: '2026-03-02',
        taxRatePercent: '8.875',
        lines: [
          { description: 'Consulting', quantity: '1', unitPriceCents: '60000', accountId: accountId('Service Revenue', cashBusiness.id) },
          { description: 'Parts', quantity: '4', unitPriceCents: '10000', accountId: accountId('Sales', cashBusiness.id) },
        ],
      });
      await sent(invoiceId);
      expect(linesOf(app, oneEntryFor(app, 'invoice', invoiceId).id)).to.deep.equal([
        line('Accounts Receivable', 'debit', 108875n, 'accrual'),
        line('Service Revenue', 'credit', 60000n, 'accrual'),
        line('Sales', 'credit', 40000n, 'accrual'),
        line('Sales Tax Payable', 'credit', 8875n, 'accrual'),
      ]);
      expect(ledgerTotals(app.db, cashBusiness.id, 'cash')).to.deep.equal({ debitCents: 0n, creditCents: 0n });

      /*
       * Payment 1: 500.00 on 2026-03-05.
       *   revenue so far = round(50,000 x 100,000 / 108,875) = round(45,923.77...) = 45,924
       *   sales tax      = 50,000 - 45,924 = 4,076
       *   45,924 over the accounts 600 : 400 (largest remainder): 27,554.4 and 18,369.6 floor to
       *   27,554 and 18,369; the cent left over goes to the larger remainder (.6, Sales): 18,370.
       */
      const first = await paid(invoiceId, { amountCents: '50000', method: 'check', paidAt: '2026-03-05' });
      expect(first.body.status).to.equal('partially_paid');
      expect(linesOf(app, oneEntryFor(app, 'invoice_payment', first.body.paymentId).id)).to.deep.equal([
        line('Business Checking', 'debit', 50000n, 'both'),
        line('Accounts Receivable', 'credit', 50000n, 'accrual'),
        line('Service Revenue', 'credit', 27554n, 'cash'),
        line('Sales', 'credit', 18370n, 'cash'),
        line('Sales Tax Payable', 'credit', 4076n, 'cash'),
      ]);
      expect(balanceOf(app, cashBusiness.id, 'Service Revenue', 'cash') + balanceOf(app, cashBusiness.id, 'Sales', 'cash')).to.equal(-45924n);
      expect(balanceOf(app, cashBusiness.id, 'Sales Tax Payable', 'cash')).to.equal(-4076n);
      expectTrialBalance(app, cashBusiness.id);

      /*
       * Payment 2: the remaining 588.75 on 2026-03-12.
       *   revenue so far = round(108,875 x 100,000 / 108,875) = 100,000, so this payment's
       *   revenue = 100,000 - 45,924 = 54,076, and its sales tax = 58,875 - 54,076 = 4,799
       *   54,076 at 600 : 400: 32,445.6 and 21,630.4 floor to 32,445 and 21,630; the cent left
       *   over goes to .6 (Service Revenue): 32,446.
       *   In all: Service Revenue 27,554 + 32,446 = 60,000; Sales 18,370 + 21,630 = 40,000;
       *   sales tax 4,076 + 4,799 = 8,875: the invoice's own figures.
       */
      const second = await paid(invoiceId, { amountCents: '58875', method: 'wire', paidAt: '2026-03-12' });
      expect(second.body.status).to.equal('paid');
      expect(linesOf(app, oneEntryFor(app, 'invoice_payment', second.body.paymentId).id)).to.deep.equal([
        line('Business Checking', 'debit', 58875n, 'both'),
        line('Accounts Receivable', 'credit', 58875n, 'accrual'),
        line('Service Revenue', 'credit', 32446n, 'cash'),
        line('Sales', 'credit', 21630n, 'cash'),
        line('Sales Tax Payable', 'credit', 4799n, 'cash'),
      ]);
      expect(balanceOf(app, cashBusiness.id, 'Service Revenue', 'cash')).to.equal(-60000n);
      expect(balanceOf(app, cashBusiness.id, 'Sales', 'cash')).to.equal(-40000n);
      expect(balanceOf(app, cashBusiness.id, 'Sales Tax Payable', 'cash')).to.equal(-8875n);
      expect(balanceOf(app, cashBusiness.id, 'Accounts Receivable', 'accrual')).to.equal(0n);
      expectTrialBalance(app, cashBusiness.id);
    });
  });

  describe('a EUR invoice', () => {
    it('is converted once at the issue date rate, and each payment realises its FX difference', async () => {
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-02', usdPerUnit: '1.0812' });
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-09', usdPerUnit: '1.0950' });
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.0700' });
      const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
      const sendRes = await sent(invoiceId);
      expect(sendRes.body).to.deep.include({
        status: 'sent',
        currency: 'EUR',
        subtotal: eurMoney('100000', '€1,000.00'),
        tax: eurMoney('20000', '€200.00'),
        total: eurMoney('120000', '€1,200.00'),
        balance: eurMoney('120000', '€1,200.00'),
      });
      expect(provider.requests, 'a stored rate needs no look-up').to.deep.equal([]);
      const sendEntry = oneEntryFor(app, 'invoice', invoiceId);
      expect(sendEntry.entry_date).to.equal('2026-03-02');
      expect(linesOf(app, sendEntry.id)).to.deep.equal(EUR_SEND_LINES);
      expect(invoiceRow(app, invoiceId)).to.deep.include({ usd_per_unit: '1.0812', subtotal_usd_cents: 108120n, tax_usd_cents: 21624n });

      /*
       * Payment 1: EUR 500.00 on 2026-03-09 at 1.0950.
       *   cash in the bank      50,000 x 1.0950 = 54,750 (USD 547.50)
       *   receivable cleared    50,000 x 1.0812 = 54,060 (USD 540.60), at the issue date's rate
       *   realised FX gain      54,750 - 54,060 = 690 (USD 6.90), credited
       *   cash view: revenue so far = round(54,750 x 100,000 / 120,000) = 45,625 exactly;
       *              sales tax = 54,750 - 45,625 = 9,125
       */
      const first = await paid(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-03-09' });
      expect(first.body).to.deep.equal({
        paymentId: first.body.paymentId,
        invoiceId,
        status: 'partially_paid',
        balance: eurMoney('70000', '€700.00'),
      });
      expect(first.body.paymentId).to.match(UUID);
      const firstEntry = oneEntryFor(app, 'invoice_payment', first.body.paymentId);
      expect(firstEntry.entry_date).to.equal('2026-03-09');
      expect(linesOf(app, firstEntry.id)).to.deep.equal([
        line('Business Checking', 'debit', 54750n, 'both'),
        line('Accounts Receivable', 'credit', 54060n, 'accrual'),
        line('Realized FX Gain or Loss', 'credit', 690n, 'accrual'),
        line('Service Revenue', 'credit', 45625n, 'cash'),
        line('Sales Tax Payable', 'credit', 9125n, 'cash'),
      ]);
      // 129,744 - 54,060 = 75,684 still receivable.
      expect(balanceOf(app, tenant.business.id, 'Accounts Receivable', 'accrual')).to.equal(75684n);
      expectTrialBalance(app, tenant.business.id);

      /*
       * Payment 2: EUR 700.00 on 2026-03-13 at 1.0700; it settles the invoice.
       *   cash in the bank      70,000 x 1.0700 = 74,900 (USD 749.00)
       *   receivable cleared    whatever remains: 129,744 - 54,060 = 75,684 (USD 756.84)
       *                         (70,000 x 1.0812 = 75,684 too; the rule does not depend on it)
       *   realised FX loss      74,900 - 75,684 = -784 (USD 7.84), debited
       *   cash view: revenue so far = round(129,650 x 100,000 / 120,000) = round(108,041.67) = 108,042;
       *              this payment's revenue 108,042 - 45,625 = 62,417; sales tax 74,900 - 62,417 = 12,483
       */
      const second = await paid(invoiceId, { amountCents: '70000', method: 'check', paidAt: '2026-03-13' });
      expect(second.body).to.deep.equal({ paymentId: second.body.paymentId, invoiceId, status: 'paid', balance: eurMoney('0', '€0.00') });
      expect(linesOf(app, oneEntryFor(app, 'invoice_payment', second.body.paymentId).id)).to.deep.equal([
        line('Business Checking', 'debit', 74900n, 'both'),
        line('Accounts Receivable', 'credit', 75684n, 'accrual'),
        line('Realized FX Gain or Loss', 'debit', 784n, 'accrual'),
        line('Service Revenue', 'credit', 62417n, 'cash'),
        line('Sales Tax Payable', 'credit', 12483n, 'cash'),
      ]);
      expect(balanceOf(app, tenant.business.id, 'Accounts Receivable', 'accrual')).to.equal(0n);
      // Net realised FX: 690 gain - 784 loss = 94 loss (a debit balance), = cash 129,650 - receivable 129,744.
      expect(balanceOf(app, tenant.business.id, 'Realized FX Gain or Loss', 'accrual')).to.equal(94n);
      expect(balanceOf(app, tenant.business.id, 'Business Checking', 'accrual')).to.equal(129650n);
      expectTrialBalance(app, tenant.business.id);

      const detail = (await getInvoice(invoiceId)).body;
      expect(detail).to.deep.include({ status: 'paid', paid: eurMoney('120000', '€1,200.00'), balance: eurMoney('0', '€0.00') });
      expect(detail.payments).to.deep.equal([
        { amount: eurMoney('50000', '€500.00'), method: 'wire', paidAt: '2026-03-09' },
        { amount: eurMoney('70000', '€700.00'), method: 'check', paidAt: '2026-03-13' },
      ]);
      expect(provider.requests).to.deep.equal([]);
    });
  });

  describe('a missing exchange rate', () => {
    it('send looks the rate up once, stores it and posts', async () => {
      provider.reply = { body: frankfurterDay('2026-03-02', '1.0812') };
      const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
      await sent(invoiceId);
      expect(provider.requests).to.deep.equal([frankfurterRequest('2026-03-02')]);
      const stored = app.db.prepare("SELECT usd_per_unit, source FROM exchange_rates WHERE currency = 'EUR' AND rate_date = '2026-03-02'").get();
      expect(stored).to.deep.equal({ usd_per_unit: '1.0812', source: 'frankfurter' });
      // Posted at the rate looked up: the same figures as with a stored 1.0812.
      expect(linesOf(app, oneEntryFor(app, 'invoice', invoiceId).id)).to.deep.equal(EUR_SEND_LINES);
    });

    it("uses the provider's latest earlier quote for a day without one (a Sunday answers Friday's)", async () => {
      // 2026-03-01 is a Sunday: Frankfurter answers Friday 2026-02-27's quote, stored under that date.
      provider.reply = { body: frankfurterDay('2026-02-27', '1.0812') };
      const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example'), { issueDate: '2026-03-01' }));
      await sent(invoiceId);
      expect(provider.requests).to.deep.equal([frankfurterRequest('2026-03-01')]);
      expect(app.db.prepare("SELECT rate_date FROM exchange_rates WHERE currency = 'EUR'").all()).to.deep.equal([{ rate_date: '2026-02-27' }]);
      expect(linesOf(app, oneEntryFor(app, 'invoice', invoiceId).id)).to.deep.equal(EUR_SEND_LINES);
    });

    it('send answers 422 issueDate when the provider answers 500, and the draft stays a draft with nothing posted', async () => {
      provider.reply = { status: 500, body: '{"message":"internal"}' };
      const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
      const before = written(app, tenant);
      const row = wholeInvoiceRow(app, invoiceId);
      expectInvalid(await send(invoiceId), 'issueDate');
      expect(provider.requests, 'looked up once').to.deep.equal([frankfurterRequest('2026-03-02')]);
      expect(wholeInvoiceRow(app, invoiceId)).to.deep.equal(row);
      expect(row.status).to.equal('draft');
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it('send answers 422 issueDate when the provider drops the connection', async () => {
      provider.reply = { reset: true };
      const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
      expectInvalid(await send(invoiceId), 'issueDate');
      expect(invoiceRow(app, invoiceId).status).to.equal('draft');
      expect(entriesFor(app, 'invoice', invoiceId)).to.deep.equal([]);
    });

    it('send answers 422 issueDate when nothing listens at the provider URL', async () => {
      const offline = await startTestApp(START, { config: { fxProviderUrl: await deadUrl() } });
      try {
        const offlineTenant = buildApiTenant(offline, { plan: 'large' });
        const customerId = addCustomer(offline, offlineTenant.id, { name: 'Atelier Lyon' });
        const created = await offline.post('/api/v1/invoices', offlineTenant.key, {
          customerId,
          issueDate: '2026-03-02',
          currency: 'EUR',
          lines: [{ description: 'Translation', quantity: '8', unitPriceCents: '12500', accountId: accountIdByName(offline.db, offlineTenant.business.id, 'Service Revenue') }],
        });
        expect(created.status, created.text).to.equal(201);
        const invoiceId = created.body.invoiceId as string;
        expectInvalid(await offline.post(`/api/v1/invoices/${invoiceId}/send`, offlineTenant.key), 'issueDate');
        expect(invoiceRow(offline, invoiceId).status).to.equal('draft');
        expect(countRows(offline.db, 'SELECT count(*) FROM journal_entries')).to.equal(0);
        expect(countRows(offline.db, 'SELECT count(*) FROM exchange_rates')).to.equal(0);
      } finally {
        await offline.close();
      }
    });

    it('a 422 for a missing rate frees the Idempotency-Key: once the rate is set, the same key sends', async () => {
      const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
      const headers = { 'Idempotency-Key': 'send-eur-1' };
      expectInvalid(await send(invoiceId, headers), 'issueDate');
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-02', usdPerUnit: '1.0812' });
      const retried = await send(invoiceId, headers);
      expect(retried.status, retried.text).to.equal(200);
      expect(retried.headers['idempotent-replayed']).to.equal(undefined);
      expect(linesOf(app, oneEntryFor(app, 'invoice', invoiceId).id)).to.deep.equal(EUR_SEND_LINES);
    });

    describe('for a payment', () => {
      /** A EUR invoice sent at a stored 1.0812, whose stored rates are then gone (none on or before any day). */
      async function sentEurInvoiceWithoutRates(): Promise<string> {
        setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-02', usdPerUnit: '1.0812' });
        const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
        await sent(invoiceId);
        app.db.prepare('DELETE FROM exchange_rates').run();
        return invoiceId;
      }

      it('looks the payment date rate up once, stores it and converts the cash at it', async () => {
        const invoiceId = await sentEurInvoiceWithoutRates();
        provider.reply = { body: frankfurterDay('2026-03-09', '1.0950') };
        const res = await paid(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-03-09' });
        expect(provider.requests).to.deep.equal([frankfurterRequest('2026-03-09')]);
        expect(app.db.prepare("SELECT usd_per_unit FROM exchange_rates WHERE currency = 'EUR' AND rate_date = '2026-03-09'").get()).to.deep.equal({
          usd_per_unit: '1.095',
        });
        // 50,000 x 1.0950 = 54,750 in the bank; 50,000 x 1.0812 = 54,060 cleared; 690 gain.
        expect(linesOf(app, oneEntryFor(app, 'invoice_payment', res.body.paymentId).id).slice(0, 3)).to.deep.equal([
          line('Business Checking', 'debit', 54750n, 'both'),
          line('Accounts Receivable', 'credit', 54060n, 'accrual'),
          line('Realized FX Gain or Loss', 'credit', 690n, 'accrual'),
        ]);
      });

      it('answers 422 paidAt when the provider fails, and records nothing', async () => {
        const invoiceId = await sentEurInvoiceWithoutRates();
        provider.reply = { status: 500, body: '{}' };
        const before = written(app, tenant);
        expectInvalid(await pay(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-03-09' }), 'paidAt');
        expect(provider.requests).to.deep.equal([frankfurterRequest('2026-03-09')]);
        expect(written(app, tenant)).to.deep.equal(before);
        expect(invoiceRow(app, invoiceId)).to.include({ status: 'sent', paid_cents: 0n });
      });

      /*
       * DESIGN.md: "a payment is converted at its own date's rate". With only the issue date's
       * rate stored, a payment a week later must not silently take the issue date's rate (which
       * would realise no FX difference at all): it looks its own date's rate up, like send does.
       */
      it("looks up the payment date's rate when only an earlier day's (the issue date's) is stored", async () => {
        setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-02', usdPerUnit: '1.0812' });
        const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
        await sent(invoiceId);
        provider.reply = { body: frankfurterDay('2026-03-09', '1.0950') };
        const res = await paid(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-03-09' });
        expect(provider.requests, 'the payment date has no rate of its own: it is looked up').to.deep.equal([frankfurterRequest('2026-03-09')]);
        expect(linesOf(app, oneEntryFor(app, 'invoice_payment', res.body.paymentId).id)[0]).to.deep.equal(line('Business Checking', 'debit', 54750n, 'both'));
      });

      it('answers 422 paidAt naming the newest stored rate when it is more than 4 days older and a newer one cannot be looked up (no stale rate is posted)', async () => {
        setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-02', usdPerUnit: '1.0812' });
        const invoiceId = await draft(eurInvoice(customer('Atelier Lyon', 'compta@atelier.example')));
        await sent(invoiceId);
        provider.reply = { status: 500, body: '{}' };
        provider.requests.length = 0;
        const entries = app.db.prepare("SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice_payment'").get() as { n: bigint };
        const res = await pay(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-03-09' });
        expect(res.status, res.text).to.equal(422);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(res.body.error.message).to.match(/^paidAt: /).and.include('2026-03-02').and.include('daybook rate set');
        expect(provider.requests).to.have.length(1);
        expect(app.db.prepare("SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice_payment'").get()).to.deep.equal(entries);
      });
    });
  });

  describe('POST /invoices/{id}/payments', () => {
    /** The accrual USD invoice, sent: total 2,216.70. */
    async function sentInvoice(customerName = 'Harbor Cafe'): Promise<string> {
      const invoiceId = await draft(accrualInvoice(customer(customerName, 'ap@harbor.example')));
      await sent(invoiceId);
      return invoiceId;
    }

    it('records partial and final payments: paid, balance and status after each, and GET lists them', async () => {
      const invoiceId = await sentInvoice();
      // 2,216.70 - 1,000.00 = 1,216.70 owed.
      const first = await paid(invoiceId, { amountCents: '100000', method: 'check', paidAt: '2026-03-06', memo: 'cheque 1042' });
      expect(first.body).to.deep.equal({ paymentId: first.body.paymentId, invoiceId, status: 'partially_paid', balance: usdMoney('121670', '$1,216.70') });
      let detail = (await getInvoice(invoiceId)).body;
      expect(detail).to.deep.include({ status: 'partially_paid', paid: usdMoney('100000', '$1,000.00'), balance: usdMoney('121670', '$1,216.70') });
      expect(detail.payments).to.deep.equal([{ amount: usdMoney('100000', '$1,000.00'), method: 'check', paidAt: '2026-03-06' }]);

      // 1,216.70 - 216.70 = 1,000.00 owed.
      const second = await paid(invoiceId, { amountCents: '21670', method: 'cash', paidAt: '2026-03-10' });
      expect(second.body).to.deep.include({ status: 'partially_paid', balance: usdMoney('100000', '$1,000.00') });

      const third = await paid(invoiceId, { amountCents: '100000', method: 'other', paidAt: '2026-03-12' });
      expect(third.body).to.deep.include({ status: 'paid', balance: usdMoney('0', '$0.00') });
      detail = (await getInvoice(invoiceId)).body;
      expect(detail).to.deep.include({ status: 'paid', paid: usdMoney('221670', '$2,216.70'), balance: usdMoney('0', '$0.00') });
      expect(detail.payments).to.deep.equal([
        { amount: usdMoney('100000', '$1,000.00'), method: 'check', paidAt: '2026-03-06' },
        { amount: usdMoney('21670', '$216.70'), method: 'cash', paidAt: '2026-03-10' },
        { amount: usdMoney('100000', '$1,000.00'), method: 'other', paidAt: '2026-03-12' },
      ]);
      expect(invoiceRow(app, invoiceId)).to.include({ status: 'paid', paid_cents: 221670n });

      // The USD payment of 1,000.00 on this accrual business: no FX line, the cash view's revenue
      // so far round(100,000 x 203,600 / 221,670) = round(91,848.23) = 91,848, tax 8,152.
      // 91,848 over Service Revenue : Sales = 190,602 : 12,998 -> 85,984.34 and 5,863.66: the floors
      // 85,984 + 5,863 leave one cent, which goes to the larger remainder (.66, Sales): 5,864.
      expect(linesOf(app, oneEntryFor(app, 'invoice_payment', first.body.paymentId).id)).to.deep.equal([
        line('Business Checking', 'debit', 100000n, 'both'),
        line('Accounts Receivable', 'credit', 100000n, 'accrual'),
        line('Service Revenue', 'credit', 85984n, 'cash'),
        line('Sales', 'credit', 5864n, 'cash'),
        line('Sales Tax Payable', 'credit', 8152n, 'cash'),
      ]);
      expect(balanceOf(app, tenant.business.id, 'Accounts Receivable', 'accrual')).to.equal(0n);
      expect(balanceOf(app, tenant.business.id, 'Business Checking', 'cash')).to.equal(221670n);
      expectTrialBalance(app, tenant.business.id);
    });

    it('checks the state before the amount: a draft, a void and a paid invoice are 409 even for an amount over the balance', async () => {
      const draftId = await draft(accrualInvoice(customer('Draft Co', 'a@draft.example')));
      const voidId = await sentInvoice('Void Co');
      inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, voidId));
      const paidId = await sentInvoice('Paid Co');
      await paid(paidId, { amountCents: '221670', method: 'wire', paidAt: '2026-03-10' });
      const before = written(app, tenant);
      for (const id of [draftId, voidId, paidId]) {
        expectError(await pay(id, { amountCents: '999999999', method: 'check', paidAt: '2026-03-10' }), 409, 'conflict');
        expectError(await pay(id, { amountCents: '1', method: 'check', paidAt: '2026-03-10' }), 409, 'conflict');
      }
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it('refuses an amount over the balance (422 amountCents) and zero (422)', async () => {
      const invoiceId = await sentInvoice();
      const before = written(app, tenant);
      expectInvalid(await pay(invoiceId, { amountCents: '221671', method: 'check', paidAt: '2026-03-10' }), 'amountCents');
      expectInvalid(await pay(invoiceId, { amountCents: '0', method: 'check', paidAt: '2026-03-10' }), 'amountCents');
      await paid(invoiceId, { amountCents: '200000', method: 'check', paidAt: '2026-03-10' });
      // 2,216.70 - 2,000.00 = 216.70 left: one cent more is over the balance.
      expectInvalid(await pay(invoiceId, { amountCents: '21671', method: 'check', paidAt: '2026-03-10' }), 'amountCents');
      expect(written(app, tenant).payments).to.equal(before.payments + 1);
    });

    it("refuses a method outside check, cash, wire and other (422 method), the pay page's stripe included", async () => {
      const invoiceId = await sentInvoice();
      const before = written(app, tenant);
      for (const method of ['stripe', 'card', 'Check', '']) {
        expectInvalid(await pay(invoiceId, { amountCents: '100', method, paidAt: '2026-03-10' }), 'method');
      }
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it("dates a payment without paidAt on the clock's UTC date", async () => {
      const invoiceId = await sentInvoice();
      // 23:59 in UTC is still the 15th, whatever the server's time zone says.
      app.clock.set('2026-03-15T23:59:30.000Z');
      const res = await paid(invoiceId, { amountCents: '100', method: 'cash' });
      expect(oneEntryFor(app, 'invoice_payment', res.body.paymentId).entry_date).to.equal(TODAY);
      expect((await getInvoice(invoiceId)).body.payments).to.deep.equal([{ amount: usdMoney('100', '$1.00'), method: 'cash', paidAt: TODAY }]);
    });

    it('refuses paidAt before the issue date (422 paidAt)', async () => {
      const invoiceId = await sentInvoice();
      const before = written(app, tenant);
      expectInvalid(await pay(invoiceId, { amountCents: '100', method: 'cash', paidAt: '2026-03-01' }), 'paidAt');
      expect(written(app, tenant)).to.deep.equal(before);
      // The issue date itself is fine.
      await paid(invoiceId, { amountCents: '100', method: 'cash', paidAt: '2026-03-02' });
    });

    it('refuses paidAt in a locked period (409 period_locked) and takes the day after the lock', async () => {
      const invoiceId = await sentInvoice();
      lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-03-05');
      const before = written(app, tenant);
      expectError(await pay(invoiceId, { amountCents: '100', method: 'cash', paidAt: '2026-03-05' }), 409, 'period_locked', 'paidAt:');
      expect(written(app, tenant)).to.deep.equal(before);
      expect(invoiceRow(app, invoiceId)).to.include({ status: 'sent', paid_cents: 0n });
      await paid(invoiceId, { amountCents: '100', method: 'cash', paidAt: '2026-03-06' });
    });

    it('refuses while billing is past due (402 read_only_billing_state)', async () => {
      const invoiceId = await sentInvoice();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const before = written(app, tenant);
      expectError(await pay(invoiceId, { amountCents: '100', method: 'cash', paidAt: '2026-03-10' }), 402, 'read_only_billing_state');
      expect(written(app, tenant)).to.deep.equal(before);
      expect(invoiceRow(app, invoiceId)).to.include({ status: 'sent', paid_cents: 0n });
    });

    /*
     * MXN 1,000.00 sent at 0.05 USD per peso: receivable 100,000 x 0.05 = 5,000 (USD 50.00).
     * A payment of MXN 0.09: cash round(9 x 0.05 = 0.45) = 0 and receivable cleared
     * round(9 x 0.05) = 0, so every journal line of it is zero. That is the client's ordinary
     * input, not a server fault: it must be recorded or refused (422), never answered with 500.
     */
    it('answers a payment worth less than one US cent without a server fault', async () => {
      setRate(app.db, app.clock, CLI_ACTOR, { currency: 'MXN', date: '2026-03-02', usdPerUnit: '0.05' });
      const invoiceId = await draft({
        customerId: customer('Taller Oaxaca', 'pagos@taller.example'),
        issueDate: '2026-03-02',
        currency: 'MXN',
        lines: [{ description: 'Repairs', quantity: '1', unitPriceCents: '100000', accountId: accountId('Service Revenue') }],
      });
      await sent(invoiceId);
      expect(linesOf(app, oneEntryFor(app, 'invoice', invoiceId).id)[0]).to.deep.equal(line('Accounts Receivable', 'debit', 5000n, 'accrual'));
      const before = written(app, tenant);
      const res = await app.allowingFaults(() => pay(invoiceId, { amountCents: '9', method: 'cash', paidAt: '2026-03-02' }));
      expect(res.status, `a 201 or a 422, not ${res.status}: ${res.text}`).to.be.oneOf([201, 422]);
      if (res.status === 422) {
        expectInvalid(res, 'amountCents');
        expect(written(app, tenant)).to.deep.equal(before);
      } else {
        expect(invoiceRow(app, invoiceId).paid_cents).to.equal(9n);
        expectTrialBalance(app, tenant.business.id);
      }
    });

    it('replays a payment for the same Idempotency-Key without recording it twice', async () => {
      const invoiceId = await sentInvoice();
      const body = { amountCents: '5000', method: 'check', paidAt: '2026-03-10' };
      const first = await pay(invoiceId, body, { 'Idempotency-Key': 'pay-1' });
      expect(first.status, first.text).to.equal(201);
      const replay = await pay(invoiceId, body, { 'Idempotency-Key': 'pay-1' });
      expect(replay.status).to.equal(201);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(invoiceRow(app, invoiceId).paid_cents).to.equal(5000n);
      expect(entriesFor(app, 'invoice_payment', first.body.paymentId)).to.have.length(1);
    });
  });

  describe('POST /invoices/{id}/remind', () => {
    /** `email` null: a customer without an email address. */
    async function sentInvoice(email: string | null = 'ap@harbor.example', name = 'Harbor Cafe'): Promise<string> {
      const invoiceId = await draft(accrualInvoice(customer(name, email ?? undefined)));
      await sent(invoiceId);
      return invoiceId;
    }
    const setStatus = (id: string, status: string) => app.db.prepare('UPDATE invoices SET status = ? WHERE id = ?').run(status, id);
    const remindersOf = (id: string) => countRows(app.db, 'SELECT count(*) FROM invoice_reminders WHERE invoice_id = ?', id);

    it('answers 200 {invoiceId, remindedAt}, writes a reminder email and posts nothing', async () => {
      const invoiceId = await sentInvoice();
      const before = written(app, tenant);
      const res = await remind(invoiceId);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ invoiceId, remindedAt: START });
      // Both written at the same instant: compared in kind order.
      expect(emailsOf(app, invoiceId).map((e) => [e.kind, e.to_address, e.status]).sort()).to.deep.equal([
        ['invoice', 'ap@harbor.example', 'sent'],
        ['reminder', 'ap@harbor.example', 'sent'],
      ]);
      const after = written(app, tenant);
      expect(after.entries).to.equal(before.entries);
      expect(after.lines).to.equal(before.lines);
      expect(after.emails).to.equal(before.emails + 1);
      expect(after.reminders).to.equal(before.reminders + 1);
    });

    it('reminds a sent, viewed, partially paid and overdue invoice', async () => {
      const sentId = await sentInvoice('a@example.com', 'Sent Co');
      const viewedId = await sentInvoice('b@example.com', 'Viewed Co');
      setStatus(viewedId, 'viewed');
      const partlyPaidId = await sentInvoice('c@example.com', 'Partly Paid Co');
      await paid(partlyPaidId, { amountCents: '100', method: 'cash', paidAt: '2026-03-10' });
      const overdueId = await sentInvoice('d@example.com', 'Overdue Co');
      setStatus(overdueId, 'overdue');
      for (const [id, status] of [
        [sentId, 'sent'],
        [viewedId, 'viewed'],
        [partlyPaidId, 'partially_paid'],
        [overdueId, 'overdue'],
      ] as const) {
        expect(invoiceRow(app, id).status).to.equal(status);
        const res = await remind(id);
        expect(res.status, `${status}: ${res.text}`).to.equal(200);
        expect(res.body).to.deep.equal({ invoiceId: id, remindedAt: START });
        expect(invoiceRow(app, id).status, 'a reminder does not change the status').to.equal(status);
      }
    });

    it('refuses a draft, a paid and a void invoice (409 conflict)', async () => {
      const draftId = await draft(accrualInvoice(customer('Draft Co', 'a@draft.example')));
      const paidId = await sentInvoice('b@example.com', 'Paid Co');
      await paid(paidId, { amountCents: '221670', method: 'wire', paidAt: '2026-03-10' });
      const voidId = await sentInvoice('c@example.com', 'Void Co');
      inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, voidId));
      const before = written(app, tenant);
      for (const id of [draftId, paidId, voidId]) expectError(await remind(id), 409, 'conflict');
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it('refuses a second reminder within 24 hours (409), still at 23h59m, and takes it at 24h', async () => {
      const invoiceId = await sentInvoice();
      expect((await remind(invoiceId)).status).to.equal(200);
      expectError(await remind(invoiceId), 409, 'conflict');
      app.clock.advanceMs((23 * 60 + 59) * 60_000);
      expectError(await remind(invoiceId), 409, 'conflict');
      expect(remindersOf(invoiceId)).to.equal(1);
      app.clock.advanceMs(60_000);
      const again = await remind(invoiceId);
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.deep.equal({ invoiceId, remindedAt: '2026-03-16T12:00:00.000Z' });
      expect(remindersOf(invoiceId)).to.equal(2);
      expect(emailsOf(app, invoiceId).filter((e) => e.kind === 'reminder')).to.have.length(2);
    });

    it('works while billing is past due (it posts nothing)', async () => {
      const invoiceId = await sentInvoice();
      setTenant(app, tenant.id, { billingState: 'past_due' });
      const res = await remind(invoiceId);
      expect(res.status, res.text).to.equal(200);
      expect(remindersOf(invoiceId)).to.equal(1);
    });

    it('refuses a customer without an email address (422 naming the invoice id) and records nothing', async () => {
      const invoiceId = await sentInvoice(null, 'Walk-in Customer');
      expect(emailsOf(app, invoiceId)).to.deep.equal([]);
      const before = written(app, tenant);
      expectInvalid(await remind(invoiceId), 'id');
      expect(written(app, tenant)).to.deep.equal(before);
    });

    it('accepts an empty JSON object as the body', async () => {
      const invoiceId = await sentInvoice();
      const res = await remind(invoiceId, {});
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ invoiceId, remindedAt: START });
    });
  });
});
