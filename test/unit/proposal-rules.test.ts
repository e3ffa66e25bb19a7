import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { assertBookableProposal, type Proposal } from '../../src/books/categorise/index.js';
import { assertExpenseAccount } from '../../src/books/expenses.js';
import { importBankStatement } from '../../src/books/import/bank-import.js';
import { parseStatement } from '../../src/books/import/statement.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, accountIdByRole, buildBusiness, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * A proposal is checked twice, by two rules: the categoriser's promise (assertBookableProposal:
 * an account an expense may be booked to, a confidence with it, a rationale of 1 to 2000
 * characters) and what a bank import puts in the review queue (any account of the business, a
 * confidence in [0, 1], a rationale of at most 2000 characters). The first must stay within the
 * second, and the bounds they share must stay the same: this table fails when either drifts.
 */
describe('the two proposal rules: the categoriser\'s promise and what a bank import queues', () => {
  const clock = testClock();
  let temp: TempDb;
  let business: Business;
  let other: Business;
  let row = 0;

  before(async () => {
    temp = await freshDb();
    business = buildBusiness(temp.db, clock);
    other = buildBusiness(temp.db, clock);
  });
  after(() => temp.close());

  /** Whether the categoriser's rule takes the proposal, with where an expense may be booked as the books say it. */
  function bookable(proposal: Proposal): boolean {
    const mayBook = (accountId: string): boolean => {
      try {
        assertExpenseAccount(temp.db, business, accountId);
        return true;
      } catch {
        return false;
      }
    };
    try {
      assertBookableProposal(proposal, mayBook);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether a bank import queues one money-out row with this proposal (nothing is written when it refuses). */
  function queued(proposal: Proposal): boolean {
    row += 1;
    const statement = `date,description,amount,vendor\n2026-03-01,Proposal case ${row},-12.00,\n`;
    try {
      const result = importBankStatement(
        temp.db,
        clock,
        TEST_ACTOR,
        { businessId: business.id, fileName: 'cases.csv', rows: parseStatement(Buffer.from(statement)) },
        { categoriserFor: () => ({ propose: () => proposal, learn: () => {} }) },
      );
      return result.queued === 1;
    } catch {
      return false;
    }
  }

  it('agree on the bounds they share, and the categoriser\'s is never looser', () => {
    const meals = accountIdByName(temp.db, business.id, 'Meals');
    const bank = accountIdByRole(temp.db, business.id, 'bank');
    const elsewhere = accountIdByName(temp.db, other.id, 'Meals');
    const cases: [string, Proposal][] = [
      ['an expense account, sure', { accountId: meals, confidence: 0.95, rationale: 'Booked there before.' }],
      ['no account, no confidence', { accountId: null, confidence: null, rationale: 'Nothing to go on.' }],
      ['confidence 0', { accountId: meals, confidence: 0, rationale: 'x' }],
      ['confidence 1', { accountId: meals, confidence: 1, rationale: 'x' }],
      ['confidence above 1', { accountId: meals, confidence: 1.01, rationale: 'x' }],
      ['confidence below 0', { accountId: meals, confidence: -0.01, rationale: 'x' }],
      ['confidence NaN', { accountId: meals, confidence: Number.NaN, rationale: 'x' }],
      ['a rationale of 2000 characters, astral', { accountId: meals, confidence: 0.5, rationale: '𝄞'.repeat(2000) }],
      ['a rationale of 2001 characters', { accountId: meals, confidence: 0.5, rationale: 'x'.repeat(2001) }],
      ['another business\'s account', { accountId: elsewhere, confidence: 0.9, rationale: 'x' }],
      // The categoriser promises more than the queue needs:
      ['the bank account', { accountId: bank, confidence: 0.9, rationale: 'x' }],
      ['an account without a confidence', { accountId: meals, confidence: null, rationale: 'x' }],
      ['a confidence without an account', { accountId: null, confidence: 0.5, rationale: 'x' }],
      ['an empty rationale', { accountId: meals, confidence: 0.5, rationale: '' }],
    ];
    const results = cases.map(([name, proposal]) => ({ name, bookable: bookable(proposal), queued: queued(proposal) }));
    expect(results).to.deep.equal([
      { name: 'an expense account, sure', bookable: true, queued: true },
      { name: 'no account, no confidence', bookable: true, queued: true },
      { name: 'confidence 0', bookable: true, queued: true },
      { name: 'confidence 1', bookable: true, queued: true },
      { name: 'confidence above 1', bookable: false, queued: false },
      { name: 'confidence below 0', bookable: false, queued: false },
      { name: 'confidence NaN', bookable: false, queued: false },
      { name: 'a rationale of 2000 characters, astral', bookable: true, queued: true },
      { name: 'a rationale of 2001 characters', bookable: false, queued: false },
      { name: 'another business\'s account', bookable: false, queued: false },
      { name: 'the bank account', bookable: false, queued: true },
      { name: 'an account without a confidence', bookable: false, queued: true },
      { name: 'a confidence without an account', bookable: false, queued: true },
      { name: 'an empty rationale', bookable: false, queued: true },
    ]);
    expect(results.filter((result) => result.bookable && !result.queued)).to.deep.equal([]);
  });
});
