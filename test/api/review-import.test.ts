import { expect } from 'chai';
import { lockPeriod } from '../../src/books/periods.js';
import { type ApiTenant, countRows, useFreshTenantPerTest } from '../support/api.js';
import type { TestApp } from '../support/app.js';
import { accountIdByName, accountIdByRole, TEST_ACTOR } from '../support/factories.js';
import { withQuery } from '../support/register.js';
import { statementQueue } from '../support/review.js';

/**
 * A bank statement from file to books: the real parser and importer (what `daybook import
 * bank` runs) fill the queue, and a client reads it and accepts over HTTP.
 */

const START = '2026-03-15T12:00:00.000Z';

describe('a bank statement from import to accepted over HTTP', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { plan: 'large' } });

  const { importRows, getQueue, everyItem, accept, expectBooksBalance } = statementQueue(() => ({ app, tenant }));
  const balanceOf = (accountId: string): bigint => {
    const row = app.db
      .prepare(
        `SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END), 0) AS balance
         FROM journal_lines WHERE ledger_account_id = ? AND basis IN ('both', 'accrual')`,
      )
      .get(accountId) as { balance: bigint };
    return BigInt(row.balance);
  };

  it('queues money out with the proposal learnt from bookings, and accepting as proposed books it to that account against the bank', async () => {
    // Ten earlier Crema purchases, each booked over HTTP to Meals: the history the categoriser learns from.
    const earlier = Array.from({ length: 10 }, (_, i) => `2026-02-${String(i + 1).padStart(2, '0')},CREMA COFFEE ROASTERS #${i},-${20 + i}.00,Crema Coffee Roasters`);
    expect(importRows(...earlier)).to.include({ queued: 10, imported: 10 });
    const meals = accountIdByName(app.db, tenant.business.id, 'Meals');
    for (const item of everyItem(await getQueue())) expect((await accept(item.id, { accountId: meals })).status).to.equal(200);
    expect(everyItem(await getQueue())).to.deep.equal([]);

    const result = importRows('2026-03-12,CREMA COFFEE ROASTERS #77,-45.99,Crema Coffee Roasters', '2026-03-12,Card sales payout,1250.00,');
    expect(result).to.include({ rows: 2, imported: 2, queued: 1, moneyIn: 1, duplicates: 0, alreadyRecorded: 0 });
    const queue = await getQueue();
    expect(queue.needsReview).to.deep.equal([]);
    expect(queue.highConfidence).to.have.length(1);
    const [item] = queue.highConfidence;
    expect(item).to.deep.include({ date: '2026-03-12', vendor: 'Crema Coffee Roasters', description: 'CREMA COFFEE ROASTERS #77', proposedAccountId: meals, proposedAccount: 'Meals' });
    expect(item!.amount.cents).to.equal('4599');
    expect(item!.confidence).to.be.at.least(0.9);
    expect(item!.rationale).to.be.a('string').and.not.equal('');

    const bank = accountIdByRole(app.db, tenant.business.id, 'bank');
    const [mealsBefore, bankBefore] = [balanceOf(meals), balanceOf(bank)];
    const res = await accept(item!.id);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ ok: true });
    expect(balanceOf(meals) - mealsBefore).to.equal(4599n);
    expect(balanceOf(bank) - bankBefore).to.equal(-4599n);
    expectBooksBalance();
    expect(everyItem(await getQueue())).to.deep.equal([]);

    const register = await app.get(withQuery('/api/v1/transactions', { dateFrom: '2026-03-12', dateTo: '2026-03-12' }), tenant.key);
    expect(register.status).to.equal(200);
    const shown = (register.body.transactions as Array<{ status: string; amount: { cents: string }; account: string | null; source: string }>).map((t) => [
      t.account,
      t.status,
      t.source,
      t.amount.cents,
    ]);
    expect(shown).to.have.deep.members([
      ['Meals', 'accepted', 'csv', '4599'],
      [null, 'uncategorized', 'csv', '125000'],
    ]);
  });

  it('leaves out the bank line of an expense recorded with POST /expenses, so it is booked once', async () => {
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    const bank = accountIdByRole(app.db, tenant.business.id, 'bank');
    const recorded = await app.post('/api/v1/expenses', tenant.key, {
      date: '2026-03-10',
      amountCents: '4599',
      vendorName: 'Crema Coffee Roasters',
      accountId: supplies,
      memo: 'Beans',
    });
    expect(recorded.status, recorded.text).to.equal(201);
    const bankAfterExpense = balanceOf(bank);

    const result = importRows('2026-03-12,CREMA COFFEE ROASTERS,-45.99,Crema Coffee Roasters', '2026-03-12,Flour,-62.00,Miller & Sons');
    expect(result).to.include({ alreadyRecorded: 1, queued: 1 });
    const items = everyItem(await getQueue());
    expect(items.map((item) => item.description)).to.deep.equal(['Flour']);
    for (const item of items) expect((await accept(item.id, { accountId: supplies })).status).to.equal(200);
    expect(balanceOf(bank) - bankAfterExpense, 'only the flour left the bank after the expense').to.equal(-6200n);
    expect(countRows(app.db, "SELECT count(*) FROM journal_entries WHERE business_id = ? AND source_type IN ('expense', 'review_accept')", tenant.business.id)).to.equal(2);
    expectBooksBalance();
  });

  it('counts the bank line of a recorded expense as a duplicate when the statement comes again, though the expense is dated days outside it', async () => {
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    // The expense is dated 5 days before the statement's only day: it takes the line's fingerprint.
    const recorded = await app.post('/api/v1/expenses', tenant.key, { date: '2026-03-07', amountCents: '4599', vendorName: 'Crema Coffee Roasters', accountId: supplies });
    expect(recorded.status, recorded.text).to.equal(201);
    const statement = ['2026-03-12,CREMA COFFEE ROASTERS,-45.99,Crema Coffee Roasters'];
    expect(importRows(...statement)).to.include({ alreadyRecorded: 1, queued: 0, duplicates: 0 });
    expect(importRows(...statement)).to.include({ alreadyRecorded: 0, queued: 0, duplicates: 1 });
    expect(everyItem(await getQueue())).to.deep.equal([]);
  });

  it('refuses a statement with new money out in a closed period, and the queue stays as it was', async () => {
    lockPeriod(app.db, app.clock, TEST_ACTOR, tenant.business.id, '2026-02-28');
    expect(() => importRows('2026-02-27,Rent,-1200.00,', '2026-03-02,Coffee,-4.50,')).to.throw(/row 1: date 2026-02-27 falls in a closed period/);
    expect(everyItem(await getQueue())).to.deep.equal([]);
    expect(countRows(app.db, 'SELECT count(*) FROM transactions WHERE business_id = ?', tenant.business.id)).to.equal(0);
  });
});
