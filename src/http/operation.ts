import type { RouterInstance, RouterMiddleware } from '@koa/router';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Actor } from '../books/audit.js';
import type { IdempotencyClaim } from '../books/idempotency.js';
import { requestFingerprint } from '../books/idempotency.js';
import { actorOf, type Principal } from '../books/keys.js';
import { runAwaitingWrite, runWrite, type WriteOutcome } from '../books/write-door.js';
import { ApiError, type ErrorCode, validationFailed } from '../errors.js';
import { isPlainObject, readJsonBody } from './body.js';
import { type AppContext, type AppMiddleware, principalOf, type Services } from './context.js';
import { countAgainstBudget } from './limits.js';
import { isPermission, type Permission, PERMISSIONS_BY_ACCESS } from './permissions.js';
import { checkReplies, type ReplyObserver, type ReplyViolation } from './reply-check.js';
import { coerceQuery, precompile, validate } from './validate.js';

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

/** One declared answer: every status an operation can succeed with has a schema. */
export interface ResponseSpec {
  description: string;
  schema: TSchema;
}

export type Responses = Record<number, ResponseSpec>;

/** The replies an operation may give, typed from its declared responses: {status: 201, body: ...} | ... */
export type ReplyOf<R extends Responses> = {
  [S in keyof R & number]: { status: S; body: Static<R[S]['schema']> };
}[keyof R & number];

/** What a handler receives: the validated inputs, the caller and the services. */
export interface RequestInput<P extends TObject, Q extends TObject, B extends TObject> {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  principal: Principal;
  services: Services;
}

/** A write also knows its actor: the audit row its work appends must name it. */
export interface WriteInput<P extends TObject, Q extends TObject, B extends TObject> extends RequestInput<P, Q, B> {
  actor: Actor;
}

/**
 * What every endpoint declares next to its handler: operation id, permission, the schemas of
 * its inputs and of every answer, and the error codes beyond the common ones. An operation
 * missing any of these fails at start-up.
 */
interface Declared<P extends TObject, Q extends TObject, B extends TObject, R extends Responses> {
  id: OperationId;
  /** Router path below /api/v1, with `:name` parameters. */
  path: string;
  permission: Permission;
  summary: string;
  description?: string;
  params: P;
  query: Q;
  body: B;
  responses: R;
  /** Codes beyond the common ones (documented in the OpenAPI description). */
  errors: ErrorCode[];
}

/** A GET: reads the books and shapes the reply. */
export interface ReadOperation<P extends TObject, Q extends TObject, B extends TObject, R extends Responses> extends Declared<P, Q, B, R> {
  method: 'GET';
  handle(input: RequestInput<P, Q, B>): ReplyOf<NoInfer<R>>;
}

/**
 * A POST. The pipeline runs it through the write door (books/write-door.ts): the Idempotency-Key
 * check, `work` and its stored answer in one transaction, with the audit row checked. There is
 * no way for a POST to skip the door.
 */
export interface WriteOperation<P extends TObject, Q extends TObject, B extends TObject, R extends Responses, Prepared>
  extends Declared<P, Q, B, R> {
  method: 'POST';
  /**
   * Work that must be awaited before anything can post (a rate look-up). Declaring it makes the
   * door claim the key `in_progress` in its own short transaction first.
   */
  prepare?(input: WriteInput<P, Q, B>): Promise<Prepared>;
  /** The write: synchronous, inside the door's transaction; it appends its audit row under `input.actor`. */
  work(input: WriteInput<P, Q, B>, prepared: NoInfer<Prepared>): ReplyOf<NoInfer<R>>;
  /**
   * Runs after the commit and before the answer (delivering an email); skipped on a replay. A
   * failure is logged and never undoes the write: what it does must be retried by a job.
   */
  afterCommit?(input: WriteInput<P, Q, B>, reply: ReplyOf<NoInfer<R>>): Promise<void>;
}

/** An operation as the pipeline holds it, its types erased. */
export type Operation = ReadOperation<TObject, TObject, TObject, Responses> | WriteOperation<TObject, TObject, TObject, Responses, unknown>;

/** Declares a GET. Its reply is typed from its declared responses. */
export function defineRead<P extends TObject, Q extends TObject, B extends TObject, R extends Responses>(operation: ReadOperation<P, Q, B, R>): Operation {
  return operation as unknown as Operation;
}

/** Declares a POST: the pipeline runs its work through the write door. Its reply is typed from its declared responses. */
export function defineWrite<P extends TObject, Q extends TObject, B extends TObject, R extends Responses, Prepared = undefined>(
  operation: WriteOperation<P, Q, B, R, Prepared>,
): Operation {
  return operation as unknown as Operation;
}

export interface MountOptions {
  /** Checks every reply against the operation's declared responses (the test suite sets it). */
  onReplyViolation?: (violation: ReplyViolation) => void;
  /** Told the status of every answer an operation gives (the test suite counts coverage with it). */
  onReply?: ReplyObserver;
}

/** Mounts operations on the router, each behind scope, rate limit, body rules and input checks (serveOperation). */
export function mountOperations(
  router: RouterInstance<AppContext['state']>,
  services: Services,
  operations: readonly Operation[],
  options: MountOptions = {},
): void {
  const seen = new Set<string>();
  for (const operation of operations) {
    assertWellDeclared(operation, seen);
    const steps: AppMiddleware[] = [
      ...(options.onReplyViolation ? [checkReplies(operation, options.onReplyViolation, options.onReply)] : []),
      serveOperation(operation, services),
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
  if (operation.method === 'GET' && typeof operation.handle !== 'function') throw new Error(`${where}: a GET needs handle()`);
  if (operation.method === 'POST' && typeof operation.work !== 'function') throw new Error(`${where}: a POST needs work() (the write door runs it)`);
  if (seen.has(operation.id)) throw new Error(`${where}: declared twice`);
  seen.add(operation.id);
  for (const schema of [operation.params, operation.query, operation.body]) {
    if (schema.additionalProperties !== false) throw new Error(`${where}: input schemas must refuse unknown fields`);
    precompile(schema);
  }
  for (const [name, field] of Object.entries(operation.query.properties)) {
    const problem = queryFieldProblem(field);
    if (problem) throw new Error(`${where}: query parameter ${name} ${problem}`);
  }
  const statuses = Object.keys(operation.responses);
  if (statuses.length === 0) throw new Error(`${where}: declares no response`);
  for (const status of statuses) {
    const response = operation.responses[Number(status)];
    if (!/^2[0-9][0-9]$/.test(status) || !response?.schema) throw new Error(`${where}: response ${status} needs a 2xx status and a schema`);
    const loose = looseSchemaPath(response.schema, 'body');
    if (loose) throw new Error(`${where}: response ${status} must say exactly what it holds, but ${loose}`);
    precompile(response.schema);
  }
  const names = [...operation.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
  const declared = Object.keys(operation.params.properties);
  if (names.join() !== declared.join()) throw new Error(`${where}: path parameters ${names.join()} differ from schema ${declared.join()}`);
}

/** A query string holds text: a parameter is a string, an integer or number with both bounds, or a boolean. */
function queryFieldProblem(field: TSchema): string | null {
  if (field.type === 'string' || field.type === 'boolean') return null;
  if (field.type === 'integer' || field.type === 'number') {
    return typeof field.minimum === 'number' && typeof field.maximum === 'number' ? null : 'must declare its minimum and maximum';
  }
  return 'must be a string, a bounded integer or number, or a boolean';
}

/**
 * Where a response schema would let an undeclared field or value through: an object that
 * accepts unknown fields, or a schema with no type. Null when it says exactly what it holds.
 */
function looseSchemaPath(schema: TSchema, path: string): string | null {
  if (Array.isArray(schema.anyOf)) {
    for (const [index, branch] of (schema.anyOf as TSchema[]).entries()) {
      const loose = looseSchemaPath(branch, `${path}.anyOf.${index}`);
      if (loose) return loose;
    }
    return null;
  }
  if (schema.type === undefined) return `${path} has no type`;
  if (schema.type === 'array') return looseSchemaPath(schema.items as TSchema, `${path}.items`);
  if (schema.type !== 'object') return null;
  if (schema.additionalProperties !== false) return `${path} accepts fields it does not declare`;
  for (const [name, field] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const loose = looseSchemaPath(field, `${path}.${name}`);
    if (loose) return loose;
  }
  return null;
}

/**
 * One operation's request, in the spec's order: scope, rate limit, body rules, input checks,
 * then the handler. One middleware rather than a chain of them: each step is a plain call, so
 * a request pays for one async hop instead of five.
 */
function serveOperation(operation: Operation, services: Services): AppMiddleware {
  const kind = operation.method === 'GET' ? 'read' : 'write';
  const handle = operation.method === 'GET' ? readHandler(operation, services) : writeHandler(operation, services);
  return async (ctx) => {
    requirePermission(ctx, operation.permission);
    countAgainstBudget(ctx, services, kind);
    await readJsonBody(ctx);
    // The connection is gone, or the server already refused this request at the socket (not
    // received in time) and closed its side: no answer can reach the client, so nothing runs.
    if (!ctx.writable) throw validationFailed('request', 'was not received in time, or its connection closed; nothing was done');
    checkInputs(ctx, operation);
    await handle(ctx);
  };
}

function requirePermission(ctx: AppContext, permission: Permission): void {
  if (!PERMISSIONS_BY_ACCESS[principalOf(ctx).access].has(permission)) {
    throw new ApiError('insufficient_scope', `This key lacks the ${permission} permission.`);
  }
}

interface CheckedInputs {
  params: unknown;
  query: unknown;
  body: unknown;
}

const inputsKey = Symbol('inputs');
type WithInputs = AppContext & { [inputsKey]?: CheckedInputs };

/** Path, query and body against the operation's schemas (spec rules 4 and 5). */
function checkInputs(ctx: AppContext, operation: Operation): void {
  const query = singleValuedQuery(ctx);
  const body = ctx.request.body as Record<string, unknown>;
  for (const name of Object.keys(operation.params.properties)) {
    if (name in query) throw validationFailed(name, 'is a path parameter and must not be repeated in the query');
    if (isPlainObject(body) && Object.hasOwn(body, name)) throw validationFailed(name, 'is a path parameter and must not be repeated in the body');
  }
  (ctx as WithInputs)[inputsKey] = {
    params: validate(operation.params, { ...(ctx as unknown as { params: Record<string, string> }).params }, 'path'),
    query: validate(operation.query, coerceQuery(operation.query, query), 'query'),
    body: validate(operation.body, body, 'body'),
  };
}

/**
 * The query string, parsed strictly: each parameter at most once, and every name and value
 * valid UTF-8 once percent-decoded (Node's own parser would put U+FFFD in place of bad bytes,
 * so a search could quietly look for something else than the client sent).
 */
function singleValuedQuery(ctx: AppContext): Record<string, string> {
  // No prototype: a parameter named __proto__ must stay a field (and be refused), not vanish.
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  if (ctx.querystring === '') return query;
  for (const pair of ctx.querystring.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decodeQueryPart(equals < 0 ? pair : pair.slice(0, equals), 'query');
    const value = decodeQueryPart(equals < 0 ? '' : pair.slice(equals + 1), name);
    if (Object.hasOwn(query, name)) throw validationFailed(name, 'must be given at most once');
    query[name] = value;
  }
  return query;
}

function decodeQueryPart(encoded: string, field: string): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    throw validationFailed(field, 'is not valid percent-encoded UTF-8');
  }
}

function checkedInputs(ctx: AppContext): CheckedInputs {
  const inputs = (ctx as WithInputs)[inputsKey];
  if (!inputs) throw new Error('handler: inputs were not checked');
  return inputs;
}

function requestInput(ctx: AppContext, services: Services): RequestInput<TObject, TObject, TObject> {
  const inputs = checkedInputs(ctx);
  return { params: inputs.params as never, query: inputs.query as never, body: inputs.body as never, principal: principalOf(ctx), services };
}

type Handler = (ctx: AppContext) => void | Promise<void>;

function readHandler(operation: ReadOperation<TObject, TObject, TObject, Responses>, services: Services): Handler {
  return (ctx) => {
    const reply = operation.handle(requestInput(ctx, services));
    // Serialised here, inside the error wrapper, so an answer that cannot be written as JSON
    // becomes the spec's internal_error body rather than Koa's own.
    sendJson(ctx, reply.status, JSON.stringify(reply.body));
  };
}

/** Every POST: through the write door, then the work after the commit, unless it was a replay. */
function writeHandler(operation: WriteOperation<TObject, TObject, TObject, Responses, unknown>, services: Services): Handler {
  return async (ctx) => {
    const principal = principalOf(ctx);
    const input: WriteInput<TObject, TObject, TObject> = { ...requestInput(ctx, services), actor: actorOf(principal) };
    const request = { actor: input.actor, claim: idempotencyClaim(ctx, operation, principal) };
    const { db, clock } = services;
    const { prepare } = operation;
    const outcome: WriteOutcome<ReplyOf<Responses>> = prepare
      ? await runAwaitingWrite(db, clock, request, () => prepare(input), (prepared) => operation.work(input, prepared))
      : runWrite(db, clock, request, () => operation.work(input, undefined));
    if (outcome.replayed) ctx.set('idempotent-replayed', 'true');
    else if (operation.afterCommit) await runAfterCommit(ctx, operation, input, outcome.reply, services);
    sendJson(ctx, outcome.answer.status, outcome.answer.json);
  };
}

async function runAfterCommit(
  ctx: AppContext,
  operation: WriteOperation<TObject, TObject, TObject, Responses, unknown>,
  input: WriteInput<TObject, TObject, TObject>,
  reply: ReplyOf<Responses>,
  services: Services,
): Promise<void> {
  try {
    await operation.afterCommit?.(input, reply);
  } catch (error) {
    services.log.warn({ err: error, operation: operation.id, requestId: ctx.state.requestId }, 'work after the commit failed; the write stands');
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,200}$/;

/** The Idempotency-Key of a POST, checked for form and tied to this operation and its validated inputs. */
function idempotencyClaim(ctx: AppContext, operation: Operation, principal: Principal): IdempotencyClaim | null {
  const key = ctx.get('idempotency-key');
  if (key === '' && ctx.headers['idempotency-key'] === undefined) return null;
  if (!PRINTABLE_ASCII.test(key)) {
    throw validationFailed('Idempotency-Key', 'must be 1 to 200 printable ASCII characters');
  }
  const inputs = checkedInputs(ctx);
  return {
    apiKeyId: principal.keyId,
    key,
    requestHash: requestFingerprint({ operationId: operation.id, params: inputs.params, query: inputs.query, body: inputs.body }),
  };
}

function sendJson(ctx: AppContext, status: number, json: string): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = json;
}
