import { expect } from 'chai';
import { runOverdueSweep } from '../../src/jobs/overdue.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { createInvoice } from '../../src/books/invoices.js';
import { recordPayment, sendInvoice } from '../../src/books/invoice-posting.js';
import { inTransaction } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, buildBusiness, TEST_ACTOR, testClock } from '../support/factories.js';

/** The overdue sweep: invoices with money owed whose due date has passed become overdue. */
describe('overdue sweep job', () => {
  let temp: TempDb;
  const clock = testClock('2026-03-15T12:00:00.000Z');
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  /** An invoice of 100.00 issued 2026-03-01, due `dueDate`, taken as far as `fate`. */
  function invoice(dueDate: string, fate: 'draft' | 'sent' | 'partly paid' | 'paid'): string {
    const business = buildBusiness(temp.db, clock);
    return inTransaction(temp.db, () => {
      const customer = findOrCreateCustomer(temp.db, clock, TEST_ACTOR, business.tenantId, { name: 'Sweep Co', email: 'ap@sweep.example' });
      const { invoiceId } = createInvoice(temp.db, clock, TEST_ACTOR, {
        business,
        customerId: customer.id,
        issueDate: '2026-03-01',
        dueDate,
        lines: [{ description: 'Work', quantity: '1', unitPriceCents: 10_000n, accountId: accountIdByName(temp.db, business.id, 'Sales') }],
      });
      if (fate === 'draft') return invoiceId;
      sendInvoice(temp.db, clock, TEST_ACTOR, invoiceId, { siteUrl: 'http://localhost:3000' });
      if (fate !== 'sent') {
        recordPayment(temp.db, clock, TEST_ACTOR, { invoiceId, amountCents: fate === 'paid' ? 10_000n : 4_000n, method: 'check', paidAt: '2026-03-02' });
      }
      return invoiceId;
    });
  }
  const statusOf = (id: string) => (temp.db.prepare('SELECT status FROM invoices WHERE id = ?').get(id) as { status: string }).status;

  it('marks sent and partly paid invoices past their due date overdue, audited, and leaves the rest', () => {
    const late = invoice('2026-03-14', 'sent');
    const partly = invoice('2026-03-10', 'partly paid');
    const dueToday = invoice('2026-03-15', 'sent');
    const draft = invoice('2026-03-02', 'draft');
    const paid = invoice('2026-03-02', 'paid');
    const before = runOverdueSweep({ db: temp.db, clock }).markedOverdue;
    expect(before).to.equal(2);
    expect([late, partly, dueToday, draft, paid].map(statusOf)).to.deep.equal(['overdue', 'overdue', 'sent', 'draft', 'paid']);
    const audit = temp.db.prepare("SELECT actor_type, actor_name FROM audit_log WHERE action = 'invoice.overdue' AND subject_id = ?").get(late);
    expect(audit).to.deep.equal({ actor_type: 'job', actor_name: 'overdue' });
  });

  it('is idempotent: a second run moves nothing', () => {
    expect(runOverdueSweep({ db: temp.db, clock }).markedOverdue).to.equal(0);
  });
});
