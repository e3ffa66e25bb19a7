import Database from 'better-sqlite3';
import { expect } from 'chai';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { createInvoice } from '../../src/books/invoices.js';
import { recordPayment, sendInvoice, voidInvoice } from '../../src/books/invoice-posting.js';
import { type Db, inTransaction } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, buildBusiness, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * Migration 0005's guards: once sent, an invoice is part of the books, and even a connection
 * that never ran our pragmas (the sqlite3 shell) cannot rewrite it.
 */
describe('invoice guards (migration 20261123_0005)', () => {
  let temp: TempDb;
  let raw: Db;
  const clock = testClock('2026-03-15T12:00:00.000Z');

  before(async () => {
    temp = await freshDb();
    raw = new Database(temp.path);
  });
  after(() => {
    raw.close();
    temp.close();
  });

  /** A USD invoice of 100.00 (one line), issued 2026-03-01, taken as far as `fate`. */
  function invoice(fate: 'draft' | 'sent' | 'partly paid' | 'void'): string {
    const business = buildBusiness(temp.db, clock);
    return inTransaction(temp.db, () => {
      const customer = findOrCreateCustomer(temp.db, clock, TEST_ACTOR, business.tenantId, { name: 'Guard Co', email: 'ap@guard.example' });
      const { invoiceId } = createInvoice(temp.db, clock, TEST_ACTOR, {
        business,
        customerId: customer.id,
        issueDate: '2026-03-01',
        lines: [{ description: 'Work', quantity: '1', unitPriceCents: 10_000n, accountId: accountIdByName(temp.db, business.id, 'Sales') }],
      });
      if (fate === 'draft') return invoiceId;
      sendInvoice(temp.db, clock, TEST_ACTOR, invoiceId, { siteUrl: 'http://localhost:3000' });
      if (fate === 'partly paid') recordPayment(temp.db, clock, TEST_ACTOR, { invoiceId, amountCents: 4_000n, method: 'check', paidAt: '2026-03-02' });
      if (fate === 'void') voidInvoice(temp.db, clock, TEST_ACTOR, invoiceId);
      return invoiceId;
    });
  }

  const refused = (sql: string, ...params: unknown[]): string => {
    try {
      raw.prepare(sql).run(...params);
    } catch (error) {
      expect((error as { code?: string }).code).to.equal('SQLITE_CONSTRAINT_TRIGGER');
      return (error as Error).message;
    }
    return expect.fail(`expected the database to refuse: ${sql}`);
  };
  const row = (id: string) => raw.prepare('SELECT * FROM invoices WHERE id = ?').get(id);

  for (const [column, value] of [
    ['total_cents', 1],
    ['subtotal_cents', 1],
    ['tax_rate_percent', '50'],
    ['currency', 'EUR'],
    ['issue_date', '2026-01-01'],
    ['due_date', '2027-01-01'],
    ['customer_id', 'someone-else'],
    ['usd_per_unit', '2'],
    ['journal_entry_id', null],
    ['sent_at', null],
    ['memo', 'rewritten'],
  ] as const) {
    it(`refuses a change of ${column} on a sent invoice`, () => {
      const id = invoice('sent');
      const before = row(id);
      expect(refused(`UPDATE invoices SET ${column} = ? WHERE id = ?`, value, id)).to.match(/a sent invoice keeps its amounts/);
      expect(row(id)).to.deep.equal(before);
    });
  }

  it('lets a draft change (nothing is posted yet)', () => {
    const id = invoice('draft');
    expect(raw.prepare("UPDATE invoices SET memo = 'still a draft' WHERE id = ?").run(id).changes).to.equal(1);
    expect(raw.prepare("UPDATE invoice_lines SET description = 'Different work', amount_cents = 500 WHERE invoice_id = ?").run(id).changes).to.equal(1);
    expect(row(id)).to.include({ status: 'draft', sent_at: null, memo: 'still a draft' });
    expect(raw.prepare('SELECT description, amount_cents FROM invoice_lines WHERE invoice_id = ?').all(id)).to.deep.equal([{ description: 'Different work', amount_cents: 500 }]);
  });

  it('refuses adding, changing or removing a sent invoice\'s lines', () => {
    const id = invoice('sent');
    expect(refused("UPDATE invoice_lines SET amount_cents = 1 WHERE invoice_id = ?", id)).to.match(/only while the invoice is a draft/);
    expect(refused('DELETE FROM invoice_lines WHERE invoice_id = ?', id)).to.match(/only while the invoice is a draft/);
    const line = raw.prepare('SELECT * FROM invoice_lines WHERE invoice_id = ?').get(id) as Record<string, unknown>;
    expect(
      refused(
        'INSERT INTO invoice_lines (id, invoice_id, line_no, description, quantity, unit_price_cents, amount_cents, ledger_account_id) VALUES (?, ?, 2, ?, ?, ?, ?, ?)',
        'extra-line',
        id,
        'Extra',
        '1',
        500,
        500,
        line.ledger_account_id,
      ),
    ).to.match(/only while the invoice is a draft/);
  });

  it('refuses sending an invoice back to draft, and moving a void invoice anywhere', () => {
    expect(refused("UPDATE invoices SET status = 'draft' WHERE id = ?", invoice('sent'))).to.match(/never returns to draft/);
    expect(refused("UPDATE invoices SET status = 'sent' WHERE id = ?", invoice('void'))).to.match(/void invoice stays void/);
  });

  it('refuses a paid amount other than the sum of the recorded payments', () => {
    const id = invoice('partly paid');
    expect(refused('UPDATE invoices SET paid_cents = 10000 WHERE id = ?', id)).to.match(/sum of its recorded payments/);
    expect(refused('UPDATE invoices SET paid_cents = 0 WHERE id = ?', id)).to.match(/sum of its recorded payments/);
  });

  it('refuses changing or deleting a recorded payment', () => {
    const id = invoice('partly paid');
    expect(refused('UPDATE invoice_payments SET amount_cents = 1 WHERE invoice_id = ?', id)).to.match(/immutable/);
    expect(refused('DELETE FROM invoice_payments WHERE invoice_id = ?', id)).to.match(/immutable/);
  });
});
