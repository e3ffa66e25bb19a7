import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { listPostableAccounts } from '../../src/books/chart.js';
import { categoriserFor, MIN_CALIBRATION_HISTORY, MIN_CALIBRATION_PROPOSALS, monotoneBands } from '../../src/books/categorise/index.js';
import { generateExpenseHistory, insertExpenseHistory } from '../../bench/support/expense-history.js';
import { freshDb, type TempDb } from '../support/db.js';
import { buildBusiness, testClock } from '../support/factories.js';

/**
 * Calibration (src/books/categorise/index.ts): scores from the payee's own history are replaced
 * by how often proposals in their band were right on the business's own later bookings.
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

    it(`leaves a band with fewer than ${enough} proposals as it is (null)`, () => {
      expect(monotoneBands([{ right: enough - 1, all: enough - 1 }, { right: 0, all: 0 }, { right: 1, all: 2 }, { right: 30, all: 30 }, { right: 29, all: 30 }])).to.deep.equal([null, null, null, 59 / 60, 59 / 60]);
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
      expect((categoriserFor(temp.db, business.id) as unknown as { calibration: unknown }).calibration).to.deep.equal([null, null, null, null, null]);
    });

    it('measures bands on its later bookings, rising from band to band, each in [0, 1]', () => {
      const business = booksWith(2000);
      const calibration = (categoriserFor(temp.db, business.id) as unknown as { calibration: Array<number | null> }).calibration;
      const measured = calibration.filter((value): value is number => value !== null);
      expect(measured.length, 'bands measured').to.be.at.least(2);
      for (const value of measured) expect(value).to.be.within(0, 1);
      expect([...measured].sort((a, b) => a - b)).to.deep.equal(measured);
    });

    it('never places built-in knowledge or word statistics about a payee it never paid at 0.9 or more', () => {
      const business = booksWith(2000);
      const categoriser = categoriserFor(temp.db, business.id);
      const names = new Map(listPostableAccounts(temp.db, business.id).map((account) => [account.id, account.name]));
      for (const description of ['WALGREENS #1234 AUSTIN TX', 'SOUTHWEST AIRLINES 5262', 'NEWCO COFFEE ROASTERS', 'DROPBOX*ABC123']) {
        const proposal = categoriser.propose({ description, vendorName: null, amountCents: 1500n });
        if (proposal.confidence !== null) expect(proposal.confidence, `${description} → ${names.get(proposal.accountId!)}`).to.be.below(0.9);
      }
    });
  });
});
