import type { FxProvider } from '../config.js';

/** What went wrong, for callers that branch; the message is for people. */
export type RateProviderProblem =
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'too_large'
  | 'malformed'
  | 'missing_currency'
  | 'bad_rate'
  | 'bad_date';

export class RateProviderError extends Error {
  override name = 'RateProviderError';
  readonly provider: FxProvider;
  readonly problem: RateProviderProblem;
  /** The message without the provider's name before it. */
  readonly detail: string;

  constructor(provider: FxProvider, problem: RateProviderProblem, detail: string) {
    super(`${provider} rate provider: ${detail}`);
    this.provider = provider;
    this.problem = problem;
    this.detail = detail;
  }
}

/**
 * The problems that mean no answer came to judge: the provider could not be reached (no
 * network, a name that does not resolve, a refused connection) or did not finish answering in
 * time. On a machine kept offline they are the normal case, not a fault of the provider's.
 */
export function isUnreachable(problem: RateProviderProblem): boolean {
  return problem === 'unreachable' || problem === 'timeout';
}
