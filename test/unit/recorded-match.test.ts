import { expect } from 'chai';
import { RECORDED_MATCH_DAYS } from '../../src/books/import/bank-import.js';
import { withTwins } from '../../src/books/recorded-match.js';

/** The twins an "already recorded" match can be mistaken for (src/books/recorded-match.ts). */
describe('withTwins', () => {
  const payment = (date: string, amountCents: bigint, vendorId: string | null = null) => ({ date, amountCents, vendorId });

  it(`counts each payment with another of the same amount within ${RECORDED_MATCH_DAYS} days, either side`, () => {
    const payments = [payment('2026-03-01', 500n), payment('2026-03-06', 500n), payment('2026-03-12', 500n), payment('2026-03-01', 700n)];
    // 03-01 and 03-06 are 5 days apart (twins); 03-12 is 6 days from 03-06 (alone); 700 is alone.
    expect(withTwins(payments, false)).to.equal(2);
  });

  it('with the vendor, counts only twins to the same vendor', () => {
    const payments = [payment('2026-03-01', 500n, 'a'), payment('2026-03-02', 500n, 'b'), payment('2026-03-03', 500n, 'b')];
    expect(withTwins(payments, true)).to.equal(2);
    expect(withTwins(payments, false)).to.equal(3);
  });

  it('counts nothing in books of different amounts', () => {
    expect(withTwins([payment('2026-03-01', 1n), payment('2026-03-01', 2n)], false)).to.equal(0);
    expect(withTwins([], false)).to.equal(0);
  });
});
