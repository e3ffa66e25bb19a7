import type { ReplyViolation } from '../../src/http/reply-check.js';
import { schemaProblem } from '../../src/http/validate.js';
import { ErrorBody } from '../../src/api/schemas/common.js';
import type { TestResponse } from './app.js';

/**
 * Every app the tests start checks each reply against its operation's declared responses
 * (status, body schema, error codes) and reports here. The test app's request() then fails
 * the very request that broke the contract (checkReply), so every API test is also a contract
 * test; the root hook (hooks.ts) catches what arrived by other routes (raw sockets).
 */
const reported: ReplyViolation[] = [];

export function recordViolation(violation: ReplyViolation): void {
  reported.push(violation);
}

/** The violations reported since the last call, and forgets them. */
export function takeViolations(): ReplyViolation[] {
  return reported.splice(0, reported.length);
}

/** Every (operation, status) an app answered during the run: the contract coverage. */
const answered = new Map<string, Set<number>>();

export function recordReply(operationId: string, status: number): void {
  const statuses = answered.get(operationId) ?? new Set<number>();
  statuses.add(status);
  answered.set(operationId, statuses);
}

export interface ContractCoverage {
  operations: number;
  pairs: number;
  /** Operations of the published surface no test saw answered. */
  uncovered: string[];
  /** Each operation with the statuses it was seen to answer. */
  byOperation: Record<string, number[]>;
}

export function contractCoverage(operationIds: readonly string[]): ContractCoverage {
  const byOperation = Object.fromEntries(operationIds.filter((id) => answered.has(id)).map((id) => [id, [...answered.get(id)!].sort((a, b) => a - b)]));
  return {
    operations: Object.keys(byOperation).length,
    pairs: Object.values(byOperation).reduce((sum, statuses) => sum + statuses.length, 0),
    uncovered: operationIds.filter((id) => !answered.has(id)),
    byOperation,
  };
}

export function describeViolations(violations: readonly ReplyViolation[]): string {
  return violations.map((v) => `${v.operationId} answered ${v.status}: ${v.problem}`).join('\n');
}

export interface ReplyExpectations {
  /** The test provokes a fault on purpose and asserts the 500 itself. */
  allowFault: boolean;
}

/**
 * What every /api/v1 answer must be, checked on each one a test receives: JSON, an error
 * body of exactly the spec's shape carrying the x-request-id, no reported violation, and no
 * 500 unless the test asked for one (a 500 is a bug unless a test provoked it).
 */
export function checkReply(method: string, path: string, res: TestResponse, expectations: ReplyExpectations): void {
  const problems = describeViolations(takeViolations());
  if (problems) throw new Error(`the reply broke the declared contract:\n${problems}`);
  // A HEAD answer has no body to check.
  if (!path.startsWith('/api/v1') || method === 'HEAD') return;
  if (!/^application\/json; charset=utf-8$/.test(String(res.headers['content-type']))) {
    throw new Error(`${path} answered ${res.status} with content-type ${String(res.headers['content-type'])}, not JSON`);
  }
  if (res.status >= 400) {
    const problem = schemaProblem(ErrorBody, res.body);
    if (problem) throw new Error(`${path} answered ${res.status} with a body that is not the error body: ${problem}`);
    if (res.body.error.requestId !== res.headers['x-request-id']) throw new Error(`${path}: error.requestId differs from x-request-id`);
  }
  if (res.status === 500 && !expectations.allowFault) {
    throw new Error(`${path} answered 500 internal_error, which no test asked for: a bug (body: ${res.text})`);
  }
}
