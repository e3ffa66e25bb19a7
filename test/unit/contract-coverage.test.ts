import { expect } from 'chai';
import { contractCoverage, recordReply } from '../support/replies.js';

/** The suite's contract coverage count (test/support/replies.ts), which the root hook prints and enforces. */
describe('contract coverage', () => {
  it('counts each operation once and each (operation, status) pair once, and names the operations never answered', () => {
    recordReply('coverage.probe', 200);
    recordReply('coverage.probe', 200);
    recordReply('coverage.probe', 422);
    const coverage = contractCoverage(['coverage.probe', 'coverage.never']);
    expect(coverage).to.deep.equal({ operations: 1, pairs: 2, uncovered: ['coverage.never'], byOperation: { 'coverage.probe': [200, 422] } });
  });
});
