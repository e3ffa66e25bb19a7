import { describeViolations, takeViolations } from './replies.js';

/**
 * Root hooks for the whole suite (.mocharc.json requires this file). The test app's request()
 * fails each request that broke its operation's declared contract; a violation provoked some
 * other way (a raw socket) is still reported once the suite ends, without stopping the run.
 */
export const mochaHooks = {
  afterAll(): void {
    const violations = takeViolations();
    if (violations.length > 0) throw new Error(`replies broke the declared contract:\n${describeViolations(violations)}`);
  },
};
