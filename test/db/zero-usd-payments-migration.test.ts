import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { recordPayment, sendInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice } from '../../src/books/invoices.js';
import { inTransaction, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { migrateThrough, letOlderBooksTakeTodaysAuditRows, letOlderBooksTakeTodaysChart } from '../support/db.js';
import { accountIdByName, buildBusiness, buildTenant, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * Migration 0012 on books written before it: invoice_payments is rebuilt with journal_entry_id
 * nullable (only for a payment worth 0 USD cents in both views); every payment is kept as it
 * was, and payments stay immutable.
 */
describe('migration 20261127_0012_zero_usd_payments on existing books', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-migration-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every payment, keeps payments immutable, and refuses an entry-less payment worth any USD', async () => {
    const path = join(dir, 'books.sqlite');
    await migrateThrough(path, '20261127_0011_review_recorded_expense');
    const clock = testClock();
    let db = openDb(path, { synchronous: 'normal' });
    letOlderBooksTakeTodaysAuditRows(db);
    ensureServerSecrets(db, clock);
    const tenant = buildTenant(db, clock);
    letOlderBooksTakeTodaysChart(db);
    const business = buildBusiness(db, clock, { tenantId: tenant.id });
    const { id: customerId } = inTransaction(db, () => findOrCreateCustomer(db, clock, TEST_ACTOR, tenant.id, { name: 'Harbor Cafe' }));
    const { invoiceId } = inTransaction(db, () =>
      createInvoice(db, clock, TEST_ACTOR, {
        business,
        customerId,
        issueDate: '2026-03-02',
        lines: [{ description: 'Bread', quantity: '1', unitPriceCents: 1000n, accountId: accountIdByName(db, business.id, 'Sales') }],
      }),
    );
    inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, { siteUrl: 'http://localhost:3000' }));
    inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: 400n, method: 'cash', paidAt: '2026-03-02' }));
    const before = db.prepare('SELECT * FROM invoice_payments ORDER BY id').all();
    db.close();

    await migrateLatest(path);
    db = openDb(path, { synchronous: 'normal' });
    try {
      expect(db.prepare('SELECT * FROM invoice_payments ORDER BY id').all()).to.deep.equal(before);
      expect(() => db.prepare('UPDATE invoice_payments SET memo = ?').run('x')).to.throw(/immutable/);
      expect(() => db.prepare('DELETE FROM invoice_payments').run()).to.throw(/immutable/);
      const insert = (usd: bigint, receivable: bigint) =>
        db
          .prepare(
            `INSERT INTO invoice_payments (id, invoice_id, amount_cents, method, paid_at, usd_per_unit, usd_cents, receivable_usd_cents, journal_entry_id, created_at)
             VALUES (?, ?, 1, 'cash', '2026-03-02', '1', ?, ?, NULL, '2026-03-15T12:00:00.000Z')`,
          )
          .run(`p-${usd}-${receivable}`, invoiceId, usd, receivable);
      expect(() => insert(1n, 0n)).to.throw(/CHECK constraint failed/);
      expect(() => insert(0n, 1n)).to.throw(/CHECK constraint failed/);
    } finally {
      db.close();
    }
  });
});
