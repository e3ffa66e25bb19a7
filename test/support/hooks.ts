import { OPERATION_IDS } from '../../src/api/v1/operation-ids.js';
import { contractCoverage, describeViolations, takeViolations } from './replies.js';

/** `npm test` (and coverage) run every test file; a run of chosen files names them. */
const WHOLE_SUITE = !process.argv.slice(2).some((arg) => arg.endsWith('.ts'));

/**
 * Root hooks for the whole suite (.mocharc.json requires this file). The test app's request()
 * fails each request that broke its operation's declared contract; a violation provoked some
 * other way (a raw socket) is still reported once the suite ends, without stopping the run.
 */
export const mochaHooks = {
  afterAll(): void {
    const violations = takeViolations();
    if (violations.length > 0) throw new Error(`replies broke the declared contract:\n${describeViolations(violations)}`);
    // Every reply was held to its declaration (checkReplies); say how much of the contract that covered.
    const coverage = contractCoverage(OPERATION_IDS);
    if (coverage.operations === 0) return;
    console.log(`\n  contract coverage: ${coverage.operations} of ${OPERATION_IDS.length} operations, ${coverage.pairs} (operation, status) pairs answered and checked`);
    if (WHOLE_SUITE && coverage.uncovered.length > 0) throw new Error(`no test saw these operations answer: ${coverage.uncovered.join(', ')}`);
  },
};
