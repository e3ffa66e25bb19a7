import Router from '@koa/router';
import Koa from 'koa';
import compose from 'koa-compose';
import { operations } from './api/v1/index.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { type Db, withoutWaiting } from './db/connection.js';
import { accessSync, constants, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { accessLog } from './http/access-log.js';
import { authenticate } from './http/auth.js';
import { identifyClient, trustedProxies } from './http/client-address.js';
import type { AppMiddleware, RequestState } from './http/context.js';
import type { Services } from './services.js';
import { errorRenderer, notFoundFallback } from './http/errors.js';
import { type FaultQueue, injectFaults } from './http/faults.js';
import { type ControlHandlers, controlSurface } from './http/control.js';
import { type MountOptions, mountOperations, type Operation } from './http/operation.js';
import { OPERATION_IDS } from './api/v1/operation-ids.js';
import { CounterStore } from './store/counters.js';
import { createMailer, type Mailer } from './email/mailer.js';
import { checkReplies, type ReplyObserver, type ReplyViolation } from './http/reply-check.js';
import { requestId } from './http/request-id.js';
import { payCheckout, payPage, payPageBudget, payPagePdf, payReturn } from './pages/pay-route.js';
import { stripeWebhook } from './webhooks/stripe-route.js';
import { buildOpenApiDocument } from './api/openapi.js';
import { packageVersion } from './paths.js';
import { validationFailed } from './errors.js';
import type { Logger } from './log.js';
import { mountReferencePage } from './pages/reference-route.js';
import { mountConsole } from './pages/console/route.js';

export const API_PREFIX = '/api/v1';

export interface AppOptions {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  /** The operations to serve; the published v1 set unless a test mounts its own. */
  operations?: readonly Operation[];
  /** Called for every reply that breaks its operation's declared responses (the test suite sets it). */
  onReplyViolation?: (violation: ReplyViolation) => void;
  /** Told the status of every answer (the test suite counts which operations and statuses it saw). */
  onReply?: ReplyObserver;
  /** Where emails go instead of the mailer the settings describe (daybook/testing captures them). */
  mailer?: Mailer;
  /** Failures a test asked for, given to the next requests under /api/v1 (daybook/testing). */
  faults?: FaultQueue;
  /** The control surface of `serve --ephemeral --control`; absent otherwise. */
  control?: ControlHandlers;
}

export type DaybookApp = Koa<RequestState> & { services: Services; close(): void };

/**
 * The middleware pipeline, top to bottom: request id, the client's address, the access log,
 * error rendering, no CORS, then for /api/v1 authentication, route match, and per route:
 * scope, rate limit, body rules, input checks, idempotency and the handler. Anything
 * unmatched is the JSON 404.
 */
export function buildApp(options: AppOptions): DaybookApp {
  const counters = new CounterStore(options.config.db, options.clock, (error) =>
    options.log.warn({ err: error }, 'request counts not written to the counters file; kept in memory and tried again'),
  );
  const mailer = options.mailer ?? createMailer(options.config, options.log);
  const services: Services = {
    db: options.db,
    clock: options.clock,
    config: options.config,
    log: options.log,
    counters,
    mailer,
  };

  let api: AppMiddleware;
  let openApi: string;
  try {
    const served = options.operations ?? operations;
    const { onReplyViolation, onReply } = options;
    const around = onReplyViolation ? { around: (operation: Operation) => checkReplies(operation, onReplyViolation, onReply) } : {};
    api = apiPipeline(services, served, { operationIds: OPERATION_IDS, ...around });
    openApi = JSON.stringify(buildOpenApiDocument(served, { siteUrl: options.config.siteUrl, version: packageVersion() }));
  } catch (error) {
    counters.close();
    mailer.close();
    throw error;
  }
  const app = new Koa<RequestState>({ proxy: false }) as DaybookApp;
  app.silent = true;
  app.use(requestId);
  app.use(identifyClient(trustedProxies(options.config.trustProxy)));
  app.use(accessLog(options.log));
  app.use(errorRenderer(options.log));
  app.use(noCrossOrigin);
  app.use(hostRequired);
  if (options.faults) app.use(injectFaults(options.faults, API_PREFIX));
  if (options.control) app.use(controlSurface(options.control));
  app.use(routeByPrefix(api, publicPipeline(services, openApi)));

  app.services = services;
  app.close = () => {
    try {
      counters.close();
    } catch (error) {
      options.log.warn({ err: error }, 'request counts of the last moments not written to the counters file');
    } finally {
      mailer.close();
    }
  };
  return app;
}

function apiPipeline(services: Services, served: readonly Operation[], checks: MountOptions): AppMiddleware {
  const router = new Router<RequestState>({ prefix: API_PREFIX, strict: true, sensitive: true });
  mountOperations(router, services, served, checks);
  return compose([authenticate(services), onlyMethods(['GET', 'POST'], router), notFoundFallback]) as AppMiddleware;
}

function publicPipeline(services: Services, openApi: string): AppMiddleware {
  const router = new Router<RequestState>({ strict: true, sensitive: true });
  // The published contract, built once at start-up; no key needed.
  router.get('/openapi/v1.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });
  // For a container's HEALTHCHECK: the process answers and the books can take a write.
  router.get('/healthz', (ctx) => {
    const problem = booksProblem(services.db);
    ctx.status = problem ? 503 : 200;
    ctx.body = problem ? { ok: false, problem } : { ok: true };
  });
  const budget = payPageBudget(services) as never;
  router.get('/pay/:token', budget, payPage(services) as never);
  router.get('/pay/:token/invoice.pdf', budget, payPagePdf(services) as never);
  router.get('/pay/:token/return', budget, payReturn(services) as never);
  router.post('/pay/:token/checkout', budget, payCheckout(services) as never);
  router.post('/webhooks/stripe/:endpointId', stripeWebhook(services) as never);
  mountReferencePage(router, (message) => services.log.warn(message));
  mountConsole(router, services);
  return compose([onlyMethods(['GET', 'POST'], router), notFoundFallback]) as AppMiddleware;
}

/**
 * The router's routes for `methods` only: @koa/router would also answer HEAD for a GET route,
 * and every other method must fall through to the JSON 404.
 */
function onlyMethods(methods: readonly string[], router: Router<RequestState>): AppMiddleware {
  const routes = router.routes() as unknown as AppMiddleware;
  return async (ctx, next) => {
    if (methods.includes(ctx.method)) await routes(ctx, next);
    else await next();
  };
}

function routeByPrefix(api: AppMiddleware, publicRoutes: AppMiddleware): AppMiddleware {
  return async (ctx, next) => {
    const isApi = ctx.path === API_PREFIX || ctx.path.startsWith(`${API_PREFIX}/`);
    await (isApi ? api : publicRoutes)(ctx, next);
  };
}

/** Browser pages on other origins must never read responses: no CORS header, ever. */
const noCrossOrigin: AppMiddleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    for (const name of Object.keys(ctx.response.headers)) {
      if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
    }
  }
};

/**
 * An HTTP/1.1 request must name its host (RFC 9112, 3.2). Node would refuse one that does not
 * with a bare 400 before the app saw it (the server turns that off): this refuses it with the
 * spec's error body instead. HTTP/1.0 has no Host header to require.
 */
const hostRequired: AppMiddleware = async (ctx, next) => {
  if (ctx.req.httpVersion === '1.1' && ctx.get('host') === '') throw validationFailed('host', 'an HTTP/1.1 request must send a Host header');
  await next();
};

/** Free bytes on the disk of the books; null for books in memory, or a folder gone since it was checked (the write lock check says why). */
function freeBytes(db: Db, folder: string): number | null {
  if (db.memory) return null;
  try {
    const { bavail, bsize } = statfsSync(folder);
    return bavail * bsize;
  } catch {
    return null;
  }
}

/** Below this much free space on the books' disk, /healthz reports it: a write needs room for its log pages. */
export const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Whether the books can take a write now: the folder writable (SQLite needs it for its
 * journal files), room on its disk, and the write lock taken and given back at once (no
 * wait, no change).
 */
function booksProblem(db: Db): string | null {
  const folder = dirname(db.name);
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    return 'the folder of the books is not writable';
  }
  const free = freeBytes(db, folder);
  if (free !== null && free < MIN_FREE_BYTES) return `the disk of the books is full: ${free} bytes free`;
  try {
    withoutWaiting(db, () => {
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
    });
  } catch (error) {
    return `the books cannot take a write: ${(error as Error).message}`;
  }
  return null;
}
