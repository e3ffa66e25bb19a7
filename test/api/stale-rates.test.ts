import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { setRate } from '../../src/books/fx.js';
import type { TestApp, TestResponse } from '../support/app.js';
import { type ApiTenant, countRows, expectInvalid } from '../support/api.js';
import { accountIdByName } from '../support/factories.js';
import { type FakeProvider, useAppWithFakeProvider } from '../support/rate-provider.js';
import { addCustomer } from '../support/register.js';

/**
 * Rates are never silently stale (issue 27): a send or a payment posts at the rate stored for
 * its date, or the newest before it at most DAYBOOK_RATE_MAX_AGE_DAYS (4) older; otherwise the
 * provider is asked once, and when it fails the call answers 422 naming the newest stored rate
 * and `daybook rate set`, with nothing changed. The provider here always fails (HTTP 500).
 */

const START = '2026-09-15T12:00:00.000Z';

describe('rates are never silently stale (send and payments over the API)', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  let provider: FakeProvider;

  useAppWithFakeProvider(START, (suite) => ({ app, tenant, provider } = suite));

  const gbp = (date: string, usdPerUnit: string) => setRate(app.db, app.clock, CLI_ACTOR, { currency: 'GBP', date, usdPerUnit });
  const send = (id: string, headers: Record<string, string> = {}) => app.post(`/api/v1/invoices/${id}/send`, tenant.key, undefined, headers);
  const pay = (id: string, body: Record<string, unknown>) => app.post(`/api/v1/invoices/${id}/payments`, tenant.key, body);

  /** A GBP draft of GBP 1,000.00, no tax, to a customer with an email address. */
  async function gbpDraft(issueDate: string): Promise<string> {
    const customerId = addCustomer(app, tenant.id, { name: 'Harbour Books Ltd', email: 'accounts@harbour.example' });
    const res = await app.post('/api/v1/invoices', tenant.key, {
      customerId,
      issueDate,
      currency: 'GBP',
      lines: [{ description: 'Bookkeeping', quantity: '1', unitPriceCents: '100000', accountId: accountIdByName(app.db, tenant.business.id, 'Service Revenue') }],
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.invoiceId as string;
  }

  function written() {
    const inTenant = 'business_id IN (SELECT id FROM businesses WHERE tenant_id = ?)';
    return {
      entries: countRows(app.db, `SELECT count(*) FROM journal_entries WHERE ${inTenant}`, tenant.id),
      emails: countRows(app.db, 'SELECT count(*) FROM email_outbox WHERE tenant_id = ?', tenant.id),
      payments: countRows(app.db, `SELECT count(*) FROM invoice_payments WHERE invoice_id IN (SELECT id FROM invoices WHERE ${inTenant})`, tenant.id),
      audit: countRows(app.db, 'SELECT count(*) FROM audit_log WHERE tenant_id = ?', tenant.id),
    };
  }
  const invoiceRow = (id: string) => app.db.prepare('SELECT status, usd_per_unit, paid_cents FROM invoices WHERE id = ?').get(id) as Record<string, unknown>;
  const messageOf = (res: TestResponse) => String(res.body.error?.message ?? res.text);

  it('refuses (422 issueDate) to send a GBP invoice issued months after the newest stored rate, naming that date and daybook rate set; nothing is posted, and the key is freed', async () => {
    gbp('2026-03-02', '1.27');
    const invoiceId = await gbpDraft('2026-09-10');
    const before = written();
    const headers = { 'Idempotency-Key': 'send-gbp-stale-1' };
    const res = await send(invoiceId, headers);
    expectInvalid(res, 'issueDate');
    expect(messageOf(res)).to.include('2026-03-02').and.include('daybook rate set');
    expect(provider.requests, 'the provider is asked once').to.have.length(1);
    expect(written()).to.deep.equal(before);
    expect(invoiceRow(invoiceId)).to.include({ status: 'draft', usd_per_unit: null });

    // Stored by hand, the same key sends at it.
    gbp('2026-09-10', '1.31');
    const retried = await send(invoiceId, headers);
    expect(retried.status, retried.text).to.equal(200);
    expect(retried.headers['idempotent-replayed']).to.equal(undefined);
    expect(invoiceRow(invoiceId)).to.include({ status: 'sent', usd_per_unit: '1.31' });
  });

  it('says so when no rate at all is stored', async () => {
    const invoiceId = await gbpDraft('2026-09-10');
    const res = await send(invoiceId);
    expectInvalid(res, 'issueDate');
    expect(messageOf(res)).to.match(/no GBP rate is stored on or before 2026-09-10/).and.include('daybook rate set');
  });

  it('sends at the newest stored rate up to 4 days older than the issue date, not 5, without asking the provider when it serves', async () => {
    gbp('2026-09-05', '1.28');
    const invoiceId = await gbpDraft('2026-09-10');
    const refused = await send(invoiceId);
    expectInvalid(refused, 'issueDate');
    expect(messageOf(refused)).to.include('2026-09-05').and.include('daybook rate set');
    expect(provider.requests, 'a 5-day-old rate: the provider is asked once').to.have.length(1);
    expect(invoiceRow(invoiceId).status).to.equal('draft');

    provider.requests.length = 0;
    gbp('2026-09-06', '1.29');
    const res = await send(invoiceId);
    expect(res.status, res.text).to.equal(200);
    expect(provider.requests, 'a 4-day-old rate serves without asking').to.deep.equal([]);
    expect(invoiceRow(invoiceId)).to.include({ status: 'sent', usd_per_unit: '1.29' });
  });

  it("refuses to send an invoice issued after today until a rate for its issue date is stored, then sends at it", async () => {
    gbp('2026-09-15', '1.30');
    const invoiceId = await gbpDraft('2026-09-18');
    const before = written();
    const res = await send(invoiceId);
    expectInvalid(res, 'issueDate');
    expect(messageOf(res)).to.include('after today').and.include('2026-09-15').and.include('daybook rate set');
    expect(written()).to.deep.equal(before);
    expect(invoiceRow(invoiceId).status).to.equal('draft');

    gbp('2026-09-18', '1.32');
    const accepted = await send(invoiceId);
    expect(accepted.status, accepted.text).to.equal(200);
    expect(invoiceRow(invoiceId)).to.include({ status: 'sent', usd_per_unit: '1.32' });
  });

  describe('a payment', () => {
    /** A GBP invoice issued 2026-03-02 and sent at a rate stored for that day. */
    async function sentInMarch(): Promise<string> {
      gbp('2026-03-02', '1.27');
      const invoiceId = await gbpDraft('2026-03-02');
      const res = await send(invoiceId);
      expect(res.status, res.text).to.equal(200);
      provider.requests.length = 0;
      return invoiceId;
    }

    it('refuses (422 paidAt) a payment months after the newest stored rate, naming it and daybook rate set, and records nothing', async () => {
      const invoiceId = await sentInMarch();
      const before = written();
      const res = await pay(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-09-10' });
      expectInvalid(res, 'paidAt');
      expect(messageOf(res)).to.include('2026-03-02').and.include('daybook rate set');
      expect(provider.requests).to.have.length(1);
      expect(written()).to.deep.equal(before);
      expect(invoiceRow(invoiceId)).to.include({ status: 'sent', paid_cents: 0n });
    });

    it('records a payment at the newest stored rate up to 4 days older than its date, not 5', async () => {
      const invoiceId = await sentInMarch();
      gbp('2026-09-05', '1.28');
      expectInvalid(await pay(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-09-10' }), 'paidAt');
      expect(invoiceRow(invoiceId)).to.include({ status: 'sent', paid_cents: 0n });
      provider.requests.length = 0;
      gbp('2026-09-06', '1.30');
      const res = await pay(invoiceId, { amountCents: '50000', method: 'wire', paidAt: '2026-09-10' });
      expect(res.status, res.text).to.equal(201);
      expect(provider.requests).to.deep.equal([]);
      // GBP 500.00 x 1.30 = USD 650.00 in the bank.
      const cash = app.db
        .prepare(
          `SELECT jl.amount_cents FROM journal_lines jl JOIN journal_entries je ON je.id = jl.entry_id
           WHERE je.source_type = 'invoice_payment' AND je.source_id = ? AND jl.direction = 'debit' ORDER BY jl.line_no LIMIT 1`,
        )
        .safeIntegers()
        .get(res.body.paymentId) as { amount_cents: bigint };
      expect(cash.amount_cents).to.equal(65000n);
    });
  });
});
