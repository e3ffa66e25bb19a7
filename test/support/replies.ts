import type { ReplyViolation } from '../../src/http/reply-check.js';

/**
 * Every app the tests start checks each reply against its operation's declared responses
 * (status, body schema, error codes) and reports here; the root hook in hooks.ts fails the
 * test during which a violation was reported. So every API test is also a contract test.
 */
const reported: ReplyViolation[] = [];

export function recordViolation(violation: ReplyViolation): void {
  reported.push(violation);
}

/** The violations reported since the last call, and forgets them. */
export function takeViolations(): ReplyViolation[] {
  return reported.splice(0, reported.length);
}

export function describeViolations(violations: readonly ReplyViolation[]): string {
  return violations.map((v) => `${v.operationId} answered ${v.status}: ${v.problem}`).join('\n');
}
