import { expect } from 'chai';
import fc from 'fast-check';
import { bySeverity, headlineOf, SIGNAL_SEVERITIES } from '../../src/books/today.js';

/** Today's order and headline, apart from the rules that find the signals. */

type Severity = (typeof SIGNAL_SEVERITIES)[number];
const signal = (severity: Severity, sentence: string) => ({ severity, sentence });

describe('Today: order and headline (src/books/today.ts)', () => {
  it('orders any mix most severe first, keeping the rules\' order within a severity, and loses none', () => {
    const signals = fc.array(fc.record({ severity: fc.constantFrom(...SIGNAL_SEVERITIES), n: fc.nat() }), { maxLength: 30 });
    fc.assert(
      fc.property(signals, (input) => {
        const ordered = bySeverity(input);
        expect(ordered).to.have.length(input.length);
        const rank = (s: { severity: Severity }) => SIGNAL_SEVERITIES.indexOf(s.severity);
        for (let i = 1; i < ordered.length; i += 1) expect(rank(ordered[i - 1]!)).to.be.at.most(rank(ordered[i]!));
        for (const severity of SIGNAL_SEVERITIES) {
          expect(ordered.filter((s) => s.severity === severity)).to.deep.equal(input.filter((s) => s.severity === severity));
        }
      }),
    );
  });

  it('orders informational, attention, urgent, blocking given in that order as blocking, urgent, attention, informational', () => {
    const ordered = bySeverity([signal('informational', 'd'), signal('attention', 'c'), signal('urgent', 'b'), signal('blocking', 'a')]);
    expect(ordered.map((s) => s.sentence)).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('heads with the lone top signal\'s sentence, else a count of its severity, then what weighs less', () => {
    expect(headlineOf([])).to.equal('Nothing needs you today.');
    expect(headlineOf([signal('urgent', 'An email failed.'), signal('attention', 'x'), signal('informational', 'y')])).to.equal(
      'An email failed (and 2 things of less weight).',
    );
    expect(headlineOf([signal('attention', 'a'), signal('attention', 'b')])).to.equal('2 things need attention.');
    expect(headlineOf([signal('blocking', 'a'), signal('blocking', 'b'), signal('urgent', 'c')])).to.equal('2 things block the books (and 1 thing of less weight).');
    expect(headlineOf([signal('informational', 'a'), signal('informational', 'b')])).to.equal('2 pieces of news.');
  });
});
