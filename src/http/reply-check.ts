import { ApiError, type ErrorCode } from '../errors.js';
import type { AppMiddleware } from './context.js';
import type { Operation } from './operation.js';
import { precompile, schemaProblem } from './validate.js';

/**
 * Holds every answer of an operation to what it declares: a success status it lists, a body its
 * schema for that status accepts (Strict schemas refuse undeclared fields), and an error code
 * that is common to every endpoint or one the operation names. The test suite turns this on
 * for every request it sends, so a reply that drifts from the contract fails a test.
 */

export interface ReplyViolation {
  operationId: string;
  status: number;
  problem: string;
}

/** Codes any endpoint may answer (spec, Endpoints: "the common errors"). */
export const COMMON_ERROR_CODES: readonly ErrorCode[] = ['invalid_key', 'insufficient_scope', 'rate_limited', 'validation_failed', 'internal_error'];

/** Every answer an operation gave, by status: what the test suite counts as covered. */
export type ReplyObserver = (operationId: string, status: number) => void;

export function checkReplies(operation: Operation, report: (violation: ReplyViolation) => void, observe?: ReplyObserver): AppMiddleware {
  // Compiled when the checks are mounted: a server that does not check its replies never compiles them.
  for (const response of Object.values(operation.responses)) precompile(response.schema);
  // Any POST may meet an Idempotency-Key clash (spec, Idempotency rule 3).
  const idempotency: ErrorCode[] = operation.method === 'POST' ? ['conflict'] : [];
  const allowedCodes = new Set<ErrorCode>([...COMMON_ERROR_CODES, ...idempotency, ...operation.errors]);
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      if (thrown instanceof ApiError) observe?.(operation.id, thrown.status);
      if (thrown instanceof ApiError && !allowedCodes.has(thrown.code)) {
        report({ operationId: operation.id, status: thrown.status, problem: `error code ${thrown.code} is not declared` });
      }
      throw thrown;
    }
    observe?.(operation.id, ctx.status);
    const problem = replyProblem(operation, ctx.status, ctx.body);
    if (problem) report({ operationId: operation.id, status: ctx.status, problem });
  };
}

function replyProblem(operation: Operation, status: number, body: unknown): string | null {
  const declared = operation.responses[status];
  if (!declared) return `status ${status} is not declared`;
  let parsed: unknown;
  try {
    parsed = typeof body === 'string' ? JSON.parse(body) : body;
  } catch {
    return 'the body is not JSON';
  }
  const problem = schemaProblem(declared.schema, parsed);
  return problem && `the body does not match the declared schema: ${problem}`;
}
