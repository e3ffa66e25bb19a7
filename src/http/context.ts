import type { ParameterizedContext, Next } from 'koa';
import type { Principal } from '../books/keys.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../log.js';
import type { Mailer } from '../email/mailer.js';
import type { Client } from './client-address.js';
import type { CounterStore } from './rate-limit.js';

/** Everything a request may use; built once in app.ts. */
export interface Services {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  counters: CounterStore;
  /** Delivers the outbox's emails: SMTP when DAYBOOK_SMTP_URL is set, else the log. */
  mailer: Mailer;
}

export interface RequestState {
  requestId: string;
  /** Who is calling (the socket's peer, or the client a trusted proxy names); set before everything else. */
  client?: Client;
  /** Set by the auth step; every /api/v1 route runs after it. */
  principal?: Principal;
}

export type AppContext = ParameterizedContext<RequestState>;
export type AppMiddleware = (ctx: AppContext, next: Next) => Promise<void>;

export function principalOf(ctx: AppContext): Principal {
  const principal = ctx.state.principal;
  if (!principal) throw new Error('principalOf: no principal; the auth step did not run');
  return principal;
}
