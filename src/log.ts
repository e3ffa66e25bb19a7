import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/**
 * JSON logs (pino), on stderr unless a destination is given, so stdout carries only a
 * command's result. Tests pass level 'silent'.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  return pino(options, destination ?? pino.destination(2));
}
