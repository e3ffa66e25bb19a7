/**
 * The spec's closed list of error codes, one table from code to HTTP status, and the one
 * error class that carries them. books/ throws these with domain codes; http/ renders them.
 */

export const ERROR_STATUS = {
  invalid_key: 401,
  insufficient_scope: 403,
  entity_not_allowed: 403,
  period_locked: 409,
  read_only_billing_state: 402,
  rate_limited: 429,
  validation_failed: 422,
  not_found: 404,
  conflict: 409,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  /** Response headers that belong to this failure (retry-after on rate_limited). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }
}

/** The spec's error body: every failure answers exactly this shape. */
export function errorBody(code: ErrorCode, message: string, requestId: string) {
  return { error: { code, message, requestId } };
}

/** A 422 whose message starts with the failing field path, as the spec requires. */
export function validationFailed(fieldPath: string, problem: string): ApiError {
  return new ApiError('validation_failed', `${fieldPath}: ${problem}`);
}

export function notFound(what = 'resource'): ApiError {
  return new ApiError('not_found', `No such ${what}.`);
}

export function conflict(message: string): ApiError {
  return new ApiError('conflict', message);
}
