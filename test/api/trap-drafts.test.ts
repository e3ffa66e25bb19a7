import { expect } from 'chai';
import { lockPeriod } from '../../src/books/periods.js';
import { CliHarness, expectOk } from '../cli/support.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/factories.js';
import { addBilledCustomer, type Books, TEST_SITE_URL, createInvoice, invoiceBody, newBooks } from '../support/invoicing.js';

/**
 * No trap drafts: a draft dated in a closed period can never be sent (send posts on the issue
 * date and no closed period reopens), so Today names it, with `daybook invoice void` as the way
 * out.
 */

const START = '2026-03-15T12:00:00.000Z';

interface Signal {
  severity: string;
  sentence: string;
  action: string;
  evidence: { label: string; url?: string }[];
}

describe('no trap drafts: a draft dated in a closed period is named in Today', () => {
  let app: TestApp;
  let books: Books;

  beforeEach(async () => {
    app = await startTestApp(START);
    books = newBooks(app);
  });

  afterEach(async () => {
    await app.close();
  });

  it('POST /invoices dated in a closed period answers 409 period_locked, writing nothing and using no number', async () => {
    lockPeriod(app.db, app.clock, TEST_ACTOR, books.businessId, '2026-02-28');
    const customerId = addBilledCustomer(app, books.tenantId);
    const count = () => app.db.prepare('SELECT count(*) AS n FROM invoices WHERE business_id = ?').get(books.businessId) as { n: bigint };
    const before = count();
    const res = await app.post('/api/v1/invoices', books.key, invoiceBody(app, books.businessId, customerId, { issueDate: '2026-02-28' }), { 'idempotency-key': 'trap-draft-1' });
    expect(res.status, res.text).to.equal(409);
    expect(res.body.error.code).to.equal('period_locked');
    expect(res.body.error.message).to.match(/^issueDate: 2026-02-28 falls in a closed period \(locked through 2026-02-28\)/);
    expect(count()).to.deep.equal(before);
    const next = await createInvoice(app, books.key, invoiceBody(app, books.businessId, customerId, { issueDate: '2026-03-01' }));
    expect(next.invoiceNumber, 'no number was used up').to.equal('INV-0001');
  });

  it('is named in Today once its period is closed after drafting, with invoice void as the way out', async () => {
    const customerId = addBilledCustomer(app, books.tenantId);
    const created = await createInvoice(app, books.key, invoiceBody(app, books.businessId, customerId, { issueDate: '2026-03-02' }));
    const before = await app.get(`/api/v1/today?entityId=${books.businessId}`, books.key);
    expect((before.body.signals as Signal[]).map((signal) => signal.sentence).filter((s) => s.includes('cannot be sent'))).to.deep.equal([]);

    lockPeriod(app.db, app.clock, TEST_ACTOR, books.businessId, '2026-03-10');
    const after = await app.get(`/api/v1/today?entityId=${books.businessId}`, books.key);
    expect(after.status).to.equal(200);
    const trapped = (after.body.signals as Signal[]).filter((signal) => signal.sentence.includes('cannot be sent: period closed'));
    expect(trapped).to.have.length(1);
    expect(trapped[0]!.severity).to.equal('attention');
    expect(trapped[0]!.sentence).to.equal(
      `Draft ${created.invoiceNumber} cannot be sent: period closed (it is dated 2026-03-02, and the books are locked through 2026-03-10).`,
    );
    expect(trapped[0]!.action).to.contain(`daybook invoice void --id ${created.invoiceId}`);
    expect(trapped[0]!.evidence).to.deep.equal([{ label: `Invoice ${created.invoiceNumber}, issued 2026-03-02`, url: `${TEST_SITE_URL}/api/v1/invoices/${created.invoiceId}` }]);
  });
});

describe('daybook invoice void --help', () => {
  it('names the command as the way out for a draft dated in a closed period', async () => {
    const cli = new CliHarness();
    try {
      const result = await cli.run(['invoice', 'void', '--help'], { withoutDb: true });
      expectOk(result);
      expect(result.stdout.replace(/\s+/g, ' ')).to.contain('The way out for a draft dated in a closed period, which can never be sent');
    } finally {
      cli.cleanup();
    }
  });
});
