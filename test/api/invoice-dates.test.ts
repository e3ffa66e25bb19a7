import { expect } from 'chai';
import { voidInvoice } from '../../src/books/invoice-posting.js';
import { inTransaction } from '../../src/db/connection.js';
import type { TestApp } from '../support/app.js';
import { type ApiTenant, expectInvalid, useFreshTenantPerTest } from '../support/api.js';
import { TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer, createInvoice, invoiceBody, payInvoice, sendInvoice } from '../support/invoicing.js';

/** Dates around an invoice's life: nothing is paid in the future, and nothing is reversed before it was posted. */
describe('invoice dates and void balances', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: '2026-03-15T12:00:00.000Z', tenant: { plan: 'large' } });

  const sentInvoice = async (issueDate = '2026-03-01'): Promise<string> => {
    const { invoiceId } = await createInvoice(app, tenant.key, invoiceBody(app, tenant.business.id, addBilledCustomer(app, tenant.id), { issueDate }));
    await sendInvoice(app, tenant.key, invoiceId);
    return invoiceId;
  };

  it('refuses a payment dated after today (422 "paidAt:"), and takes one dated today', async () => {
    const invoiceId = await sentInvoice();
    const res = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '1000', method: 'cash', paidAt: '2026-03-16' });
    expectInvalid(res, 'paidAt');
    expect(res.body.error.message).to.contain('after today (2026-03-15)');
    await payInvoice(app, tenant.key, invoiceId, '1000', '2026-03-15');
  });

  it('reverses an invoice issued for a later day on its issue date, never before the posting it undoes', async () => {
    const invoiceId = await sentInvoice('2026-06-01');
    inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, invoiceId));
    const dates = app.db
      .prepare("SELECT entry_date, source_type FROM journal_entries WHERE source_id = ? ORDER BY created_at, source_type")
      .all(invoiceId) as { entry_date: string; source_type: string }[];
    expect(dates).to.deep.equal([
      { entry_date: '2026-06-01', source_type: 'invoice' },
      { entry_date: '2026-06-01', source_type: 'reversal' },
    ]);
  });

  it('reverses an invoice issued earlier on the day it is voided', async () => {
    const invoiceId = await sentInvoice('2026-03-01');
    inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, invoiceId));
    const reversal = app.db.prepare("SELECT entry_date FROM journal_entries WHERE source_id = ? AND source_type = 'reversal'").get(invoiceId);
    expect(reversal).to.deep.equal({ entry_date: '2026-03-15' });
  });

  it('shows nothing owed on a void invoice, in the list and the detail', async () => {
    const invoiceId = await sentInvoice();
    inTransaction(app.db, () => voidInvoice(app.db, app.clock, TEST_ACTOR, invoiceId));
    const detail = (await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key)).body;
    expect([detail.status, detail.total.cents, detail.balance.cents]).to.deep.equal(['void', '25000', '0']);
    const listed = (await app.get('/api/v1/invoices?status=void', tenant.key)).body.invoices;
    expect(listed.map((row: { balance: { cents: string } }) => row.balance.cents)).to.deep.equal(['0']);
  });
});
