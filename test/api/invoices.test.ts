import { expect } from 'chai';
import { voidInvoice } from '../../src/books/invoice-posting.js';
import { inTransaction } from '../../src/db/connection.js';
import type { TestApp, TestResponse } from '../support/app.js';
import { buildApiTenant, countRows, expectError, expectInvalid, setTenant, type ApiTenant, useFreshTenantPerTest } from '../support/api.js';
import { accountIdByName, anyAccountIdByName, buildBusiness, buildKey, buildTenant, TEST_ACTOR } from '../support/factories.js';
import {
  addBilledCustomer,
  type CreatedInvoiceReply,
  expectInvoiceCreated,
  invoiceWrites,
  PAY_URL,
  payInvoice,
  sendInvoice,
} from '../support/invoicing.js';
import { archive, withQuery } from '../support/register.js';

const START = '2026-03-15T12:00:00.000Z';
const NO_SUCH_ID = '0b9c3c52-6f1e-4c1a-9d59-4c1f0e7d2a11';
const CEILING = '1000000000000000'; // 10^15 cents: ten trillion dollars

type Currency = 'USD' | 'CAD' | 'EUR' | 'GBP' | 'MXN';
const money = (cents: string, formatted: string, currency: Currency = 'USD') => ({ cents, formatted, currency });

interface InvoiceRow {
  business_id: string;
  customer_id: string;
  number: string;
  status: string;
  currency: string;
  issue_date: string;
  due_date: string;
  payment_terms_days: bigint | null;
  tax_rate_percent: string | null;
  subtotal_cents: bigint;
  tax_cents: bigint;
  total_cents: bigint;
  paid_cents: bigint;
  memo: string | null;
  journal_entry_id: string | null;
  sent_at: string | null;
}

interface InvoiceLineRow {
  line_no: bigint;
  description: string;
  quantity: string;
  unit_price_cents: bigint;
  amount_cents: bigint;
  ledger_account_id: string;
}

/** Everything any POST /invoices could leave anywhere in the books: compared before and after a refusal. */
interface Everything {
  invoices: number;
  lines: number;
  invoiceAudit: number;
  numbersTaken: number;
  journalEntries: number;
  outbox: number;
}

describe('invoices', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  let customerId: string;

  // A fresh account per test: numbering, budgets and billing state never leak between tests.
  useFreshTenantPerTest(
    (started) => {
      ({ app, tenant } = started);
      customerId = addBilledCustomer(app, tenant.id);
    },
    { at: START, tenant: { plan: 'large' } },
  );

  const accountId = (name: string, businessId = tenant.business.id): string => accountIdByName(app.db, businessId, name);
  /** Any account by name, headings and archived ones included. */
  const anyAccountId = (name: string, businessId = tenant.business.id): string => anyAccountIdByName(app.db, businessId, name);

  const line = (overrides: Record<string, unknown> = {}, businessId = tenant.business.id): Record<string, unknown> => ({
    description: 'Consulting',
    quantity: '2',
    unitPriceCents: '12500',
    accountId: accountId('Service Revenue', businessId),
    ...overrides,
  });
  /** A valid body; an override of `undefined` leaves the field out (JSON.stringify drops it). */
  const invoice = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ customerId, lines: [line()], ...overrides });

  const post = (body: unknown, key = tenant.key, headers: Record<string, string> = {}): Promise<TestResponse> =>
    app.post('/api/v1/invoices', key, body, headers);
  /** POST /invoices expecting 201; the clock then moves on a second, so creation order is always visible. */
  const create = async (body: Record<string, unknown>, key = tenant.key): Promise<CreatedInvoiceReply> => {
    const created = expectInvoiceCreated(await post(body, key));
    app.clock.advanceMs(1000);
    return created;
  };
  const detail = async (id: string, key = tenant.key): Promise<any> => {
    const res = await app.get(`/api/v1/invoices/${id}`, key);
    expect(res.status, `GET /invoices/${id} (body: ${res.text.slice(0, 300)})`).to.equal(200);
    return res.body;
  };
  const list = async (query: Record<string, string | number | boolean | undefined> = {}, key = tenant.key): Promise<any> => {
    const res = await app.get(withQuery('/api/v1/invoices', query), key);
    expect(res.status, `GET /invoices (body: ${res.text.slice(0, 300)})`).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['invoices', 'nextCursor']);
    return res.body;
  };

  const invoiceRow = (id: string): InvoiceRow =>
    app.db
      .prepare(
        `SELECT business_id, customer_id, number, status, currency, issue_date, due_date, payment_terms_days, tax_rate_percent,
           subtotal_cents, tax_cents, total_cents, paid_cents, memo, journal_entry_id, sent_at FROM invoices WHERE id = ?`,
      )
      .get(id) as InvoiceRow;
  const lineRows = (id: string): InvoiceLineRow[] =>
    app.db
      .prepare('SELECT line_no, description, quantity, unit_price_cents, amount_cents, ledger_account_id FROM invoice_lines WHERE invoice_id = ? ORDER BY line_no')
      .all(id) as InvoiceLineRow[];
  const everything = (): Everything => ({
    invoices: countRows(app.db, 'SELECT count(*) FROM invoices'),
    lines: countRows(app.db, 'SELECT count(*) FROM invoice_lines'),
    invoiceAudit: countRows(app.db, "SELECT count(*) FROM audit_log WHERE action = 'invoice.create'"),
    numbersTaken: countRows(app.db, 'SELECT sum(next_invoice_number) FROM businesses'),
    journalEntries: countRows(app.db, 'SELECT count(*) FROM journal_entries'),
    outbox: countRows(app.db, 'SELECT count(*) FROM email_outbox'),
  });

  describe('POST /invoices', () => {
    describe('success', () => {
      it('creates a draft (201 {invoiceId, invoiceNumber, webUrl}; webUrl is {siteUrl}/pay/{43-character token})', async () => {
        const res = await post(invoice());
        const created = expectInvoiceCreated(res);
        expect(created.invoiceNumber).to.equal('INV-0001');
        expect(created.webUrl).to.match(PAY_URL);
        expect(created.webUrl.split('/pay/')[1]).to.have.length(43);
        expect(res.headers['content-type']).to.match(/^application\/json/);
        expect(res.headers['idempotent-replayed']).to.equal(undefined);
        expect(invoiceRow(created.invoiceId)).to.deep.include({ business_id: tenant.business.id, customer_id: customerId, status: 'draft', number: 'INV-0001' });
      });

      it('gives every invoice its own pay link', async () => {
        const first = await create(invoice());
        const second = await create(invoice());
        expect(first.webUrl).to.not.equal(second.webUrl);
      });

      it('numbers a business\'s invoices INV-0001, INV-0002, INV-0003 in order', async () => {
        const numbers: string[] = [];
        for (let i = 0; i < 3; i++) numbers.push((await create(invoice())).invoiceNumber);
        expect(numbers).to.deep.equal(['INV-0001', 'INV-0002', 'INV-0003']);
      });

      it('numbers each business on its own: a second business of the account, and another account, start at INV-0001', async () => {
        const second = buildBusiness(app.db, app.clock, { tenantId: tenant.id });
        const other = buildApiTenant(app);
        const otherCustomer = addBilledCustomer(app, other.id);
        expect((await create(invoice({ entityId: tenant.business.id }))).invoiceNumber).to.equal('INV-0001');
        expect((await create(invoice({ entityId: tenant.business.id }))).invoiceNumber).to.equal('INV-0002');
        expect((await create(invoice({ entityId: second.id, lines: [line({}, second.id)] }))).invoiceNumber).to.equal('INV-0001');
        expect((await create({ customerId: otherCustomer, lines: [line({}, other.business.id)] }, other.key)).invoiceNumber).to.equal('INV-0001');
        expect((await create(invoice({ entityId: second.id, lines: [line({}, second.id)] }))).invoiceNumber).to.equal('INV-0002');
        expect((await create(invoice({ entityId: tenant.business.id }))).invoiceNumber).to.equal('INV-0003');
      });

      it('uses no number for a refused create: the next success takes the next number (INV-0001, refused, INV-0002)', async () => {
        expect((await create(invoice())).invoiceNumber).to.equal('INV-0001');
        expectInvalid(await post(invoice({ lines: [line({ quantity: '0' })] })), 'lines.0.quantity');
        expectInvalid(await post(invoice({ lines: [line({ accountId: accountId('Rent') })] })), 'lines.0.accountId');
        expectError(await post(invoice({ customerId: NO_SUCH_ID })), 404, 'not_found', 'customerId:');
        expectInvalid(await post(invoice({ issueDate: '2026-03-10', dueDate: '2026-03-09' })), 'dueDate');
        expect((await create(invoice())).invoiceNumber).to.equal('INV-0002');
      });

      it('never reuses a number, even of a voided invoice', async () => {
        const { invoiceId } = await create(invoice());
        inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, invoiceId)); // what `daybook invoice void` runs
        expect(invoiceRow(invoiceId).status).to.equal('void');
        expect((await create(invoice())).invoiceNumber).to.equal('INV-0002');
        expect(countRows(app.db, "SELECT count(*) FROM invoices WHERE business_id = ? AND number = 'INV-0001'", tenant.business.id)).to.equal(1);
      });

      // Worked by hand, rounding half away from zero to the cent (DESIGN, posting engine):
      //   line 1: 1.5      x 1999  = 2998.5    -> 2999
      //   line 2: 0.333333 x 10000 = 3333.33   -> 3333
      //   line 3: 2.5      x 1147  = 2867.5    -> 2868
      //   subtotal = 2999 + 3333 + 2868 = 9200
      //   tax = 9200 x 8.875 / 100  = 816.5     -> 817
      //   total = 9200 + 817 = 10017 ($100.17)
      // Truncating would give 2998, 3333, 2867 and 816; banker's rounding 2998 and 816.
      it('prices the draft exactly: line amounts, subtotal, tax at 8.875 % and total, each rounded half away from zero', async () => {
        const lines = [
          line({ description: 'Design, hours', quantity: '1.5', unitPriceCents: '1999' }),
          line({ description: 'A third of a retainer', quantity: '0.333333', unitPriceCents: '10000', accountId: accountId('Sales') }),
          line({ description: 'Widgets', quantity: '2.5', unitPriceCents: '1147', accountId: accountId('Other Income') }),
        ];
        const { invoiceId } = await create(invoice({ lines, taxRatePercent: '8.875', issueDate: '2026-03-01' }));

        expect(lineRows(invoiceId)).to.deep.equal([
          { line_no: 1n, description: 'Design, hours', quantity: '1.5', unit_price_cents: 1999n, amount_cents: 2999n, ledger_account_id: accountId('Service Revenue') },
          { line_no: 2n, description: 'A third of a retainer', quantity: '0.333333', unit_price_cents: 10000n, amount_cents: 3333n, ledger_account_id: accountId('Sales') },
          { line_no: 3n, description: 'Widgets', quantity: '2.5', unit_price_cents: 1147n, amount_cents: 2868n, ledger_account_id: accountId('Other Income') },
        ]);
        expect(invoiceRow(invoiceId)).to.deep.include({ tax_rate_percent: '8.875', subtotal_cents: 9200n, tax_cents: 817n, total_cents: 10017n, paid_cents: 0n });

        const shown = await detail(invoiceId);
        expect(shown.lines).to.deep.equal([
          { description: 'Design, hours', quantity: '1.5', unitPrice: money('1999', '$19.99'), amount: money('2999', '$29.99'), account: 'Service Revenue' },
          { description: 'A third of a retainer', quantity: '0.333333', unitPrice: money('10000', '$100.00'), amount: money('3333', '$33.33'), account: 'Sales' },
          { description: 'Widgets', quantity: '2.5', unitPrice: money('1147', '$11.47'), amount: money('2868', '$28.68'), account: 'Other Income' },
        ]);
        expect(shown.subtotal).to.deep.equal(money('9200', '$92.00'));
        expect(shown.tax).to.deep.equal(money('817', '$8.17'));
        expect(shown.total).to.deep.equal(money('10017', '$100.17'));
        expect(shown.balance).to.deep.equal(money('10017', '$100.17'));
      });

      it('charges no tax without a taxRatePercent (tax 0, total = subtotal)', async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ quantity: '3', unitPriceCents: '3333' })] }));
        expect(invoiceRow(invoiceId)).to.deep.include({ tax_rate_percent: null, subtotal_cents: 9999n, tax_cents: 0n, total_cents: 9999n });
      });

      it('keeps the memo, and null when none is sent', async () => {
        const withMemo = await create(invoice({ memo: 'Thank you for your business' }));
        const without = await create(invoice());
        expect(invoiceRow(withMemo.invoiceId).memo).to.equal('Thank you for your business');
        expect(invoiceRow(without.invoiceId).memo).to.equal(null);
      });

      it('posts nothing (no journal entry), emails nothing (no outbox row) and leaves the invoice a draft', async () => {
        const before = everything();
        const { invoiceId } = await create(invoice());
        expect(everything()).to.deep.equal({ ...before, invoices: before.invoices + 1, lines: before.lines + 1, invoiceAudit: before.invoiceAudit + 1, numbersTaken: before.numbersTaken + 1 });
        expect(countRows(app.db, 'SELECT count(*) FROM journal_entries WHERE business_id = ?', tenant.business.id)).to.equal(0);
        expect(countRows(app.db, 'SELECT count(*) FROM email_outbox WHERE invoice_id = ?', invoiceId)).to.equal(0);
        expect(invoiceRow(invoiceId)).to.deep.include({ status: 'draft', journal_entry_id: null, sent_at: null });
      });

      it("records invoice.create in the audit log under the key's name (authentication rule 9)", async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ quantity: '1', unitPriceCents: '4200' })] }));
        const rows = app.db
          .prepare('SELECT tenant_id, business_id, actor_type, actor_id, actor_name, action, subject_type, detail_json FROM audit_log WHERE subject_id = ?')
          .all(invoiceId) as Array<Record<string, unknown>>;
        expect(rows.map((row) => ({ ...row, detail_json: JSON.parse(String(row.detail_json)) }))).to.deep.equal([
          {
            tenant_id: tenant.id,
            business_id: tenant.business.id,
            actor_type: 'api_key',
            actor_id: tenant.keys[0]!.id,
            actor_name: tenant.keys[0]!.name,
            action: 'invoice.create',
            subject_type: 'invoice',
            detail_json: { number: 'INV-0001', customerId, currency: 'USD', totalCents: '4200' },
          },
        ]);
      });

      it('still creates invoices while billing is past due (201; errors rule 3), though sending one, which posts, answers 402', async () => {
        setTenant(app, tenant.id, { billingState: 'past_due' });
        const { invoiceId, invoiceNumber } = await create(invoice());
        expect(invoiceNumber).to.equal('INV-0001');
        expect(invoiceRow(invoiceId).status).to.equal('draft');
        expectError(await app.post(`/api/v1/invoices/${invoiceId}/send`, tenant.key), 402, 'read_only_billing_state');
        expect(invoiceRow(invoiceId).status).to.equal('draft');
      });
    });

    describe('issue and due dates', () => {
      it("defaults issueDate to the clock's UTC date (late evening in New York is already tomorrow)", async () => {
        app.clock.set('2026-03-15T23:30:00-05:00'); // 2026-03-16T04:30Z
        const { invoiceId } = await create(invoice());
        expect(invoiceRow(invoiceId)).to.deep.include({ issue_date: '2026-03-16', due_date: '2026-04-15' });
      });

      it('keeps a dueDate as sent', async () => {
        const { invoiceId } = await create(invoice({ issueDate: '2026-03-01', dueDate: '2026-05-17' }));
        expect(invoiceRow(invoiceId)).to.deep.include({ issue_date: '2026-03-01', due_date: '2026-05-17', payment_terms_days: null });
      });

      it('keeps a dueDate as sent even when paymentTermsDays disagrees (the date wins; no terms are stated, so the detail never says Net 45 beside a date 19 days out)', async () => {
        const { invoiceId } = await create(invoice({ issueDate: '2026-03-01', dueDate: '2026-03-20', paymentTermsDays: 45 }));
        expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-03-20', payment_terms_days: null });
        expect((await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key)).body.terms).to.equal(null);
      });

      it('states the terms when a dueDate and paymentTermsDays agree', async () => {
        const { invoiceId } = await create(invoice({ issueDate: '2026-03-01', dueDate: '2026-03-31', paymentTermsDays: 30 }));
        expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-03-31', payment_terms_days: 30n });
        expect((await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key)).body.terms).to.equal('Net 30');
      });

      it('accepts a dueDate equal to the issueDate', async () => {
        const { invoiceId } = await create(invoice({ issueDate: '2026-03-01', dueDate: '2026-03-01' }));
        expect(invoiceRow(invoiceId).due_date).to.equal('2026-03-01');
      });

      it('accepts the last representable day as issueDate and dueDate (9999-12-31)', async () => {
        const { invoiceId } = await create(invoice({ issueDate: '9999-12-31', dueDate: '9999-12-31' }));
        expect(invoiceRow(invoiceId)).to.deep.include({ issue_date: '9999-12-31', due_date: '9999-12-31' });
      });

      it('accepts issue dates in the years 0000 to 0099 and counts the terms from them (0099-01-01 is due 0099-01-31)', async () => {
        const { invoiceId } = await create(invoice({ issueDate: '0099-01-01' }));
        expect(invoiceRow(invoiceId)).to.deep.include({ issue_date: '0099-01-01', due_date: '0099-01-31' });
      });

      // issueDate 9999-12-31 is a valid date the schema accepts, but 30 days on is in year 10000,
      // which no YYYY-MM-DD date can hold: the call must refuse (422 naming a field), never fail (500).
      for (const [label, body] of [
        ['the default terms', { issueDate: '9999-12-31' }],
        ['paymentTermsDays 365', { issueDate: '9999-06-01', paymentTermsDays: 365 }],
      ] as const) {
        it(`refuses an issueDate whose due date (by ${label}) falls after 9999-12-31 (422 validation_failed), never a 500, writing nothing`, async () => {
          const before = everything();
          const res = await app.allowingFaults(() => post(invoice(body)));
          expectError(res, 422, 'validation_failed');
          expect(res.body.error.message).to.match(/^(issueDate|paymentTermsDays|dueDate):/);
          expect(everything()).to.deep.equal(before);
        });
      }

      it('refuses a dueDate before the issueDate (422 "dueDate:")', async () => {
        const before = everything();
        expectInvalid(await post(invoice({ issueDate: '2026-03-10', dueDate: '2026-03-09' })), 'dueDate');
        expect(everything()).to.deep.equal(before);
      });

      it("refuses a dueDate before the default issueDate, today's UTC date (422 \"dueDate:\")", async () => {
        const before = everything();
        expectInvalid(await post(invoice({ dueDate: '2026-03-14' })), 'dueDate');
        expect(everything()).to.deep.equal(before);
      });

      describe('without a dueDate: issueDate plus the terms of the request, else the customer, else the business, else the account', () => {
        let termsBusinessId: string;
        let termsCustomerId: string;
        let zeroTermsCustomerId: string;
        beforeEach(() => {
          termsBusinessId = buildBusiness(app.db, app.clock, { tenantId: tenant.id, paymentTermsDays: 45 }).id;
          termsCustomerId = addBilledCustomer(app, tenant.id, { paymentTermsDays: 20 });
          zeroTermsCustomerId = addBilledCustomer(app, tenant.id, { paymentTermsDays: 0 });
        });
        const inTermsBusiness = (overrides: Record<string, unknown>) =>
          invoice({ entityId: termsBusinessId, issueDate: '2026-01-31', lines: [line({}, termsBusinessId)], ...overrides });

        it('takes paymentTermsDays from the request first (10 days, over the customer\'s 20 and the business\'s 45)', async () => {
          const { invoiceId } = await create(inTermsBusiness({ customerId: termsCustomerId, paymentTermsDays: 10 }));
          expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-02-10', payment_terms_days: 10n });
        });

        it("takes the customer's terms next (20 days, over the business's 45)", async () => {
          const { invoiceId } = await create(inTermsBusiness({ customerId: termsCustomerId }));
          expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-02-20', payment_terms_days: 20n });
        });

        it("takes the business's terms when the customer has none (45 days; buildBusiness paymentTermsDays)", async () => {
          const { invoiceId } = await create(inTermsBusiness({}));
          expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-03-17', payment_terms_days: 45n });
        });

        it("takes the account's terms when neither customer nor business has any (30 days: 2026-01-31 is due 2026-03-02)", async () => {
          const { invoiceId } = await create(invoice({ entityId: tenant.business.id, issueDate: '2026-01-31' }));
          expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-03-02', payment_terms_days: 30n });
        });

        it("takes the account's own terms when they are not 30 (60 days)", async () => {
          const firm = buildTenant(app.db, app.clock, { plan: 'large', paymentTermsDays: 60 });
          const business = buildBusiness(app.db, app.clock, { tenantId: firm.id });
          const key = buildKey(app.db, app.clock, { tenantId: firm.id });
          const firmCustomer = addBilledCustomer(app, firm.id);
          const { invoiceId } = await create({ customerId: firmCustomer, issueDate: '2026-03-01', lines: [line({}, business.id)] }, key.key);
          expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-04-30', payment_terms_days: 60n });
        });

        it('honours zero-day terms from the customer (due on the issue date, not the business\'s 45)', async () => {
          const { invoiceId } = await create(inTermsBusiness({ customerId: zeroTermsCustomerId }));
          expect(invoiceRow(invoiceId)).to.deep.include({ due_date: '2026-01-31', payment_terms_days: 0n });
        });

        it('honours paymentTermsDays 0 from the request (due on the issue date) and 365 (a year on; 2028 is a leap year)', async () => {
          const zero = await create(inTermsBusiness({ customerId: termsCustomerId, paymentTermsDays: 0 }));
          expect(invoiceRow(zero.invoiceId).due_date).to.equal('2026-01-31');
          const year = await create(invoice({ entityId: tenant.business.id, issueDate: '2028-01-01', paymentTermsDays: 365 }));
          expect(invoiceRow(year.invoiceId).due_date).to.equal('2028-12-31');
        });
      });
    });

    describe('currency', () => {
      it('defaults to USD and never takes the customer\'s currency (a EUR customer\'s invoice is USD)', async () => {
        const euroCustomer = addBilledCustomer(app, tenant.id, { currency: 'EUR' });
        const { invoiceId } = await create(invoice({ customerId: euroCustomer }));
        expect(invoiceRow(invoiceId).currency).to.equal('USD');
        const shown = await detail(invoiceId);
        expect(shown.currency).to.equal('USD');
        expect(shown.total).to.deep.equal(money('25000', '$250.00'));
      });

      it('uses the currency sent (EUR), with every amount in it', async () => {
        const euroCustomer = addBilledCustomer(app, tenant.id, { currency: 'EUR' });
        const { invoiceId } = await create(invoice({ customerId: euroCustomer, currency: 'EUR', taxRatePercent: '20' }));
        expect(invoiceRow(invoiceId).currency).to.equal('EUR');
        const shown = await detail(invoiceId);
        expect(shown.currency).to.equal('EUR');
        expect([shown.subtotal, shown.tax, shown.total, shown.paid, shown.balance]).to.deep.equal([
          money('25000', '€250.00', 'EUR'),
          money('5000', '€50.00', 'EUR'),
          money('30000', '€300.00', 'EUR'),
          money('0', '€0.00', 'EUR'),
          money('30000', '€300.00', 'EUR'),
        ]);
        expect(shown.lines[0].unitPrice).to.deep.equal(money('12500', '€125.00', 'EUR'));
      });

      it('bills a USD customer in GBP when GBP is sent', async () => {
        const { invoiceId } = await create(invoice({ currency: 'GBP' }));
        expect(invoiceRow(invoiceId).currency).to.equal('GBP');
      });

      for (const currency of ['JPY', 'usd', '', 840]) {
        it(`refuses currency ${JSON.stringify(currency)} (422 "currency:")`, async () => {
          const before = everything();
          expectInvalid(await post(invoice({ currency })), 'currency');
          expect(everything()).to.deep.equal(before);
        });
      }
    });

    describe('limits that are accepted', () => {
      it("accepts taxRatePercent '100' (tax equals the subtotal) and '0' (no tax)", async () => {
        const hundred = await create(invoice({ taxRatePercent: '100' }));
        expect(invoiceRow(hundred.invoiceId)).to.deep.include({ subtotal_cents: 25000n, tax_cents: 25000n, total_cents: 50000n });
        const zero = await create(invoice({ taxRatePercent: '0' }));
        expect(invoiceRow(zero.invoiceId)).to.deep.include({ subtotal_cents: 25000n, tax_cents: 0n, total_cents: 25000n });
      });

      it("accepts a line amount just under ten trillion dollars ('999999999999999' cents)", async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ quantity: '1', unitPriceCents: '999999999999999' })] }));
        expect((await detail(invoiceId)).total).to.deep.equal(money('999999999999999', '$9,999,999,999,999.99'));
      });

      it('accepts a subtotal just under the ceiling (500000000000000 + 499999999999999)', async () => {
        const lines = [line({ quantity: '1', unitPriceCents: '500000000000000' }), line({ quantity: '1', unitPriceCents: '499999999999999' })];
        const { invoiceId } = await create(invoice({ lines }));
        expect(invoiceRow(invoiceId)).to.deep.include({ subtotal_cents: 999999999999999n, total_cents: 999999999999999n });
      });

      it('accepts a total just under the ceiling through tax (799999999999999 at 25 %: tax rounds to 200000000000000)', async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ quantity: '1', unitPriceCents: '799999999999999' })], taxRatePercent: '25' }));
        expect(invoiceRow(invoiceId)).to.deep.include({ subtotal_cents: 799999999999999n, tax_cents: 200000000000000n, total_cents: 999999999999999n });
      });

      it('accepts the smallest quantity (0.000001) and the largest whole one (999999999999)', async () => {
        const { invoiceId } = await create(
          invoice({ lines: [line({ quantity: '0.000001', unitPriceCents: '1000000' }), line({ quantity: '999999999999', unitPriceCents: '1' })] }),
        );
        expect(lineRows(invoiceId).map((row) => row.amount_cents)).to.deep.equal([1n, 999999999999n]);
      });

      // The spec bounds a quantity only by its decimals (Limits: "greater than zero, up to 6
      // decimals") and the line amount by the ceiling; 10^12 x 1 cent is $10 billion, far under it.
      it("accepts a quantity of 13 whole digits whose line amount stays under the ceiling ('1000000000000' x 1 cent)", async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ quantity: '1000000000000', unitPriceCents: '1' })] }));
        expect(invoiceRow(invoiceId).total_cents).to.equal(1000000000000n);
      });

      it('accepts a line that prices to zero beside one that does not', async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ unitPriceCents: '0' }), line({ quantity: '1', unitPriceCents: '1' })] }));
        expect(invoiceRow(invoiceId)).to.deep.include({ subtotal_cents: 1n, total_cents: 1n });
      });

      it('accepts 500 lines and keeps them in order', async () => {
        const lines = Array.from({ length: 500 }, (_, i) => line({ description: `Line ${i + 1}`, quantity: '1', unitPriceCents: String(i + 1) }));
        const { invoiceId } = await create(invoice({ lines }));
        const stored = lineRows(invoiceId);
        expect(stored).to.have.length(500);
        expect(stored[499]).to.deep.include({ line_no: 500n, description: 'Line 500', amount_cents: 500n });
        expect(invoiceRow(invoiceId).total_cents).to.equal(125250n);
        expect((await detail(invoiceId)).lines).to.have.length(500);
      });

      it('accepts a description and a memo of exactly 2000 characters (counted in characters: 2000 emoji too)', async () => {
        const { invoiceId } = await create(invoice({ lines: [line({ description: 'd'.repeat(2000) })], memo: 'm'.repeat(2000) }));
        expect(lineRows(invoiceId)[0]!.description).to.equal('d'.repeat(2000));
        expect(invoiceRow(invoiceId).memo).to.equal('m'.repeat(2000));
        const emoji = await create(invoice({ lines: [line({ description: '\u{1F600}'.repeat(2000) })], memo: '\u{1F600}'.repeat(2000) }));
        expect(invoiceRow(emoji.invoiceId).memo).to.equal('\u{1F600}'.repeat(2000));
      });

      it('accepts an upper-case customerId and accountId (uuids are case-insensitive)', async () => {
        const { invoiceId } = await create(invoice({ customerId: customerId.toUpperCase(), lines: [line({ accountId: accountId('Sales').toUpperCase() })] }));
        expect(invoiceRow(invoiceId).customer_id).to.equal(customerId);
        expect(lineRows(invoiceId)[0]!.ledger_account_id).to.equal(accountId('Sales'));
      });
    });

    describe('refusals (each leaves nothing: no invoice, no lines, no audit row, no number used)', () => {
      interface Refusal {
        label: string;
        body: () => Record<string, unknown>;
        status: number;
        code: 'validation_failed' | 'not_found';
        field: string;
      }
      const invalid = (label: string, field: string, body: () => Record<string, unknown>): Refusal => ({ label, body, status: 422, code: 'validation_failed', field });
      const missing = (label: string, field: string, body: () => Record<string, unknown>): Refusal => ({ label, body, status: 404, code: 'not_found', field });
      /** Two lines: the fault goes on the second, so the message must name index 1. */
      const onSecondLine = (overrides: Record<string, unknown>) => () => invoice({ lines: [line(), line(overrides)] });
      /** A business of another account, and one more of this account, made on demand. */
      const otherTenantBusinessId = () => buildApiTenant(app).business.id;
      const secondBusinessId = () => buildBusiness(app.db, app.clock, { tenantId: tenant.id }).id;

      const refusals: Refusal[] = [
        missing('an unknown customerId', 'customerId', () => invoice({ customerId: NO_SUCH_ID })),
        missing("another account's customer", 'customerId', () => invoice({ customerId: addBilledCustomer(app, buildApiTenant(app).id) })),
        invalid('an archived customer', 'customerId', () => {
          const archived = addBilledCustomer(app, tenant.id);
          archive(app, 'customers', archived);
          return invoice({ customerId: archived });
        }),
        invalid('a customerId that is not a uuid', 'customerId', () => invoice({ customerId: 'cust-1' })),
        invalid('a missing customerId', 'customerId', () => invoice({ customerId: undefined })),
        invalid("an expense account such as 'Rent'", 'lines.0.accountId', () => invoice({ lines: [line({ accountId: accountId('Rent') })] })),
        invalid("an asset account such as 'Accounts Receivable'", 'lines.0.accountId', () => invoice({ lines: [line({ accountId: accountId('Accounts Receivable') })] })),
        invalid("the heading 'Revenue'", 'lines.0.accountId', () => invoice({ lines: [line({ accountId: anyAccountId('Revenue') })] })),
        invalid('an archived revenue account', 'lines.1.accountId', () => {
          app.db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(accountId('Other Income'));
          return invoice({ lines: [line(), line({ accountId: anyAccountId('Other Income') })] });
        }),
        missing("a revenue account of another business of the account (on line 1)", 'lines.1.accountId', () => {
          const second = secondBusinessId();
          return invoice({ entityId: tenant.business.id, lines: [line(), line({ accountId: accountId('Service Revenue', second) })] });
        }),
        missing("a revenue account of another account's business", 'lines.0.accountId', () => invoice({ lines: [line({ accountId: accountId('Sales', otherTenantBusinessId()) })] })),
        missing('an unknown accountId', 'lines.0.accountId', () => invoice({ lines: [line({ accountId: NO_SUCH_ID })] })),
        ...(['0', '0.000000', '-1', '1.1234567', 'abc', '', '1e3', ' 1', 2, null] as unknown[]).map((quantity) =>
          invalid(`quantity ${JSON.stringify(quantity)} (on line 1)`, 'lines.1.quantity', onSecondLine({ quantity })),
        ),
        invalid('a missing quantity', 'lines.0.quantity', () => invoice({ lines: [line({ quantity: undefined })] })),
        ...(['12.5', '-100', '', 1250] as unknown[]).map((unitPriceCents) =>
          invalid(`unitPriceCents ${JSON.stringify(unitPriceCents)} (on line 1)`, 'lines.1.unitPriceCents', onSecondLine({ unitPriceCents })),
        ),
        ...(['100.000001', '101', '1000', '-1', '5.1234567', 'abc', '', 8.875] as unknown[]).map((taxRatePercent) =>
          invalid(`taxRatePercent ${JSON.stringify(taxRatePercent)}`, 'taxRatePercent', () => invoice({ taxRatePercent })),
        ),
        invalid('a line amount of exactly ten trillion dollars (on line 1)', 'lines.1.unitPriceCents', onSecondLine({ quantity: '1', unitPriceCents: CEILING })),
        invalid('a line amount that rounds up to ten trillion dollars (0.5 x 1999999999999999)', 'lines.0.unitPriceCents', () =>
          invoice({ lines: [line({ quantity: '0.5', unitPriceCents: '1999999999999999' })] }),
        ),
        invalid('a subtotal of exactly ten trillion dollars (two lines of half each)', 'lines', () =>
          invoice({ lines: [line({ quantity: '1', unitPriceCents: '500000000000000' }), line({ quantity: '1', unitPriceCents: '500000000000000' })] }),
        ),
        invalid('a total of exactly ten trillion dollars through tax (800000000000000 at 25 %)', 'taxRatePercent', () =>
          invoice({ lines: [line({ quantity: '1', unitPriceCents: '800000000000000' })], taxRatePercent: '25' }),
        ),
        invalid('a total of zero (unit price 0)', 'lines', () => invoice({ lines: [line({ unitPriceCents: '0' })], taxRatePercent: '10' })),
        invalid('a total of zero (0.000001 x 1 cent rounds to nothing)', 'lines', () => invoice({ lines: [line({ quantity: '0.000001', unitPriceCents: '1' })] })),
        invalid('no lines', 'lines', () => invoice({ lines: [] })),
        invalid('a missing lines field', 'lines', () => invoice({ lines: undefined })),
        invalid('lines that are not an array', 'lines', () => invoice({ lines: line() })),
        invalid('501 lines', 'lines', () => invoice({ lines: Array.from({ length: 501 }, () => line({ quantity: '1', unitPriceCents: '100' })) })),
        invalid('a description over 2000 characters', 'lines.0.description', () => invoice({ lines: [line({ description: 'd'.repeat(2001) })] })),
        invalid('an empty description', 'lines.0.description', () => invoice({ lines: [line({ description: '' })] })),
        invalid('a missing description', 'lines.0.description', () => invoice({ lines: [line({ description: undefined })] })),
        invalid('a memo over 2000 characters', 'memo', () => invoice({ memo: 'm'.repeat(2001) })),
        invalid('a null memo', 'memo', () => invoice({ memo: null })),
        invalid('an unknown field inside a line', 'lines.0.xyz', () => invoice({ lines: [line({ xyz: 1 })] })),
        invalid('an unknown top-level field', 'xyz', () => invoice({ xyz: true })),
        invalid('paymentTermsDays 366', 'paymentTermsDays', () => invoice({ paymentTermsDays: 366 })),
        invalid('paymentTermsDays -1', 'paymentTermsDays', () => invoice({ paymentTermsDays: -1 })),
        invalid("paymentTermsDays '30' (a string)", 'paymentTermsDays', () => invoice({ paymentTermsDays: '30' })),
        invalid('paymentTermsDays 1.5', 'paymentTermsDays', () => invoice({ paymentTermsDays: 1.5 })),
        invalid("an issueDate that does not exist ('2026-02-30')", 'issueDate', () => invoice({ issueDate: '2026-02-30' })),
        invalid("a dueDate that is not a date ('next week')", 'dueDate', () => invoice({ dueDate: 'next week' })),
        invalid('a dueDate before the issueDate', 'dueDate', () => invoice({ issueDate: '2026-04-01', dueDate: '2026-03-31' })),
      ];

      for (const refusal of refusals) {
        it(`refuses ${refusal.label} (${refusal.status} ${refusal.code} "${refusal.field}:")`, async () => {
          const body = refusal.body();
          const before = everything();
          const ownBefore = invoiceWrites(app, tenant.business.id);
          expectError(await post(body), refusal.status, refusal.code, `${refusal.field}:`);
          expect(everything(), 'nothing written anywhere').to.deep.equal(before);
          expect(invoiceWrites(app, tenant.business.id)).to.deep.equal(ownBefore);
          // No number was used: the first invoice that succeeds is still INV-0001.
          expect((await create(invoice({ entityId: tenant.business.id }))).invoiceNumber).to.equal('INV-0001');
        });
      }
    });

    describe('entity rules', () => {
      it('creates in the named business when the key reaches several', async () => {
        const multi = buildApiTenant(app, { businesses: 2 });
        const target = multi.businesses[1]!;
        const multiCustomer = addBilledCustomer(app, multi.id);
        const { invoiceId } = await create({ entityId: target.id, customerId: multiCustomer, lines: [line({}, target.id)] }, multi.key);
        expect(invoiceRow(invoiceId).business_id).to.equal(target.id);
      });

      it('refuses an omitted entityId when the key reaches several businesses (422 "entityId:") and writes nothing', async () => {
        const multi = buildApiTenant(app, { businesses: 2 });
        const multiCustomer = addBilledCustomer(app, multi.id);
        const before = everything();
        expectInvalid(await post({ customerId: multiCustomer, lines: [line({}, multi.businesses[0]!.id)] }, multi.key), 'entityId');
        expect(everything()).to.deep.equal(before);
      });

      it('refuses another entityId from a key limited to one business (403 entity_not_allowed) and writes nothing', async () => {
        const multi = buildApiTenant(app, { businesses: 2 });
        const [granted, other] = multi.businesses as [typeof multi.business, typeof multi.business];
        const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [granted.id] });
        const multiCustomer = addBilledCustomer(app, multi.id);
        const before = everything();
        expectError(await post({ entityId: other.id, customerId: multiCustomer, lines: [line({}, other.id)] }, limited.key), 403, 'entity_not_allowed');
        expect(everything()).to.deep.equal(before);
        // The granted business, named or implied, works.
        const { invoiceId } = await create({ customerId: multiCustomer, lines: [line({}, granted.id)] }, limited.key);
        expect(invoiceRow(invoiceId).business_id).to.equal(granted.id);
      });

      it("refuses another account's business as entityId (404 not_found) and writes nothing", async () => {
        const other = buildApiTenant(app);
        const before = everything();
        expectError(await post(invoice({ entityId: other.business.id, lines: [line({}, other.business.id)] })), 404, 'not_found');
        expect(everything()).to.deep.equal(before);
      });

      it('refuses a Read only key (403 insufficient_scope) and writes nothing', async () => {
        const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
        const before = everything();
        expectError(await post(invoice(), readOnly.key), 403, 'insufficient_scope');
        expect(everything()).to.deep.equal(before);
      });
    });

    describe('idempotency', () => {
      it('replays a create for the same key and body: same body, idempotent-replayed: true, one invoice, one number', async () => {
        const body = invoice({ memo: 'replayed' });
        const before = everything();
        const first = await post(body, tenant.key, { 'idempotency-key': 'invoice-1' });
        const created = expectInvoiceCreated(first);
        const second = await post(body, tenant.key, { 'idempotency-key': 'invoice-1' });
        expect(second.status).to.equal(201);
        expect(second.text).to.equal(first.text);
        expect(second.headers['idempotent-replayed']).to.equal('true');
        expect(everything()).to.deep.equal({ ...before, invoices: before.invoices + 1, lines: before.lines + 1, invoiceAudit: before.invoiceAudit + 1, numbersTaken: before.numbersTaken + 1 });
        expect(created.invoiceNumber).to.equal('INV-0001');
        expect((await create(invoice())).invoiceNumber).to.equal('INV-0002');
      });

      it('refuses the same key with a different body (409 conflict), creating nothing', async () => {
        expectInvoiceCreated(await post(invoice(), tenant.key, { 'idempotency-key': 'invoice-2' }));
        const before = everything();
        expectError(await post(invoice({ memo: 'different' }), tenant.key, { 'idempotency-key': 'invoice-2' }), 409, 'conflict');
        expect(everything()).to.deep.equal(before);
      });
    });
  });

  describe('GET /invoices', () => {
    it('lists each invoice as {id, number, status, customer (name), issueDate, dueDate, total, paid, balance, currency}', async () => {
      const named = addBilledCustomer(app, tenant.id, { name: 'Globex Corporation' });
      const usdInvoice = await create(invoice({ customerId: named, issueDate: '2026-03-01', lines: [line({ quantity: '1', unitPriceCents: '100000' })], taxRatePercent: '10' }));
      await sendInvoice(app, tenant.key, usdInvoice.invoiceId);
      await payInvoice(app, tenant.key, usdInvoice.invoiceId, '40000', '2026-03-10');
      const euroInvoice = await create(invoice({ customerId: named, issueDate: '2026-03-02', currency: 'EUR', dueDate: '2026-03-31' }));

      const { invoices, nextCursor } = await list();
      expect(nextCursor).to.equal(null);
      expect(invoices).to.deep.equal([
        {
          id: euroInvoice.invoiceId,
          number: 'INV-0002',
          status: 'draft',
          customer: 'Globex Corporation',
          issueDate: '2026-03-02',
          dueDate: '2026-03-31',
          total: money('25000', '€250.00', 'EUR'),
          paid: money('0', '€0.00', 'EUR'),
          balance: money('25000', '€250.00', 'EUR'),
          currency: 'EUR',
        },
        {
          id: usdInvoice.invoiceId,
          number: 'INV-0001',
          status: 'partially_paid',
          customer: 'Globex Corporation',
          issueDate: '2026-03-01',
          dueDate: '2026-03-31',
          total: money('110000', '$1,100.00'),
          paid: money('40000', '$400.00'),
          balance: money('70000', '$700.00'),
          currency: 'USD',
        },
      ]);
    });

    it('answers an empty list for a business without invoices', async () => {
      expect(await list()).to.deep.equal({ invoices: [], nextCursor: null });
    });

    it('lists newest first by issue date, then by creation (later first) on the same date', async () => {
      const order: Array<[string, string]> = [];
      for (const issueDate of ['2026-03-05', '2026-02-20', '2026-03-10', '2026-03-05', '2026-03-01']) {
        order.push([(await create(invoice({ issueDate }))).invoiceNumber, issueDate]);
      }
      const { invoices } = await list();
      expect(invoices.map((row: any) => [row.number, row.issueDate])).to.deep.equal([
        ['INV-0003', '2026-03-10'],
        ['INV-0004', '2026-03-05'],
        ['INV-0001', '2026-03-05'],
        ['INV-0005', '2026-03-01'],
        ['INV-0002', '2026-02-20'],
      ]);
    });

    it('lists only the business\'s own invoices (not another business\'s, not another account\'s)', async () => {
      const mine = await create(invoice());
      const second = buildBusiness(app.db, app.clock, { tenantId: tenant.id });
      await create(invoice({ entityId: second.id, lines: [line({}, second.id)] }));
      const other = buildApiTenant(app);
      await create({ customerId: addBilledCustomer(app, other.id), lines: [line({}, other.business.id)] }, other.key);
      const { invoices } = await list({ entityId: tenant.business.id });
      expect(invoices.map((row: any) => row.id)).to.deep.equal([mine.invoiceId]);
    });

    describe('filters', () => {
      it('filters by status', async () => {
        const draft = await create(invoice({ issueDate: '2026-03-01' }));
        const sent = await create(invoice({ issueDate: '2026-03-02' }));
        await sendInvoice(app, tenant.key, sent.invoiceId);
        expect((await list({ status: 'draft' })).invoices.map((row: any) => row.id)).to.deep.equal([draft.invoiceId]);
        expect((await list({ status: 'sent' })).invoices.map((row: any) => row.id)).to.deep.equal([sent.invoiceId]);
        expect((await list({ status: 'paid' })).invoices).to.deep.equal([]);
      });

      it('filters by customerId', async () => {
        const otherCustomer = addBilledCustomer(app, tenant.id);
        const theirs = await create(invoice({ customerId: otherCustomer }));
        await create(invoice());
        expect((await list({ customerId: otherCustomer })).invoices.map((row: any) => row.id)).to.deep.equal([theirs.invoiceId]);
        expect((await list({ customerId: NO_SUCH_ID })).invoices).to.deep.equal([]);
      });

      it('filters dateFrom and dateTo inclusively on the issue date', async () => {
        for (const issueDate of ['2026-02-28', '2026-03-01', '2026-03-10', '2026-03-31', '2026-04-01']) await create(invoice({ issueDate }));
        const issued = async (query: Record<string, string>) => (await list(query)).invoices.map((row: any) => row.issueDate);
        expect(await issued({ dateFrom: '2026-03-01', dateTo: '2026-03-31' })).to.deep.equal(['2026-03-31', '2026-03-10', '2026-03-01']);
        expect(await issued({ dateFrom: '2026-03-31' })).to.deep.equal(['2026-04-01', '2026-03-31']);
        expect(await issued({ dateTo: '2026-03-01' })).to.deep.equal(['2026-03-01', '2026-02-28']);
        expect(await issued({ dateFrom: '2026-03-10', dateTo: '2026-03-10' })).to.deep.equal(['2026-03-10']);
      });

      it('does not filter on the due date: dateFrom/dateTo ignore a due date inside the range', async () => {
        await create(invoice({ issueDate: '2026-01-05', dueDate: '2026-03-10' }));
        expect((await list({ dateFrom: '2026-03-01', dateTo: '2026-03-31' })).invoices).to.deep.equal([]);
      });

      it('combines filters', async () => {
        const otherCustomer = addBilledCustomer(app, tenant.id);
        const match = await create(invoice({ customerId: otherCustomer, issueDate: '2026-03-05' }));
        await create(invoice({ customerId: otherCustomer, issueDate: '2026-02-05' }));
        await create(invoice({ issueDate: '2026-03-06' }));
        const { invoices } = await list({ customerId: otherCustomer, status: 'draft', dateFrom: '2026-03-01' });
        expect(invoices.map((row: any) => row.id)).to.deep.equal([match.invoiceId]);
      });

      it('refuses dateTo before dateFrom (422 validation_failed)', async () => {
        const res = await app.get(withQuery('/api/v1/invoices', { dateFrom: '2026-03-10', dateTo: '2026-03-09' }), tenant.key);
        expectInvalid(res, 'dateTo');
      });

      for (const [name, value] of [
        ['status', 'late'],
        ['customerId', 'acme'],
        ['dateFrom', '2026-02-30'],
        ['dateTo', '10/03/2026'],
        ['overdueOnly', 'yes'],
        ['limit', '0'],
        ['limit', '101'],
      ] as const) {
        it(`refuses ${name}=${value} (422 "${name}:")`, async () => {
          expectInvalid(await app.get(withQuery('/api/v1/invoices', { [name]: value }), tenant.key), name);
        });
      }
    });

    describe('paging', () => {
      it('pages across the whole list with limit and nextCursor, every invoice once, in order', async () => {
        const made: string[] = [];
        for (let day = 1; day <= 7; day++) made.push((await create(invoice({ issueDate: `2026-03-0${day}` }))).invoiceId);
        const pages: string[][] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await list({ limit: 3, cursor });
          pages.push(page.invoices.map((row: any) => row.id));
          if (page.nextCursor === null) break;
          expect(page.nextCursor).to.be.a('string').and.not.equal('');
          cursor = page.nextCursor;
        }
        expect(pages.map((page) => page.length)).to.deep.equal([3, 3, 1]);
        expect(pages.flat()).to.deep.equal([...made].reverse());
      });

      it('answers a null nextCursor when the last page is exactly full', async () => {
        for (let i = 0; i < 4; i++) await create(invoice());
        const first = await list({ limit: 2 });
        expect(first.nextCursor).to.be.a('string');
        const second = await list({ limit: 2, cursor: first.nextCursor });
        expect(second.invoices).to.have.length(2);
        expect(second.nextCursor).to.equal(null);
      });

      it('refuses a cursor used with other filters (422 "cursor:")', async () => {
        const otherCustomer = addBilledCustomer(app, tenant.id);
        for (let i = 0; i < 3; i++) await create(invoice());
        const first = await list({ status: 'draft', limit: 1 });
        expect(first.nextCursor).to.be.a('string');
        const cursor = first.nextCursor as string;
        for (const query of [
          { status: 'sent' },
          {},
          { status: 'draft', customerId: otherCustomer },
          { status: 'draft', dateFrom: '2026-01-01' },
          { status: 'draft', overdueOnly: true },
        ]) {
          expectInvalid(await app.get(withQuery('/api/v1/invoices', { ...query, limit: 1, cursor }), tenant.key), 'cursor');
        }
        // The same filters (and another page size) still follow it.
        expect((await list({ status: 'draft', limit: 2, cursor })).invoices).to.have.length(2);
      });

      it('refuses a cursor that was not issued by the server (422 "cursor:")', async () => {
        expectInvalid(await app.get(withQuery('/api/v1/invoices', { cursor: 'not-a-cursor' }), tenant.key), 'cursor');
      });
    });

    describe('overdueOnly (read rule 2: filters the page requested, not the whole list)', () => {
      it('serves an empty first page with a nextCursor when the first page holds no overdue invoice, and the overdue one on the next', async () => {
        // Sent now, overdue once the clock passes 2026-03-21.
        const overdue = await create(invoice({ issueDate: '2026-03-01', paymentTermsDays: 20 }));
        await sendInvoice(app, tenant.key, overdue.invoiceId);
        const notYetDue = await create(invoice({ issueDate: '2026-03-05', paymentTermsDays: 30 }));
        await sendInvoice(app, tenant.key, notYetDue.invoiceId);
        // Newer drafts fill the first page; their due dates pass too, but a draft is never overdue.
        const olderDraft = await create(invoice({ issueDate: '2026-03-10', dueDate: '2026-03-11' }));
        const newerDraft = await create(invoice({ issueDate: '2026-03-12', dueDate: '2026-03-13' }));
        app.clock.set('2026-03-25T09:00:00.000Z');

        const unfiltered = await list({ limit: 2 });
        expect(unfiltered.invoices.map((row: any) => row.id)).to.deep.equal([newerDraft.invoiceId, olderDraft.invoiceId]);

        const first = await list({ limit: 2, overdueOnly: true });
        expect(first.invoices).to.deep.equal([]);
        expect(first.nextCursor, 'a page may hold none while nextCursor is set').to.be.a('string').and.not.equal('');

        const second = await list({ limit: 2, overdueOnly: true, cursor: first.nextCursor });
        // Overdue by the status rule as soon as its due date has passed: no sweep ran.
        expect(second.invoices.map((row: any) => [row.id, row.status, row.dueDate])).to.deep.equal([[overdue.invoiceId, 'overdue', '2026-03-21']]);
        expect(second.nextCursor).to.equal(null);
      });

      it('counts sent, viewed, partially paid and overdue invoices due before today; not drafts, paid ones, or those due today or later', async () => {
        const make = async (issueDate: string, dueDate: string) => (await create(invoice({ issueDate, dueDate }))).invoiceId;
        const draftPastDue = await make('2026-03-01', '2026-03-02');
        const sentPastDue = await make('2026-03-02', '2026-03-24');
        const sentDueToday = await make('2026-03-03', '2026-03-25');
        const sentNotDue = await make('2026-03-04', '2026-04-10');
        const viewedPastDue = await make('2026-03-05', '2026-03-20');
        const partlyPaidPastDue = await make('2026-03-06', '2026-03-20');
        const paidPastDue = await make('2026-03-07', '2026-03-20');
        const markedOverdue = await make('2026-03-08', '2026-03-09');
        for (const id of [sentPastDue, sentDueToday, sentNotDue, viewedPastDue, partlyPaidPastDue, paidPastDue, markedOverdue]) {
          await sendInvoice(app, tenant.key, id);
        }
        await payInvoice(app, tenant.key, partlyPaidPastDue, '100', '2026-03-15');
        await payInvoice(app, tenant.key, paidPastDue, '25000', '2026-03-15');
        // What the overdue sweep does: no endpoint moves an invoice to overdue.
        app.db.prepare("UPDATE invoices SET status = 'overdue' WHERE id = ?").run(markedOverdue);

        app.clock.set('2026-03-25T09:00:00.000Z');
        const webUrl = (await detail(viewedPastDue)).payUrl as string;
        const page = await app.get(new URL(webUrl).pathname, null);
        expect(page.status).to.equal(200);

        const all = await list();
        const statusOf = new Map<string, string>(all.invoices.map((row: any) => [row.id, row.status]));
        // The status rule: overdue (due before today with a balance) outranks sent, viewed and
        // partially paid, whether or not the sweep has run; paid outranks overdue.
        expect([draftPastDue, sentPastDue, viewedPastDue, partlyPaidPastDue, paidPastDue, markedOverdue].map((id) => statusOf.get(id))).to.deep.equal([
          'draft',
          'overdue',
          'overdue',
          'overdue',
          'paid',
          'overdue',
        ]);

        const { invoices, nextCursor } = await list({ overdueOnly: true });
        expect(invoices.map((row: any) => row.id)).to.deep.equal([markedOverdue, partlyPaidPastDue, viewedPastDue, sentPastDue]);
        expect(nextCursor).to.equal(null);
        expect((await list({ overdueOnly: false })).invoices).to.have.length(8);
      });

      it('finds every overdue invoice, and only those, by following nextCursor until null', async () => {
        const overdueIds: string[] = [];
        for (let day = 1; day <= 9; day++) {
          const { invoiceId } = await create(invoice({ issueDate: `2026-03-0${day}`, paymentTermsDays: 5 }));
          if (day % 3 === 0) {
            await sendInvoice(app, tenant.key, invoiceId);
            overdueIds.unshift(invoiceId);
          }
        }
        app.clock.set('2026-04-01T00:00:00.000Z');
        const found: string[] = [];
        const pageSizes: number[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 20; i++) {
          const page = await list({ limit: 2, overdueOnly: true, cursor });
          pageSizes.push(page.invoices.length);
          found.push(...page.invoices.map((row: any) => row.id));
          if (page.nextCursor === null) break;
          cursor = page.nextCursor;
        }
        expect(found).to.deep.equal(overdueIds);
        expect(pageSizes).to.have.length(5);
      });
    });

    describe('entity rules', () => {
      it('refuses another entityId from a key limited to one business (403 entity_not_allowed)', async () => {
        const multi = buildApiTenant(app, { businesses: 2 });
        const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [multi.businesses[0]!.id] });
        expectError(await app.get(withQuery('/api/v1/invoices', { entityId: multi.businesses[1]!.id }), limited.key), 403, 'entity_not_allowed');
      });

      it("refuses another account's business, or an unknown one, as entityId (404 not_found)", async () => {
        const other = buildApiTenant(app);
        expectError(await app.get(withQuery('/api/v1/invoices', { entityId: other.business.id }), tenant.key), 404, 'not_found');
        expectError(await app.get(withQuery('/api/v1/invoices', { entityId: NO_SUCH_ID }), tenant.key), 404, 'not_found');
      });

      it('refuses an omitted entityId when the key reaches several businesses (422 "entityId:")', async () => {
        const multi = buildApiTenant(app, { businesses: 2 });
        expectInvalid(await app.get('/api/v1/invoices', multi.key), 'entityId');
      });

      it("lists the named business's invoices when the key reaches several, and the granted one's for a limited key", async () => {
        const multi = buildApiTenant(app, { businesses: 2 });
        const [first, second] = multi.businesses as [typeof multi.business, typeof multi.business];
        const multiCustomer = addBilledCustomer(app, multi.id);
        const inFirst = await create({ entityId: first.id, customerId: multiCustomer, lines: [line({}, first.id)] }, multi.key);
        const inSecond = await create({ entityId: second.id, customerId: multiCustomer, lines: [line({}, second.id)] }, multi.key);
        expect((await list({ entityId: second.id }, multi.key)).invoices.map((row: any) => row.id)).to.deep.equal([inSecond.invoiceId]);
        const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [first.id] });
        expect((await list({}, limited.key)).invoices.map((row: any) => row.id)).to.deep.equal([inFirst.invoiceId]);
      });
    });
  });

  describe('GET /invoices/{id}', () => {
    it('shows the invoice: customer {id, name}, terms, money totals, memo, lines, payments [] and the payUrl the create returned', async () => {
      const named = addBilledCustomer(app, tenant.id, { name: 'Initech LLC' });
      const created = await create(
        invoice({
          customerId: named,
          issueDate: '2026-03-01',
          memo: 'Net 30, please',
          taxRatePercent: '10',
          lines: [
            line({ description: 'Design work', quantity: '1.5', unitPriceCents: '1999' }),
            line({ description: 'Widgets', quantity: '3', unitPriceCents: '500', accountId: accountId('Sales') }),
          ],
        }),
      );
      const res = await app.get(`/api/v1/invoices/${created.invoiceId}`, tenant.key);
      expect(res.status, res.text).to.equal(200);
      // 2999 + 1500 = 4499; tax 449.9 -> 450; total 4949.
      expect(res.body).to.deep.equal({
        id: created.invoiceId,
        number: 'INV-0001',
        status: 'draft',
        issueDate: '2026-03-01',
        dueDate: '2026-03-31',
        currency: 'USD',
        customer: { id: named, name: 'Initech LLC' },
        terms: 'Net 30',
        subtotal: money('4499', '$44.99'),
        tax: money('450', '$4.50'),
        total: money('4949', '$49.49'),
        paid: money('0', '$0.00'),
        balance: money('4949', '$49.49'),
        memo: 'Net 30, please',
        lines: [
          { description: 'Design work', quantity: '1.5', unitPrice: money('1999', '$19.99'), amount: money('2999', '$29.99'), account: 'Service Revenue' },
          { description: 'Widgets', quantity: '3', unitPrice: money('500', '$5.00'), amount: money('1500', '$15.00'), account: 'Sales' },
        ],
        payments: [],
        payUrl: created.webUrl,
      });
    });

    it('shows terms null and memo null when a dueDate was sent without terms', async () => {
      const { invoiceId } = await create(invoice({ issueDate: '2026-03-01', dueDate: '2026-04-15' }));
      const shown = await detail(invoiceId);
      expect([shown.terms, shown.dueDate, shown.memo]).to.deep.equal([null, '2026-04-15', null]);
    });

    it("shows the terms the due date came from: the request's, the customer's", async () => {
      const fromRequest = await create(invoice({ paymentTermsDays: 15 }));
      expect((await detail(fromRequest.invoiceId)).terms).to.equal('Net 15');
      const fromCustomer = await create(invoice({ customerId: addBilledCustomer(app, tenant.id, { paymentTermsDays: 45 }) }));
      expect((await detail(fromCustomer.invoiceId)).terms).to.equal('Net 45');
    });

    it('keeps the same payUrl on every read, and after the invoice is sent', async () => {
      const created = await create(invoice());
      expect((await detail(created.invoiceId)).payUrl).to.equal(created.webUrl);
      await sendInvoice(app, tenant.key, created.invoiceId);
      const shown = await detail(created.invoiceId);
      expect(shown.payUrl).to.equal(created.webUrl);
      expect(shown.status).to.equal('sent');
    });

    it('shows payments recorded against the invoice, and paid and balance', async () => {
      const { invoiceId } = await create(invoice({ issueDate: '2026-03-01' }));
      await sendInvoice(app, tenant.key, invoiceId);
      await payInvoice(app, tenant.key, invoiceId, '5000', '2026-03-10');
      const shown = await detail(invoiceId);
      expect(shown.payments).to.deep.equal([{ amount: money('5000', '$50.00'), method: 'check', paidAt: '2026-03-10' }]);
      expect([shown.status, shown.paid, shown.balance]).to.deep.equal(['partially_paid', money('5000', '$50.00'), money('20000', '$200.00')]);
    });

    it('accepts an upper-case id', async () => {
      const { invoiceId } = await create(invoice());
      const shown = await detail(invoiceId.toUpperCase());
      expect(shown.id).to.equal(invoiceId);
    });

    it('answers 404 not_found for an unknown id', async () => {
      expectError(await app.get(`/api/v1/invoices/${NO_SUCH_ID}`, tenant.key), 404, 'not_found');
    });

    it("answers 404 not_found for another account's invoice", async () => {
      const other = buildApiTenant(app);
      const theirs = await create({ customerId: addBilledCustomer(app, other.id), lines: [line({}, other.business.id)] }, other.key);
      expectError(await app.get(`/api/v1/invoices/${theirs.invoiceId}`, tenant.key), 404, 'not_found');
    });

    it("answers 404 not_found to a key limited to one business for another business's invoice, and 200 for its own", async () => {
      const multi = buildApiTenant(app, { businesses: 2 });
      const [granted, other] = multi.businesses as [typeof multi.business, typeof multi.business];
      const multiCustomer = addBilledCustomer(app, multi.id);
      const inOther = await create({ entityId: other.id, customerId: multiCustomer, lines: [line({}, other.id)] }, multi.key);
      const inGranted = await create({ entityId: granted.id, customerId: multiCustomer, lines: [line({}, granted.id)] }, multi.key);
      const limited = buildKey(app.db, app.clock, { tenantId: multi.id, businessIds: [granted.id] });
      expectError(await app.get(`/api/v1/invoices/${inOther.invoiceId}`, limited.key), 404, 'not_found');
      expect((await detail(inGranted.invoiceId, limited.key)).id).to.equal(inGranted.invoiceId);
    });

    it('refuses an id that is not a uuid (422 "id:")', async () => {
      expectInvalid(await app.get('/api/v1/invoices/INV-0001', tenant.key), 'id');
    });
  });
});
