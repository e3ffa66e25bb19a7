import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/connection.js';
import type { Mailer } from './email/mailer.js';
import type { Logger } from './log.js';
import type { CounterStore } from './store/counters.js';

/**
 * What the server's parts share, built once in app.ts: the books, the clock, the settings, the
 * log, the request counters and the mailer. Requests (http/, api/, pages/) and jobs (jobs/) take
 * it; it sits below both.
 */
export interface Services {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  counters: CounterStore;
  /** Delivers the outbox's emails: SMTP when DAYBOOK_SMTP_URL is set, else the log. */
  mailer: Mailer;
}
