import { describeViolations, takeViolations } from './replies.js';

/**
 * Root hooks for the whole suite (.mocharc.json requires this file). A reply that broke its
 * operation's declared responses fails the test that provoked it.
 */
export const mochaHooks = {
  beforeEach(): void {
    takeViolations();
  },
  afterEach(): void {
    const violations = takeViolations();
    if (violations.length > 0) {
      throw new Error(`replies broke the declared contract:\n${describeViolations(violations)}`);
    }
  },
};
