import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { setRate } from '../../src/books/fx.js';
import { ledgerTotals } from '../../src/books/ledger.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type ApiTenant, buildApiTenant } from '../support/api.js';
import { accountIdByName } from '../support/factories.js';
import { addCustomer } from '../support/register.js';

/**
 * Issue 27 finding 1, through the API: "Payments in any currency settle to the cent". An MXN
 * invoice of MX$100.01 paid MX$100.00 leaves MX$0.01, worth round(1 x 0.052418) = 0 US cents;
 * that last centavo must be accepted, and settle the invoice.
 */

const START = '2026-03-15T12:00:00.000Z';

describe('payments worth less than one US cent over the API (issue 27: payments in any currency settle to the cent)', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  before(async () => {
    app = await startTestApp(START);
  });
  after(async () => {
    await app?.close();
  });
  beforeEach(() => {
    app.clock.set(START);
    app.db.prepare('DELETE FROM exchange_rates').run();
    tenant = buildApiTenant(app, { plan: 'large' });
  });

  /** Debits minus credits on one ledger account, in one view. */
  function balanceOf(account: string, view: 'accrual' | 'cash'): bigint {
    const row = app.db
      .prepare(
        `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS balance
         FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
         WHERE l.business_id = ? AND a.name = ? AND l.basis IN ('both', ?)`,
      )
      .get(tenant.business.id, account, view) as { balance: bigint | number };
    return BigInt(row.balance);
  }

  it('MX$100.01 paid MX$100.00 then "amountCents":"1": 201, the invoice is paid, its receivable is zero and AR aging no longer shows it', async () => {
    /*
     * Issue rate 0.052418: receivable round(10001 x 0.052418 = 524.232...) = 524 (USD 5.24).
     * MX$100.00 at 0.052418: cash round(524.18) = 524, clears round(524.18) = 524: all of it.
     * MX$0.01: cash round(0.52) = 0 and nothing left to clear: every line is zero, no entry.
     */
    setRate(app.db, app.clock, CLI_ACTOR, { currency: 'MXN', date: '2026-03-02', usdPerUnit: '0.052418' });
    const customerId = addCustomer(app, tenant.id, { name: 'Taller Oaxaca', email: 'pagos@taller.example' });
    const created = await app.post('/api/v1/invoices', tenant.key, {
      customerId,
      issueDate: '2026-03-02',
      currency: 'MXN',
      lines: [{ description: 'Refacciones', quantity: '1', unitPriceCents: '10001', accountId: accountIdByName(app.db, tenant.business.id, 'Service Revenue') }],
    });
    expect(created.status, created.text).to.equal(201);
    const invoiceId = created.body.invoiceId as string;
    const sent = await app.post(`/api/v1/invoices/${invoiceId}/send`, tenant.key);
    expect(sent.status, sent.text).to.equal(200);

    const first = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '10000', method: 'wire', paidAt: '2026-03-02' });
    expect(first.status, first.text).to.equal(201);
    expect(first.body).to.include({ status: 'partially_paid' });

    const last = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '1', method: 'wire', paidAt: '2026-03-02' });
    expect(last.status, last.text).to.equal(201);
    expect(last.body).to.include({ status: 'paid' });
    expect(last.body.balance).to.include({ cents: '0', currency: 'MXN' });

    const got = await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key);
    expect(got.status, got.text).to.equal(200);
    expect(got.body.status).to.equal('paid');

    // Nothing of the last centavo is posted: its payment has no entry, and no zero line exists.
    const payment = app.db.prepare('SELECT usd_cents, receivable_usd_cents, journal_entry_id FROM invoice_payments WHERE id = ?').get(last.body.paymentId);
    expect(payment).to.deep.equal({ usd_cents: 0n, receivable_usd_cents: 0n, journal_entry_id: null });
    expect(app.db.prepare("SELECT count(*) AS n FROM journal_entries WHERE source_type = 'invoice_payment' AND source_id = ?").get(last.body.paymentId)).to.deep.equal({ n: 0n });
    expect(app.db.prepare('SELECT count(*) AS n FROM journal_lines WHERE business_id = ? AND amount_cents <= 0').get(tenant.business.id)).to.deep.equal({ n: 0n });

    expect(balanceOf('Accounts Receivable', 'accrual'), 'the USD receivable (accrual view)').to.equal(0n);
    for (const view of ['accrual', 'cash'] as const) {
      const totals = ledgerTotals(app.db, tenant.business.id, view);
      expect(totals.debitCents, `${view} view: debits = credits`).to.equal(totals.creditCents);
    }
    const aging = await app.get(`/api/v1/reports/ar-aging?entityId=${tenant.business.id}&asOf=2026-03-15`, tenant.key);
    expect(aging.status, aging.text).to.equal(200);
    expect(aging.body.items).to.deep.equal([]);
    expect(aging.body.grandTotal.cents).to.equal('0');
  });

  it('a 1-centavo part payment worth 0 US cents is recorded: paid and balance change, status partially_paid, nothing posted', async () => {
    setRate(app.db, app.clock, CLI_ACTOR, { currency: 'MXN', date: '2026-03-02', usdPerUnit: '0.05' });
    const customerId = addCustomer(app, tenant.id, { name: 'Panadería Sol' });
    const created = await app.post('/api/v1/invoices', tenant.key, {
      customerId,
      issueDate: '2026-03-02',
      currency: 'MXN',
      lines: [{ description: 'Pan', quantity: '1', unitPriceCents: '100000', accountId: accountIdByName(app.db, tenant.business.id, 'Sales') }],
    });
    const invoiceId = created.body.invoiceId as string;
    expect((await app.post(`/api/v1/invoices/${invoiceId}/send`, tenant.key)).status).to.equal(200);
    const part = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '1', method: 'cash', paidAt: '2026-03-02' });
    expect(part.status, part.text).to.equal(201);
    expect(part.body).to.include({ status: 'partially_paid' });
    expect(part.body.balance).to.include({ cents: '99999', currency: 'MXN' });
    expect(balanceOf('Accounts Receivable', 'accrual')).to.equal(5000n);
    const rest = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '99999', method: 'cash', paidAt: '2026-03-02' });
    expect(rest.status, rest.text).to.equal(201);
    expect(rest.body).to.include({ status: 'paid' });
    expect(balanceOf('Accounts Receivable', 'accrual')).to.equal(0n);
  });
});
