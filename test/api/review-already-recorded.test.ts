import { expect } from 'chai';
import { type ApiTenant, countRows, useFreshTenantPerTest } from '../support/api.js';
import type { TestApp } from '../support/app.js';
import { accountIdByName, accountIdByRole } from '../support/factories.js';
import { RECORDED_MATCH_DAYS } from '../../src/books/import/bank-import.js';
import { MIN_MEASURED_PAYMENTS } from '../../src/books/recorded-match.js';
import { type QueueItem, statementQueue } from '../support/review.js';

/**
 * The queue never books twice (issue 27, finding 7): an expense recorded with POST /expenses
 * after its bank line was queued turns the line's proposal into "already recorded as expense
 * X", and accepting it links the line to the expense and posts nothing.
 */

const START = '2026-03-15T12:00:00.000Z';

describe('the review queue never books an expense twice', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { plan: 'large' } });

  const { importRows, getQueue, everyItem, accept, expectBooksBalance } = statementQueue(() => ({ app, tenant }));
  const onlyItem = async (): Promise<QueueItem> => {
    const items = everyItem(await getQueue());
    expect(items).to.have.length(1);
    return items[0]!;
  };
  const recordExpense = async (body: Record<string, unknown>): Promise<string> => {
    const res = await app.post('/api/v1/expenses', tenant.key, body);
    expect(res.status, res.text).to.equal(201);
    return (res.body as { expenseId: string }).expenseId;
  };
  const journalEntries = (): number => countRows(app.db, 'SELECT count(*) FROM journal_entries WHERE business_id = ?', tenant.business.id);
  const bankBalance = (): bigint => {
    const row = app.db
      .prepare(
        `SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END), 0) AS balance
         FROM journal_lines WHERE ledger_account_id = ? AND basis IN ('both', 'accrual')`,
      )
      .get(accountIdByRole(app.db, tenant.business.id, 'bank')) as { balance: bigint };
    return BigInt(row.balance);
  };

  it('proposes "already recorded as expense X" with the expense\'s account once a matching expense is recorded', async () => {
    expect(importRows('2026-03-08,MILLER AND SONS FLOUR,-62.00,Miller & Sons')).to.include({ queued: 1 });
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    const expenseId = await recordExpense({ date: '2026-03-10', amountCents: '6200', vendorName: 'Miller & Sons', accountId: supplies });

    const queue = await getQueue();
    expect(queue.needsReview).to.deep.equal([]);
    expect(queue.highConfidence).to.have.length(1);
    const item = queue.highConfidence[0]!;
    expect(item).to.deep.include({ date: '2026-03-08', vendor: 'Miller & Sons', proposedAccountId: supplies, proposedAccount: 'Office Supplies', confidence: 0.95 });
    expect(item.rationale).to.match(new RegExp(`^Already recorded as expense ${expenseId} \\(2026-03-10, Miller & Sons\\)`));
    expect(item.rationale).to.include('posts nothing new');
  });

  it('proposes the match with a lower confidence (needs review) when the bank line names no vendor', async () => {
    expect(importRows('2026-03-12,CARD 4411 PURCHASE,-19.99,')).to.include({ queued: 1 });
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    const expenseId = await recordExpense({ date: '2026-03-07', amountCents: '1999', vendorName: 'Paper Co', accountId: supplies });
    const queue = await getQueue();
    expect(queue.highConfidence).to.deep.equal([]);
    expect(queue.needsReview).to.have.length(1);
    expect(queue.needsReview[0]).to.deep.include({ proposedAccountId: supplies, confidence: 0.8 });
    expect(queue.needsReview[0]!.rationale).to.include(`expense ${expenseId}`);
  });

  it(`measures the match's confidence on the business's own payments once it has ${MIN_MEASURED_PAYMENTS}: the share with no twin of the same amount within ${RECORDED_MATCH_DAYS} days`, async () => {
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    // 40 payments in February, every amount different but for five pairs two days apart, each pair to two vendors.
    for (let day = 1; day <= 20; day += 1) {
      const date = `2026-02-${String(day).padStart(2, '0')}`;
      await recordExpense({ date, amountCents: String(1000 + day), vendorName: 'Ledger Co', accountId: supplies });
      const twin = day <= 5;
      const twinDate = `2026-02-${String(day + 2).padStart(2, '0')}`;
      await recordExpense({ date: twin ? twinDate : date, amountCents: String(twin ? 1000 + day : 5000 + day), vendorName: 'Other Co', accountId: supplies });
    }
    expect(importRows('2026-03-12,CARD 4411 PURCHASE,-19.99,', '2026-03-12,MILLER AND SONS FLOUR,-62.00,Miller & Sons')).to.include({ queued: 2 });
    await recordExpense({ date: '2026-03-11', amountCents: '1999', vendorName: 'Paper Co', accountId: supplies });
    await recordExpense({ date: '2026-03-11', amountCents: '6200', vendorName: 'Miller & Sons', accountId: supplies });
    const byLine = new Map(everyItem(await getQueue()).map((item) => [item.amount.cents, item]));
    // No vendor named: 10 of the 41 payments (the 40, and the expense just recorded) have a twin: 31/41 = 0.756. Vendor named: no twin to the same vendor.
    expect(byLine.get('1999')).to.deep.include({ proposedAccountId: supplies, confidence: 0.75 });
    expect(byLine.get('6200')).to.deep.include({ proposedAccountId: supplies, confidence: 1 });
  });

  it('scores a match among several waiting lines that fit at 1 / their number, and says so', async () => {
    expect(importRows('2026-03-09,CARD 4411 PURCHASE,-19.99,', '2026-03-12,CARD 9921 PURCHASE,-19.99,', '2026-03-13,CARD 7710 PURCHASE,-19.99,')).to.include({ queued: 3 });
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    await recordExpense({ date: '2026-03-11', amountCents: '1999', vendorName: 'Paper Co', accountId: supplies });
    const matched = everyItem(await getQueue()).filter((item) => item.rationale?.startsWith('Already recorded'));
    expect(matched).to.have.length(1);
    expect(matched[0]).to.deep.include({ date: '2026-03-12', confidence: 0.33 });
    expect(matched[0]!.rationale).to.include('the nearest in date of 3 waiting bank lines that fit');
  });

  it('accepting the match (without accountId, or with the same one) links the bank line to the expense, posts nothing and takes it off the queue', async () => {
    importRows('2026-03-08,MILLER AND SONS FLOUR,-62.00,Miller & Sons', '2026-03-09,BAKERY SUPPLY,-30.00,Bakery Supply');
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    const expenseId = await recordExpense({ date: '2026-03-10', amountCents: '6200', vendorName: 'Miller & Sons', accountId: supplies });
    const second = await recordExpense({ date: '2026-03-09', amountCents: '3000', vendorName: 'Bakery Supply', accountId: supplies });
    const entries = journalEntries();
    const bank = bankBalance();
    const items = everyItem(await getQueue());
    expect(items).to.have.length(2);

    const flour = items.find((item) => item.description === 'MILLER AND SONS FLOUR')!;
    const res = await accept(flour.id);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ ok: true });
    const bakery = items.find((item) => item.description === 'BAKERY SUPPLY')!;
    expect((await accept(bakery.id, { accountId: supplies })).status).to.equal(200);

    expect(journalEntries(), 'no journal entry posted by accepting').to.equal(entries);
    expect(bankBalance(), 'the bank paid each expense once').to.equal(bank);
    expectBooksBalance();
    expect(everyItem(await getQueue())).to.deep.equal([]);
    const linked = app.db
      .prepare(
        `SELECT t.status, t.ledger_account_id, t.journal_entry_id = e.journal_entry_id AS same_entry
         FROM review_queue_items q JOIN transactions t ON t.id = q.transaction_id JOIN expenses e ON e.id = ?
         WHERE q.id = ?`,
      )
      .get(expenseId, flour.id) as { status: string; ledger_account_id: string; same_entry: bigint };
    expect(linked).to.deep.equal({ status: 'accepted', ledger_account_id: supplies, same_entry: 1n });
    expect(second).to.be.a('string');
    expect((await accept(flour.id)).status, 'accepted once only').to.equal(409);
  });

  it('refuses an accept naming another account (409 conflict saying why), and the item stays queued', async () => {
    importRows('2026-03-08,MILLER AND SONS FLOUR,-62.00,Miller & Sons');
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    const meals = accountIdByName(app.db, tenant.business.id, 'Meals');
    const expenseId = await recordExpense({ date: '2026-03-10', amountCents: '6200', vendorName: 'Miller & Sons', accountId: supplies });
    const entries = journalEntries();
    const item = await onlyItem();

    const res = await accept(item.id, { accountId: meals });
    expect(res.status, res.text).to.equal(409);
    expect(res.body.error.code).to.equal('conflict');
    expect(res.body.error.message).to.include(`already recorded as expense ${expenseId}`).and.include('Office Supplies');
    expect(journalEntries()).to.equal(entries);
    expect((await onlyItem()).id).to.equal(item.id);
  });

  for (const [rule, expense] of [
    ['the amount differs', { date: '2026-03-08', amountCents: '6201', vendorName: 'Miller & Sons' }],
    ['it is dated 6 days off', { date: '2026-03-14', amountCents: '6200', vendorName: 'Miller & Sons' }],
    ['another vendor is named', { date: '2026-03-08', amountCents: '6200', vendorName: 'Flour Mill Co' }],
  ] as const) {
    it(`leaves the proposal alone when ${rule}, and takes the matching expense recorded next`, async () => {
      importRows('2026-03-08,MILLER AND SONS FLOUR,-62.00,Miller & Sons');
      const before = await onlyItem();
      const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
      const meals = accountIdByName(app.db, tenant.business.id, 'Meals');
      await recordExpense({ ...expense, accountId: meals });
      expect(await onlyItem()).to.deep.equal(before);
      // Five days off, the same vendor by another spelling of its name key: the line's expense.
      const matching = await recordExpense({ date: '2026-03-03', amountCents: '6200', vendorName: 'MILLER & SONS', accountId: supplies });
      const after = await onlyItem();
      expect(after).to.deep.include({ proposedAccountId: supplies, confidence: 0.95 });
      expect(after.rationale).to.include(`expense ${matching}`);
    });
  }

  it('still matches in the other direction: a later import leaves out the line of an expense recorded first, but not of one a queued line already holds', async () => {
    const supplies = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    importRows('2026-03-08,MILLER AND SONS FLOUR,-62.00,Miller & Sons');
    await recordExpense({ date: '2026-03-08', amountCents: '6200', vendorName: 'Miller & Sons', accountId: supplies });
    await recordExpense({ date: '2026-03-09', amountCents: '4500', vendorName: 'Crema', accountId: supplies });
    // The Crema line is the expense recorded first; a second flour line is not the expense the first one holds.
    const result = importRows('2026-03-10,CREMA,-45.00,Crema', '2026-03-11,MILLER AND SONS FLOUR 2,-62.00,Miller & Sons');
    expect(result).to.include({ alreadyRecorded: 1, queued: 1 });
    expect(everyItem(await getQueue())).to.have.length(2);
  });
});
