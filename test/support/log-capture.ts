import { createLogger, type Logger } from '../../src/log.js';
import type { LogLevel } from '../../src/config.js';

export interface CapturedLog {
  log: Logger;
  /** Every line written so far, parsed. */
  lines: Array<Record<string, unknown>>;
  /** The access-log line of a request, once written (the line follows the answer by a moment). */
  accessLine(requestId: string): Promise<Record<string, unknown>>;
}

/** A logger whose JSON lines are kept in memory for the test to read. */
export function captureLog(level: LogLevel = 'info'): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return {
    log,
    lines,
    async accessLine(requestId) {
      for (let waited = 0; waited < 2_000; waited += 10) {
        const line = lines.find((entry) => entry.msg === 'request' && entry.requestId === requestId);
        if (line) return line;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no access-log line for request ${requestId}`);
    },
  };
}
