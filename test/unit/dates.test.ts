import { expect } from 'chai';
import fc from 'fast-check';
import { addDays, daysBetween, isIsoDate } from '../../src/dates.js';
import { schemaProblem } from '../../src/http/validate.js';
import { IsoDate } from '../../src/api/schemas/common.js';

describe('dates', () => {
  describe('isIsoDate', () => {
    it('accepts real calendar dates written YYYY-MM-DD', () => {
      for (const date of ['2026-01-01', '2026-12-31', '2026-02-28', '2028-02-29', '2000-02-29', '1999-12-31', '9999-12-31']) {
        expect(isIsoDate(date), date).to.equal(true);
      }
    });

    it('accepts the years 0000 to 0099 as written (not as 1900 to 1999), as the API\'s date format does', () => {
      for (const date of ['0000-01-01', '0099-01-01', '0004-02-29', '0050-12-31']) {
        expect(isIsoDate(date), date).to.equal(true);
      }
      expect(isIsoDate('0100-02-29'), 'not a leap year').to.equal(false);
    });

    it('agrees with the API\'s date format on every YYYY-MM-DD string (the schema and the books never disagree)', () => {
      const digits = (length: number, max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(length, '0'));
      fc.assert(
        fc.property(digits(4, 9999), digits(2, 13), digits(2, 32), (year, month, day) => {
          const text = `${year}-${month}-${day}`;
          expect(schemaProblem(IsoDate, text) === null, text).to.equal(isIsoDate(text));
        }),
        { numRuns: 2000 },
      );
    });

    it('refuses dates that do not exist', () => {
      for (const date of ['2026-02-30', '2026-02-29', '2100-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '2026-01-32']) {
        expect(isIsoDate(date), date).to.equal(false);
      }
    });

    it('refuses other spellings', () => {
      for (const text of ['2026-1-01', '2026-01-1', '26-01-01', '20260101', '2026/01/01', ' 2026-01-01', '2026-01-01 ', '2026-01-01T00:00:00Z', '', 'today', '+02026-01-01']) {
        expect(isIsoDate(text), JSON.stringify(text)).to.equal(false);
      }
    });
  });

  describe('addDays', () => {
    it('crosses month ends, year ends and leap days', () => {
      expect(addDays('2026-01-31', 1)).to.equal('2026-02-01');
      expect(addDays('2026-02-28', 1)).to.equal('2026-03-01');
      expect(addDays('2028-02-28', 1)).to.equal('2028-02-29');
      expect(addDays('2028-02-29', 1)).to.equal('2028-03-01');
      expect(addDays('2026-12-31', 1)).to.equal('2027-01-01');
      expect(addDays('2026-03-15', 30)).to.equal('2026-04-14');
      expect(addDays('2026-03-15', 365)).to.equal('2027-03-15');
    });

    it('goes backwards with negative days and stays put with zero', () => {
      expect(addDays('2027-01-01', -1)).to.equal('2026-12-31');
      expect(addDays('2026-03-01', -1)).to.equal('2026-02-28');
      expect(addDays('2026-03-15', 0)).to.equal('2026-03-15');
    });

    it('refuses a non-date', () => {
      expect(() => addDays('2026-02-30', 1)).to.throw(Error, /not a date: 2026-02-30/);
    });
  });

  describe('daysBetween', () => {
    it('counts whole days, positive when the second date is later', () => {
      expect(daysBetween('2026-03-15', '2026-03-15')).to.equal(0);
      expect(daysBetween('2026-03-15', '2026-03-16')).to.equal(1);
      expect(daysBetween('2026-03-16', '2026-03-15')).to.equal(-1);
      expect(daysBetween('2026-12-31', '2027-01-01')).to.equal(1);
      expect(daysBetween('2026-01-01', '2027-01-01')).to.equal(365);
      expect(daysBetween('2028-01-01', '2029-01-01')).to.equal(366);
      expect(daysBetween('2026-02-01', '2026-03-01')).to.equal(28);
    });

    it('is the inverse of addDays', () => {
      const day = fc.integer({ min: 0, max: 100_000 }).map((n) => new Date(Date.UTC(1970, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));
      fc.assert(
        fc.property(day, fc.integer({ min: -5000, max: 5000 }), (start, days) => {
          const end = addDays(start, days);
          expect(isIsoDate(end)).to.equal(true);
          expect(daysBetween(start, end)).to.equal(days);
        }),
        { numRuns: 200 },
      );
    });
  });
});
