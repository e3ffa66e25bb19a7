import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { listPostableAccounts } from '../../src/books/chart.js';
import { categoriserFor, MIN_CALIBRATION_HISTORY, MIN_CALIBRATION_PROPOSALS, monotoneBands } from '../../src/books/categorise/index.js';
import { MERCHANT_CONFIDENCE } from '../../src/books/categorise/knowledge.js';
import { generateExpenseHistory, insertExpenseHistory } from '../../bench/support/expense-history.js';
import { freshDb, type TempDb } from '../support/db.js';
import { buildBusiness, testClock } from '../support/factories.js';

/**
 * Calibration (src/books/categorise/index.ts): scores from the payee's own history are replaced
 * by how often proposals in their band were right on the business's own later bookings, and
 * built-in knowledge's by how often the business books what it names where it says.
 */
describe('the categoriser calibrates its scores on the business’s own history', () => {
  const enough = MIN_CALIBRATION_PROPOSALS;

  describe('the bands', () => {
    it('takes each band’s accuracy when its accuracies already rise from band to band', () => {
      expect(monotoneBands([{ right: 20, all: 40 }, { right: 30, all: 50 }, { right: 40, all: 50 }, { right: 45, all: 50 }, { right: 98, all: 100 }])).to.deep.equal([0.5, 0.6, 0.8, 0.9, 0.98]);
    });

    it('pools neighbouring bands that break the order, weighted by their proposals', () => {
      // 0.9 then 0.6: pooled to (45 + 60) / (50 + 100) = 0.7 for both.
      expect(monotoneBands([{ right: 20, all: 40 }, { right: 45, all: 50 }, { right: 60, all: 100 }, { right: 0, all: 0 }, { right: 99, all: 100 }])).to.deep.equal([0.5, 0.7, 0.7, null, 0.99]);
    });

    it(`pools a band of fewer than ${enough} proposals with the neighbour nearer in accuracy; a band with none stays null`, () => {
      // 10 of 20 (0.5) sits between 0.45 and 0.9: it joins 0.45, the nearer.
      expect(monotoneBands([{ right: 18, all: 40 }, { right: 10, all: 20 }, { right: 45, all: 50 }])).to.deep.equal([28 / 60, 28 / 60, 0.9]);
      // ... and 0.85 of 20 between 0.5 and 0.9 joins 0.9.
      expect(monotoneBands([{ right: 20, all: 40 }, { right: 17, all: 20 }, { right: 45, all: 50 }])).to.deep.equal([0.5, 62 / 70, 62 / 70]);
      // 0 of 0 in the middle stays null; 29 of 29 then 1 of 2 break the order and pool to 30 of 31.
      expect(monotoneBands([{ right: 20, all: 40 }, { right: 0, all: 0 }, { right: 29, all: 29 }, { right: 1, all: 2 }, { right: 45, all: 45 }])).to.deep.equal([0.5, null, null, null, 1]);
    });

    it('never pools a band with too few proposals of its own up to the review threshold (0.9) from below it', () => {
      // Bands 0.0 to 0.1 and 0.2 to 0.3, 30 of 31 pooled: each too small to say it belongs at 0.97.
      expect(monotoneBands([{ right: enough - 1, all: enough - 1 }, { right: 0, all: 0 }, { right: 1, all: 2 }, { right: 30, all: 30 }, { right: 29, all: 30 }])).to.deep.equal([null, null, null, 59 / 60, 59 / 60]);
      // Band 0.9 to 1 may be pooled with a big band under it: that only lowers it.
      const bands = [...Array.from({ length: 8 }, () => ({ right: 0, all: 0 })), { right: 80, all: 100 }, { right: 10, all: 10 }];
      expect(monotoneBands(bands).slice(8)).to.deep.equal([90 / 110, 90 / 110]);
    });

    it(`calibrates nothing when all the bands together hold fewer than ${enough} proposals`, () => {
      expect(monotoneBands([{ right: 10, all: 10 }, { right: 0, all: 0 }, { right: 15, all: 19 }])).to.deep.equal([null, null, null]);
    });
  });

  describe('on generated books', () => {
    let temp: TempDb;
    before(async () => {
      temp = await freshDb();
    });
    after(() => temp.close());

    const booksWith = (payments: number): Business => {
      const business = buildBusiness(temp.db, testClock());
      insertExpenseHistory(temp.db, business, generateExpenseHistory(20261130 + payments, payments, '2024-11-01', 730));
      return business;
    };

    it(`keeps the estimated scores below ${MIN_CALIBRATION_HISTORY} booked payments`, () => {
      const business = booksWith(MIN_CALIBRATION_HISTORY - 1);
      const categoriser = categoriserFor(temp.db, business.id) as unknown as { calibration: unknown; knowledgeAccuracy: unknown };
      expect(categoriser.calibration).to.deep.equal(Array.from({ length: 10 }, () => null));
      expect(categoriser.knowledgeAccuracy).to.deep.equal({ merchant: null, keyword: null });
    });

    it('measures bands on its later bookings, rising from band to band, each in [0, 1]', () => {
      const business = booksWith(2000);
      const calibration = (categoriserFor(temp.db, business.id) as unknown as { calibration: Array<number | null> }).calibration;
      const measured = calibration.filter((value): value is number => value !== null);
      expect(measured.length, 'bands measured').to.be.at.least(2);
      for (const value of measured) expect(value).to.be.within(0, 1);
      expect([...measured].sort((a, b) => a - b)).to.deep.equal(measured);
    });

    it('places built-in knowledge about a payee it never paid as surely as the business books what the knowledge names', () => {
      const business = booksWith(2000);
      const categoriser = categoriserFor(temp.db, business.id);
      const { merchant } = (categoriser as unknown as { knowledgeAccuracy: { merchant: number | null } }).knowledgeAccuracy;
      expect(merchant, 'measured on these books').to.be.a('number').and.within(0.5, 1);
      const proposal = categoriser.propose({ description: 'SOUTHWEST AIRLINES 5262', vendorName: null, amountCents: 1500n });
      expect(proposal.rationale).to.match(/'southwest( airlines)?' is an airline, usually booked to Travel/);
      expect(proposal.confidence).to.equal(Math.floor(merchant! * 100 + 1e-9) / 100);
    });

    it('keeps built-in knowledge at its fixed score where the books cannot measure it, and word statistics below 0.9', () => {
      const business = booksWith(MIN_CALIBRATION_HISTORY - 1);
      const categoriser = categoriserFor(temp.db, business.id);
      const names = new Map(listPostableAccounts(temp.db, business.id).map((account) => [account.id, account.name]));
      expect(categoriser.propose({ description: 'SOUTHWEST AIRLINES 5262', vendorName: null, amountCents: 1500n }).confidence).to.equal(MERCHANT_CONFIDENCE);
      for (const description of ['WALGREENS #1234 AUSTIN TX', 'SOUTHWEST AIRLINES 5262', 'NEWCO COFFEE ROASTERS', 'DROPBOX*ABC123']) {
        const proposal = categoriser.propose({ description, vendorName: null, amountCents: 1500n });
        if (proposal.confidence !== null) expect(proposal.confidence, `${description} → ${names.get(proposal.accountId!)}`).to.be.below(0.9);
      }
    });

    it('finds a merchant agreement rate from each payee\'s first booking: a payee booked elsewhere lowers it, its later payments do not count', () => {
      const business = booksWith(2000);
      const before = (categoriserFor(temp.db, business.id) as unknown as { knowledgeAccuracy: { merchant: number | null } }).knowledgeAccuracy.merchant;
      expect(before).to.be.a('number');
      // Every payment naming a known merchant moved to one account the knowledge never names for it.
      const merchantAccuracy = () => (categoriserFor(temp.db, business.id) as unknown as { knowledgeAccuracy: { merchant: number | null } }).knowledgeAccuracy.merchant;
      const other = listPostableAccounts(temp.db, business.id).find((account) => account.name !== 'Travel')!;
      const shell = temp.db
        .prepare("SELECT id FROM transactions WHERE business_id = ? AND description LIKE 'SHELL OIL %' ORDER BY txn_date, created_at, id")
        .all(business.id) as Array<{ id: string }>;
      expect(shell.length, 'payments to Shell').to.be.above(2);
      const moveTo = temp.db.prepare('UPDATE transactions SET ledger_account_id = ? WHERE id = ?');
      // Every payment but the first, booked elsewhere: the knowledge spoke only for the first.
      for (const { id } of shell.slice(1)) moveTo.run(other.id, id);
      expect(merchantAccuracy()).to.equal(before);
      moveTo.run(other.id, shell[0]!.id);
      expect(merchantAccuracy()).to.be.below(before!);
    });
  });
});
