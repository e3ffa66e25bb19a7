import type { ParameterizedContext, Next } from 'koa';
import type { Principal } from '../books/keys.js';

/** Who is calling, as http/client-address.ts works it out: the address counted and logged, and the scheme used. */
export interface Client {
  address: string;
  scheme: 'http' | 'https';
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
