import { expect } from 'chai';
import { systemClock } from '../../src/clock.js';
import { isUuid, newId } from '../../src/ids.js';

/** Identifiers are time-ordered UUIDs (docs/decisions.md "Time-ordered identifiers"). */
describe('newId', () => {
  it('makes version 7 UUIDs of the RFC 9562 variant, each different', () => {
    const ids = Array.from({ length: 5000 }, () => newId());
    for (const id of ids.slice(0, 50)) {
      expect(isUuid(id), id).to.equal(true);
      expect(id[14], id).to.equal('7');
      expect('89ab', id).to.include(id[19]!);
    }
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('carries the time it was made in its first 48 bits, so later ids sort after earlier ones', async () => {
    const before = systemClock.now().getTime();
    const first = newId();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = newId();
    const after = systemClock.now().getTime();
    const millis = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(millis(first)).to.be.within(before, after);
    expect(millis(second)).to.be.greaterThan(millis(first));
    expect(second > first).to.equal(true);
  });

  it('keeps 74 random bits: ids made in one millisecond differ after the time', () => {
    const ids = Array.from({ length: 200 }, () => newId());
    const sameMillisecond = ids.filter((id) => id.slice(0, 13) === ids[0]!.slice(0, 13));
    expect(new Set(sameMillisecond.map((id) => id.slice(15))).size).to.equal(sameMillisecond.length);
  });
});
