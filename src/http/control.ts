import { ApiError, validationFailed } from '../errors.js';
import { readJsonBody } from './body.js';
import type { AppContext, AppMiddleware } from './context.js';

/**
 * The control surface of `daybook serve --ephemeral --control`: a test suite in another
 * language sets the server's clock, runs a job, reads the outbox and asks for failures over
 * HTTP. The app has it only in that mode, which listens on loopback alone.
 *
 * Loopback alone is not enough against a browser on the same machine: a page on any site can
 * send a simple cross-site POST (a form, or fetch with text/plain) without a preflight, and a
 * page whose host name is rebound to 127.0.0.1 can read the answers as its own. So a request
 * is served only when it comes from a loopback address, names a loopback Host, carries no
 * Origin or a loopback one, and, for a POST, says Content-Type application/json (which a
 * browser sends cross-site only after a preflight, which this surface never answers).
 */
export const CONTROL_PREFIX = '/__daybook';

export interface ControlHandlers {
  /** Sets the clock to a day or an instant; returns the new now. Throws for a bad date. */
  setClock(at: string): Date;
  /** Throws RefusedInput for a move it cannot make. */
  advanceDays(days: number): Date;
  runJob(name: string): Promise<void>;
  outbox(): unknown[];
  /** Throws RefusedInput for a failure it cannot give. */
  failNext(count: number, failure: unknown): void;
}

/**
 * Input a test gave that Daybook cannot take, naming the field: daybook/testing throws it as
 * `where: field problem`, the control surface answers it as 422 `field: problem`.
 */
export class RefusedInput extends Error {
  override name = 'RefusedInput';
  readonly field: string;
  readonly problem: string;

  constructor(where: string, field: string, problem: string) {
    super(`${where}: ${field} ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

const LOOPBACK_PEERS = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function controlSurface(handlers: ControlHandlers): AppMiddleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${CONTROL_PREFIX}/`)) return next();
    // Answered like an unknown path, not 403: the closed list of error codes has no code for
    // "not from here" (insufficient_scope is about a key), and a page that is refused learns
    // nothing, not even that the surface exists.
    if (!fromLoopback(ctx)) throw new ApiError('not_found', 'No such endpoint.');
    const route = `${ctx.method} ${ctx.path.slice(CONTROL_PREFIX.length)}`;
    if (route === 'GET /outbox') {
      ctx.body = { messages: handlers.outbox() };
      return;
    }
    if (ctx.method !== 'POST') throw new ApiError('not_found', 'No such endpoint.');
    requireJsonContentType(ctx);
    await readJsonBody(ctx);
    const body = ctx.request.body as Record<string, unknown>;
    if (route === 'POST /clock') ctx.body = { now: moveClock(handlers, body).toISOString() };
    else if (route === 'POST /fail-next') ctx.body = { ok: failNext(handlers, body) };
    else if (route.startsWith('POST /jobs/')) ctx.body = { ran: await runJob(handlers, route.slice('POST /jobs/'.length)) };
    else throw new ApiError('not_found', 'No such endpoint.');
  };
}

/** The peer, the Host it named and the page that sent it (when a browser says) are all this machine. */
function fromLoopback(ctx: AppContext): boolean {
  if (!LOOPBACK_PEERS.has(ctx.req.socket.remoteAddress ?? '')) return false;
  if (!isLoopbackHost(ctx.get('host'))) return false;
  const origin = ctx.get('origin');
  return origin === '' || isLoopbackOrigin(origin);
}

const PORT = /^:[0-9]{1,5}$/;

/** `localhost`, `[::1]` or any 127.x.x.x address, each with or without a port. */
export function isLoopbackHost(host: string): boolean {
  const name = /^(\[[^\]]*\]|[^:]*)(.*)$/.exec(host.trim().toLowerCase());
  if (!name || (name[2] !== '' && !PORT.test(name[2]!))) return false;
  return isLoopbackName(name[1]!);
}

/**
 * An Origin whose host is loopback. "null" (a sandboxed frame, a file: page) is not: it may
 * be any page at all.
 */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackName(url.hostname);
}

const LOOPBACK_V4 = /^127\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){2}$/;

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || LOOPBACK_V4.test(name);
}

/**
 * Every POST says application/json, a body or none: an HTML form or a text/plain fetch (what
 * a page elsewhere can send without a preflight) is refused before anything runs.
 */
function requireJsonContentType(ctx: AppContext): void {
  const type = ctx.get('content-type').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw validationFailed('Content-Type', 'must be application/json on every POST to the control surface, with a body or without');
}

function moveClock(handlers: ControlHandlers, body: Record<string, unknown>): Date {
  if (typeof body.at === 'string') return refusedAs('at', () => handlers.setClock(body.at as string));
  if (body.advanceDays === undefined) throw validationFailed('body', 'give {"at": "2027-01-31"} (a day or an ISO 8601 instant) or {"advanceDays": 45}');
  const days = body.advanceDays;
  if (typeof days !== 'number' || !Number.isInteger(days)) throw validationFailed('advanceDays', `must be a whole number of days (got ${JSON.stringify(days)})`);
  // How far it may go is the clock's own rule (daybook/testing), answered naming advanceDays.
  return refusedAs('advanceDays', () => handlers.advanceDays(days));
}

/** fail-next's own fields; any other that failNext names is the failure's, under `failure.`. */
const FAIL_NEXT_FIELDS = new Set(['count', 'failure']);

function failNext(handlers: ControlHandlers, body: Record<string, unknown>): true {
  try {
    handlers.failNext(body.count as number, body.failure);
  } catch (error) {
    if (!(error instanceof RefusedInput)) throw error;
    throw validationFailed(FAIL_NEXT_FIELDS.has(error.field) ? error.field : `failure.${error.field}`, error.problem);
  }
  return true;
}

async function runJob(handlers: ControlHandlers, name: string): Promise<string> {
  try {
    await handlers.runJob(name);
  } catch (error) {
    if ((error as Error).message.startsWith('no job named')) throw new ApiError('not_found', (error as Error).message);
    throw error;
  }
  return name;
}

/**
 * Runs `work`, turning the error it throws for bad input into a validation_failed: a
 * RefusedInput names its own field, any other Error ("clock: ...") is about `field`.
 */
function refusedAs<T>(field: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof RefusedInput) throw validationFailed(error.field, error.problem);
    throw validationFailed(field, (error as Error).message.replace(/^[A-Za-z]+: /, ''));
  }
}
