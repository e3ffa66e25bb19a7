import type { RouterInstance, RouterMiddleware } from '@koa/router';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Principal } from '../books/keys.js';
import { type IdempotencyClaim, requestFingerprint, runWrite, type StoredResult } from '../books/idempotency.js';
import { ApiError, type ErrorCode, validationFailed } from '../errors.js';
import { bodyRules, isPlainObject } from './body.js';
import { type AppContext, type AppMiddleware, principalOf, type Services } from './context.js';
import { rateLimit } from './limits.js';
import { isPermission, type Permission, PERMISSIONS_BY_ACCESS } from './permissions.js';
import { precompile, validate } from './validate.js';

/** The 22 operation ids of the published v1 surface (spec, Versioning rule 3). */
export const OPERATION_IDS = [
  'businesses.list',
  'accounts.list',
  'customers.list',
  'customers.create',
  'vendors.list',
  'transactions.list',
  'transactions.get',
  'expenses.create',
  'invoices.list',
  'invoices.get',
  'invoices.create',
  'invoices.send',
  'invoices.remind',
  'invoices.recordPayment',
  'review.list',
  'review.accept',
  'today.get',
  'reports.profitAndLoss',
  'reports.balanceSheet',
  'reports.trialBalance',
  'reports.arAging',
  'reports.apAging',
] as const;

export type OperationId = (typeof OPERATION_IDS)[number];

export interface HandlerInput<P extends TObject, Q extends TObject, B extends TObject> {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  principal: Principal;
  services: Services;
  /** Runs a write through the one door: idempotency check, work and stored result in one transaction. */
  write(work: () => StoredResult): StoredResult;
}

/**
 * One endpoint: its operation id and permission sit next to its schemas, and the handler
 * calls into books/ and shapes the reply. An operation missing either fails at start-up.
 */
export interface Operation<P extends TObject = TObject, Q extends TObject = TObject, B extends TObject = TObject> {
  id: OperationId;
  method: 'GET' | 'POST';
  /** Router path below /api/v1, with `:name` parameters. */
  path: string;
  permission: Permission;
  summary: string;
  description?: string;
  params: P;
  query: Q;
  body: B;
  responses: Record<number, { description: string; schema?: TSchema }>;
  /** Codes beyond the common ones (documented in the OpenAPI description). */
  errors: ErrorCode[];
  handle(input: HandlerInput<P, Q, B>): StoredResult | Promise<StoredResult>;
}

export function defineOperation<P extends TObject, Q extends TObject, B extends TObject>(operation: Operation<P, Q, B>): Operation {
  return operation as unknown as Operation;
}

/** Mounts operations on the router, each behind scope, rate limit, body rules and input checks. */
export function mountOperations(router: RouterInstance<AppContext['state']>, services: Services, operations: readonly Operation[]): void {
  const seen = new Set<string>();
  for (const operation of operations) {
    assertWellDeclared(operation, seen);
    const steps: AppMiddleware[] = [
      requirePermission(operation.permission),
      rateLimit(services, operation.method === 'GET' ? 'read' : 'write'),
      bodyRules,
      checkInputs(operation),
      handler(operation, services),
    ];
    const method = operation.method === 'GET' ? 'get' : 'post';
    router[method](operation.id, operation.path, ...(steps as unknown as RouterMiddleware<AppContext['state']>[]));
  }
}

function assertWellDeclared(operation: Operation, seen: Set<string>): void {
  const where = `operation ${operation.id ?? '(no id)'} ${operation.method} ${operation.path}`;
  if (!(OPERATION_IDS as readonly string[]).includes(operation.id)) throw new Error(`${where}: unknown operation id`);
  if (!isPermission(operation.permission)) throw new Error(`${where}: declares no valid permission`);
  if (operation.method !== 'GET' && operation.method !== 'POST') throw new Error(`${where}: only GET and POST are served`);
  if (seen.has(operation.id)) throw new Error(`${where}: declared twice`);
  seen.add(operation.id);
  for (const schema of [operation.params, operation.query, operation.body]) {
    if (schema.additionalProperties !== false) throw new Error(`${where}: input schemas must refuse unknown fields`);
    precompile(schema);
  }
  const names = [...operation.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
  const declared = Object.keys(operation.params.properties);
  if (names.join() !== declared.join()) throw new Error(`${where}: path parameters ${names.join()} differ from schema ${declared.join()}`);
}

function requirePermission(permission: Permission): AppMiddleware {
  return async (ctx, next) => {
    if (!PERMISSIONS_BY_ACCESS[principalOf(ctx).access].has(permission)) {
      throw new ApiError('insufficient_scope', `This key lacks the ${permission} permission.`);
    }
    await next();
  };
}

interface CheckedInputs {
  params: unknown;
  query: unknown;
  body: unknown;
}

const inputsKey = Symbol('inputs');
type WithInputs = AppContext & { [inputsKey]?: CheckedInputs };

/** Path, query and body against the operation's schemas (spec rules 4 and 5). */
function checkInputs(operation: Operation): AppMiddleware {
  return async (ctx, next) => {
    const query = singleValuedQuery(ctx);
    const body = ctx.request.body as Record<string, unknown>;
    for (const name of Object.keys(operation.params.properties)) {
      if (name in query) throw validationFailed(name, 'is a path parameter and must not be repeated in the query');
      if (isPlainObject(body) && name in body) throw validationFailed(name, 'is a path parameter and must not be repeated in the body');
    }
    (ctx as WithInputs)[inputsKey] = {
      params: validate(operation.params, { ...(ctx as unknown as { params: Record<string, string> }).params }, 'path'),
      query: validate(operation.query, query, 'query'),
      body: validate(operation.body, body, 'body'),
    };
    await next();
  };
}

function singleValuedQuery(ctx: AppContext): Record<string, string> {
  // No prototype: a parameter named __proto__ must stay a field (and be refused), not vanish.
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(ctx.query)) {
    if (Array.isArray(value)) throw validationFailed(name, 'must be given at most once');
    if (value !== undefined) query[name] = value;
  }
  return query;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,200}$/;

/** The Idempotency-Key of a POST, checked for form; GET ignores the header entirely. */
function idempotencyClaim(ctx: AppContext, inputs: CheckedInputs): IdempotencyClaim | null {
  if (ctx.method !== 'POST') return null;
  const key = ctx.get('idempotency-key');
  if (key === '' && ctx.headers['idempotency-key'] === undefined) return null;
  if (!PRINTABLE_ASCII.test(key)) {
    throw validationFailed('Idempotency-Key', 'must be 1 to 200 printable ASCII characters');
  }
  return {
    apiKeyId: principalOf(ctx).keyId,
    key,
    requestHash: requestFingerprint({ method: ctx.method, path: ctx.path, query: inputs.query, body: inputs.body }),
  };
}

function handler(operation: Operation, services: Services): AppMiddleware {
  return async (ctx) => {
    const inputs = (ctx as WithInputs)[inputsKey];
    if (!inputs) throw new Error('handler: inputs were not checked');
    const claim = idempotencyClaim(ctx, inputs);
    let replayed = false;
    const result = await operation.handle({
      params: inputs.params as never,
      query: inputs.query as never,
      body: inputs.body as never,
      principal: principalOf(ctx),
      services,
      write(work) {
        const outcome = runWrite(services.db, services.clock, claim, work);
        replayed = outcome.replayed;
        return { status: outcome.status, body: new SerializedJson(outcome.json) };
      },
    });
    if (replayed) ctx.set('idempotent-replayed', 'true');
    // Serialised here, inside the error wrapper, so an answer that cannot be written as JSON
    // becomes the spec's internal_error body rather than Koa's own.
    const text = result.body instanceof SerializedJson ? result.body.text : JSON.stringify(result.body);
    ctx.status = result.status;
    ctx.type = 'application/json';
    ctx.body = text;
  };
}

/** A body a write already serialised inside its transaction (and stored, under a key). */
class SerializedJson {
  constructor(readonly text: string) {}
}
