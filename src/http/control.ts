import { ApiError, validationFailed } from '../errors.js';
import { readJsonBody } from './body.js';
import type { AppMiddleware } from './context.js';

/**
 * The control surface of `daybook serve --ephemeral --control`: a test suite in another
 * language sets the server's clock, runs a job, reads the outbox and asks for failures over
 * HTTP. The app has it only in that mode, which listens on loopback alone; a request from
 * any other address is answered like an unknown path all the same.
 */
export const CONTROL_PREFIX = '/__daybook';

export interface ControlHandlers {
  /** Sets the clock to a day or an instant; returns the new now. Throws for a bad date. */
  setClock(at: string): Date;
  advanceDays(days: number): Date;
  runJob(name: string): Promise<void>;
  outbox(): unknown[];
  /** Throws for a failure it cannot give. */
  failNext(count: number, failure: unknown): void;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function controlSurface(handlers: ControlHandlers): AppMiddleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${CONTROL_PREFIX}/`)) return next();
    if (!LOOPBACK.has(ctx.req.socket.remoteAddress ?? '')) throw new ApiError('not_found', 'No such endpoint.');
    const route = `${ctx.method} ${ctx.path.slice(CONTROL_PREFIX.length)}`;
    if (route === 'GET /outbox') {
      ctx.body = { messages: handlers.outbox() };
      return;
    }
    if (ctx.method !== 'POST') throw new ApiError('not_found', 'No such endpoint.');
    await readJsonBody(ctx);
    const body = ctx.request.body as Record<string, unknown>;
    if (route === 'POST /clock') ctx.body = { now: moveClock(handlers, body).toISOString() };
    else if (route === 'POST /fail-next') ctx.body = { ok: failNext(handlers, body) };
    else if (route.startsWith('POST /jobs/')) ctx.body = { ran: await runJob(handlers, route.slice('POST /jobs/'.length)) };
    else throw new ApiError('not_found', 'No such endpoint.');
  };
}

function moveClock(handlers: ControlHandlers, body: Record<string, unknown>): Date {
  if (typeof body.at === 'string') return refusedAs('at', () => handlers.setClock(body.at as string));
  if (Number.isInteger(body.advanceDays)) return handlers.advanceDays(body.advanceDays as number);
  throw validationFailed('body', 'give {"at": "2027-01-31"} (a day or an ISO 8601 instant) or {"advanceDays": 45}');
}

function failNext(handlers: ControlHandlers, body: Record<string, unknown>): true {
  refusedAs('body', () => handlers.failNext(body.count as number, body.failure));
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

/** Runs `work`, turning the Error it throws for bad input ("clock: ...") into a validation_failed naming `field`. */
function refusedAs<T>(field: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw validationFailed(field, (error as Error).message.replace(/^[A-Za-z]+: /, ''));
  }
}
