import { expect } from 'chai';
import { ledgerTotals } from '../../src/books/ledger.js';
import { lockPeriod } from '../../src/books/periods.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type ApiTenant, buildApiTenant, countRows } from '../support/api.js';
import { accountIdByName, TEST_ACTOR } from '../support/factories.js';
import { addCustomer } from '../support/register.js';
import { CliHarness, expectBadArguments, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';

/**
 * `daybook invoice void --id`, run in-process over the very books file a test app serves: the
 * invoices are drafted, sent and paid through the API, then voided by the operator.
 */

const APP_START = '2026-03-15T12:00:00.000Z';
/** The operator voids five days after the API work, so "dated today" cannot be mistaken for the issue date. */
const VOID_AT = '2026-03-20T09:30:00.000Z';

interface Line {
  account: string;
  direction: string;
  amountCents: bigint;
  basis: string;
}

describe('daybook invoice void', () => {
  let cli: CliHarness;
  let app: TestApp;
  let tenant: ApiTenant;

  beforeEach(async () => {
    cli = new CliHarness();
    cli.clock.set(VOID_AT);
    // No provider is reachable: these tests use USD only, so none is ever asked.
    app = await startTestApp(APP_START, { dbPath: cli.dbPath, config: { fxProviderUrl: 'http://127.0.0.1:9/' } });
    tenant = buildApiTenant(app, { plan: 'large' });
  });
  afterEach(async () => {
    await app.close();
    cli.cleanup();
  });

  /**
   * USD 2 x 400.00 = 800.00 of Service Revenue plus 8.875 % tax = 71.00: total 871.00, issued
   * 2026-03-02.
   */
  async function draftInvoice(customerName = 'Harbor Cafe'): Promise<string> {
    const customerId = addCustomer(app, tenant.id, { name: customerName, email: 'ap@harbor.example' });
    const res = await app.post('/api/v1/invoices', tenant.key, {
      customerId,
      issueDate: '2026-03-02',
      taxRatePercent: '8.875',
      lines: [{ description: 'Consulting', quantity: '2', unitPriceCents: '40000', accountId: accountIdByName(app.db, tenant.business.id, 'Service Revenue') }],
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.invoiceId as string;
  }
  async function sentInvoice(): Promise<string> {
    const invoiceId = await draftInvoice();
    const res = await app.post(`/api/v1/invoices/${invoiceId}/send`, tenant.key);
    expect(res.status, res.text).to.equal(200);
    return invoiceId;
  }
  async function payment(invoiceId: string, amountCents: string): Promise<void> {
    const res = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents, method: 'check', paidAt: '2026-03-10' });
    expect(res.status, res.text).to.equal(201);
  }

  const voidIt = (invoiceId: string, extra: string[] = []) => cli.run([...extra, 'invoice', 'void', '--id', invoiceId]);
  const status = (invoiceId: string) => (app.db.prepare('SELECT status FROM invoices WHERE id = ?').get(invoiceId) as { status: string }).status;
  const entryCount = () => countRows(app.db, 'SELECT count(*) FROM journal_entries WHERE business_id = ?', tenant.business.id);
  const entries = (invoiceId: string) =>
    app.db
      .prepare('SELECT id, entry_date, source_type, reverses_entry_id FROM journal_entries WHERE source_id = ? ORDER BY created_at, id')
      .all(invoiceId) as { id: string; entry_date: string; source_type: string; reverses_entry_id: string | null }[];
  const linesOf = (entryId: string): Line[] =>
    (
      app.db
        .prepare(
          `SELECT a.name AS account, l.direction, l.amount_cents, l.basis FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
           WHERE l.entry_id = ? ORDER BY l.line_no`,
        )
        .all(entryId) as { account: string; direction: string; amount_cents: bigint | number; basis: string }[]
    ).map((row) => ({ account: row.account, direction: row.direction, amountCents: BigInt(row.amount_cents), basis: row.basis }));
  const receivable = () =>
    BigInt(
      (
        app.db
          .prepare(
            `SELECT coalesce(sum(CASE WHEN l.direction = 'debit' THEN l.amount_cents ELSE -l.amount_cents END), 0) AS balance
             FROM journal_lines l JOIN ledger_accounts a ON a.id = l.ledger_account_id
             WHERE l.business_id = ? AND a.name = 'Accounts Receivable' AND l.basis IN ('both', 'accrual')`,
          )
          .get(tenant.business.id) as { balance: bigint | number }
      ).balance,
    );

  it('voids a draft by its status alone: nothing is posted', async () => {
    const invoiceId = await draftInvoice();
    const result = await voidIt(invoiceId);
    expectOk(result);
    expect(result.stdout).to.equal('Invoice INV-0001 is void (a draft: nothing had been posted).\n');
    expect(status(invoiceId)).to.equal('void');
    expect(entryCount()).to.equal(0);
    // The API shows it void.
    expect((await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key)).body.status).to.equal('void');
  });

  it('prints one JSON object with --json', async () => {
    const invoiceId = await draftInvoice();
    const result = await voidIt(invoiceId, ['--json']);
    expectOk(result);
    expect(parseOneObject(result.stdout)).to.deep.equal({ id: invoiceId, number: 'INV-0001', status: 'void', previousStatus: 'draft' });
  });

  it("reverses a sent invoice with a new entry dated today, every line's direction swapped, the original untouched", async () => {
    const invoiceId = await sentInvoice();
    const [original] = entries(invoiceId);
    // Tax 800.00 x 8.875 % = 71.00; receivable 871.00.
    const originalLines: Line[] = [
      { account: 'Accounts Receivable', direction: 'debit', amountCents: 87100n, basis: 'accrual' },
      { account: 'Service Revenue', direction: 'credit', amountCents: 80000n, basis: 'accrual' },
      { account: 'Sales Tax Payable', direction: 'credit', amountCents: 7100n, basis: 'accrual' },
    ];
    expect(linesOf(original!.id)).to.deep.equal(originalLines);
    expect(receivable()).to.equal(87100n);

    const result = await voidIt(invoiceId);
    expectOk(result);
    expect(result.stdout).to.equal('Invoice INV-0001 is void (its entry reversed today).\n');
    expect(status(invoiceId)).to.equal('void');

    const after = entries(invoiceId);
    expect(after).to.have.length(2);
    expect(after[0]).to.deep.equal(original);
    expect(linesOf(original!.id), 'the original entry is never edited').to.deep.equal(originalLines);
    const reversal = after[1]!;
    expect(reversal).to.include({ entry_date: '2026-03-20', source_type: 'reversal', reverses_entry_id: original!.id });
    expect(linesOf(reversal.id)).to.deep.equal([
      { account: 'Accounts Receivable', direction: 'credit', amountCents: 87100n, basis: 'accrual' },
      { account: 'Service Revenue', direction: 'debit', amountCents: 80000n, basis: 'accrual' },
      { account: 'Sales Tax Payable', direction: 'debit', amountCents: 7100n, basis: 'accrual' },
    ]);
    // 87,100 debited, 87,100 credited back: the receivable nets to zero.
    expect(receivable()).to.equal(0n);
    for (const view of ['accrual', 'cash'] as const) {
      const totals = ledgerTotals(app.db, tenant.business.id, view);
      expect(totals.debitCents, view).to.equal(totals.creditCents);
    }
    // A void invoice takes no payment and no reminder.
    expect((await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '100', method: 'cash' })).status).to.equal(409);
    expect((await app.post(`/api/v1/invoices/${invoiceId}/remind`, tenant.key)).status).to.equal(409);
  });

  it('refuses a partly paid invoice (exit 2, one line) and leaves it as it was', async () => {
    const invoiceId = await sentInvoice();
    await payment(invoiceId, '10000');
    const before = entryCount();
    expectBadArguments(await voidIt(invoiceId), /payments/);
    expect(status(invoiceId)).to.equal('partially_paid');
    expect(entryCount()).to.equal(before);
    // 87,100 - 10,000 still owed.
    expect(receivable()).to.equal(77100n);
  });

  it('refuses a fully paid invoice (exit 2, one line) and leaves it as it was', async () => {
    const invoiceId = await sentInvoice();
    await payment(invoiceId, '87100');
    const before = entryCount();
    expectBadArguments(await voidIt(invoiceId), /payments/);
    expect(status(invoiceId)).to.equal('paid');
    expect(entryCount()).to.equal(before);
    expect(receivable()).to.equal(0n);
  });

  it('refuses to void twice (exit 2) and posts no second reversal', async () => {
    const sentId = await sentInvoice();
    expectOk(await voidIt(sentId));
    const before = entryCount();
    expectBadArguments(await voidIt(sentId), /void/);
    expect(entryCount()).to.equal(before);
    expect(receivable()).to.equal(0n);

    const draftId = await draftInvoice('Corner Bakery');
    expectOk(await voidIt(draftId));
    expectBadArguments(await voidIt(draftId), /void/);
    expect(status(draftId)).to.equal('void');
    expect(entryCount()).to.equal(before);
  });

  it("refuses a sent invoice when today's period is locked (the reversal would land in it) and leaves it sent", async () => {
    const invoiceId = await sentInvoice();
    lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-03-20');
    const before = entryCount();
    expectBadArguments(await voidIt(invoiceId), /closed period/);
    expect(status(invoiceId)).to.equal('sent');
    expect(entryCount()).to.equal(before);
    expect(receivable()).to.equal(87100n);
  });

  it('refuses an unknown invoice and a malformed id (exit 2)', async () => {
    expectBadArguments(await voidIt(UNKNOWN_ID), /no such invoice/i);
    expectBadArguments(await voidIt('INV-0001'), /--id/);
  });

  describe('daybook invoice relink', () => {
    it('prints the new pay link; the old one answers 404 and the new one the invoice', async () => {
      const invoiceId = await sentInvoice();
      const before = await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key);
      const oldPath = new URL(before.body.payUrl as string).pathname;
      expect((await app.get(oldPath, null)).status).to.equal(200);

      const relinked = await cli.json<{ id: string; number: string; payUrl: string }>(['invoice', 'relink', '--id', invoiceId]);

      expect(relinked.id).to.equal(invoiceId);
      expect(relinked.number).to.equal(before.body.number);
      expect(relinked.payUrl).to.not.equal(before.body.payUrl);
      expect((await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key)).body.payUrl).to.equal(relinked.payUrl);
      expect((await app.get(oldPath, null)).status).to.equal(404);
      expect((await app.get(new URL(relinked.payUrl).pathname, null)).status).to.equal(200);
      const text = await cli.run(['invoice', 'relink', '--id', invoiceId]);
      expectOk(text);
      expect(text.stdout).to.match(/^Invoice INV-\d{4} has a new pay link; the old one now leads nowhere\. Send the customer the new one:\nhttp:\/\/\S+\/pay\/[A-Za-z0-9_-]{43}\n$/);
    });

    it('refuses an unknown invoice and a malformed id (exit 2)', async () => {
      expectBadArguments(await cli.run(['invoice', 'relink', '--id', UNKNOWN_ID]), /no such invoice/i);
      expectBadArguments(await cli.run(['invoice', 'relink', '--id', 'INV-0001']), /--id/);
    });
  });
});
