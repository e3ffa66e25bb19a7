import type { RouterInstance, RouterMiddleware } from '@koa/router';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { IdempotencyClaim } from '../store/idempotency.js';
import { requestFingerprint } from '../store/idempotency.js';
import { actorOf, type Principal } from '../books/keys.js';
import { type Command, write } from '../door/door.js';
import { keyReach, type Reached, resolveScope, type Scope } from '../door/reach.js';
import { ApiError, type ErrorCode, validationFailed } from '../errors.js';
import { isPlainObject, readJsonBody } from './body.js';
import { type AppContext, type AppMiddleware, principalOf } from './context.js';
import type { Services } from '../services.js';
import { countAgainstBudget } from './limits.js';
import { isPermission, type Permission, PERMISSIONS_BY_ACCESS } from './permissions.js';
import { coerceQuery, validate } from './validate.js';


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

/** The validated inputs of a request, its caller and the services. */
export interface RequestInput<P extends TObject, Q extends TObject, B extends TObject> {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  principal: Principal;
  services: Services;
}

/** What a GET's handler receives: the request, and its scope resolved for the caller. */
export interface ReadInput<P extends TObject, Q extends TObject, B extends TObject> extends RequestInput<P, Q, B> {
  /** The operation's scope, resolved (404 or 403 before the handler runs); the key's account when it declares none. */
  reached: Reached;
}

/**
 * What every endpoint declares next to its handler: operation id, permission, the schemas of
 * its inputs and of every answer, and the error codes beyond the common ones. An operation
 * missing any of these fails at start-up.
 */
interface Declared<P extends TObject, Q extends TObject, B extends TObject, R extends Responses> {
  /** The operation id (a published surface lists its ids: api/v1/operation-ids.ts). */
  id: string;
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
  /** The record the caller must reach (resolved once, by the pipeline); none (or null): the key's account. */
  scope?(request: RequestInput<P, Q, B>): Scope | null;
  handle(input: ReadInput<P, Q, B>): ReplyOf<NoInfer<R>>;
}

/**
 * A POST: a write command of the write door (src/door), with how the request becomes the
 * command's input and how its result becomes the reply. The pipeline runs it through the door
 * (scope, Idempotency-Key, the command and its audit row, the stored answer, after-commit
 * work); there is no way for a POST to skip it.
 */
export interface WriteOperation<P extends TObject, Q extends TObject, B extends TObject, R extends Responses, I, Result> extends Declared<P, Q, B, R> {
  method: 'POST';
  command: Command<I, Result, unknown>;
  input(request: RequestInput<P, Q, B>): I;
  /** Runs inside the write's transaction, so the reply (stored under an Idempotency-Key) is what the write left. */
  reply(result: Result, request: RequestInput<P, Q, B>): ReplyOf<NoInfer<R>>;
}

/** An operation as the pipeline holds it, its types erased. */
export type Operation = ReadOperation<TObject, TObject, TObject, Responses> | WriteOperation<TObject, TObject, TObject, Responses, unknown, unknown>;

/** Declares a GET. Its reply is typed from its declared responses. */
export function defineRead<P extends TObject, Q extends TObject, B extends TObject, R extends Responses>(operation: ReadOperation<P, Q, B, R>): Operation {
  return operation as unknown as Operation;
}

/** Declares a POST: the pipeline runs its command through the write door. Its reply is typed from its declared responses. */
export function defineWrite<P extends TObject, Q extends TObject, B extends TObject, R extends Responses, I, Result, Prepared>(
  operation: Omit<WriteOperation<P, Q, B, R, I, Result>, 'command'> & { command: Command<I, Result, Prepared> },
): Operation {
  return operation as unknown as Operation;
}

export interface MountOptions {
  /** The surface's operation ids: an operation whose id is not among them fails at start-up. */
  operationIds: readonly string[];
  /** Middleware to run around an operation (the test suite checks every reply against the contract with it). */
  around?: (operation: Operation) => AppMiddleware;
}

/** Mounts operations on the router, each behind scope, rate limit, body rules and input checks (serveOperation). */
export function mountOperations(
  router: RouterInstance<AppContext['state']>,
  services: Services,
  operations: readonly Operation[],
  options: MountOptions,
): void {
  const seen = new Set<string>();
  for (const operation of operations) {
    assertWellDeclared(operation, seen, options.operationIds);
    const steps: AppMiddleware[] = [
      ...(options.around ? [options.around(operation)] : []),
      serveOperation(operation, services),
    ];
    const method = operation.method === 'GET' ? 'get' : 'post';
    router[method](operation.id, operation.path, ...(steps as unknown as RouterMiddleware<AppContext['state']>[]));
  }
}

function assertWellDeclared(operation: Operation, seen: Set<string>, operationIds: readonly string[]): void {
  const where = `operation ${operation.id ?? '(no id)'} ${operation.method} ${operation.path}`;
  if (!operationIds.includes(operation.id)) throw new Error(`${where}: unknown operation id`);
  if (!isPermission(operation.permission)) throw new Error(`${where}: declares no valid permission`);
  if (operation.method !== 'GET' && operation.method !== 'POST') throw new Error(`${where}: only GET and POST are served`);
  if (operation.method === 'GET' && typeof operation.handle !== 'function') throw new Error(`${where}: a GET needs handle()`);
  if (operation.method === 'POST' && (typeof operation.command?.run !== 'function' || typeof operation.input !== 'function' || typeof operation.reply !== 'function')) {
    throw new Error(`${where}: a POST needs a command (the write door runs it), input() and reply()`);
  }
  if (seen.has(operation.id)) throw new Error(`${where}: declared twice`);
  seen.add(operation.id);
  for (const schema of [operation.params, operation.query, operation.body]) {
    if (schema.additionalProperties !== false) throw new Error(`${where}: input schemas must refuse unknown fields`);
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
    const request = requestInput(ctx, services);
    const { principal } = request;
    const scope = operation.scope?.(request) ?? null;
    const reached = scope ? resolveScope(services.db, keyReach(principal), scope) : { tenantId: principal.tenant.id, business: null };
    const reply = operation.handle({ ...request, reached });
    // Serialised here, inside the error wrapper, so an answer that cannot be written as JSON
    // becomes the spec's internal_error body rather than Koa's own.
    sendJson(ctx, reply.status, JSON.stringify(reply.body));
  };
}

/** Every POST: its command through the write door, which stores (or replays) the answer. */
function writeHandler(operation: WriteOperation<TObject, TObject, TObject, Responses, unknown, unknown>, services: Services): Handler {
  return async (ctx) => {
    const request = requestInput(ctx, services);
    const { principal } = request;
    const writer = { actor: actorOf(principal), reach: keyReach(principal) };
    const idempotency = { claim: idempotencyClaim(ctx, operation, principal), reply: (result: unknown) => operation.reply(result, request) };
    const outcome = await write(services, writer, operation.command, operation.input(request), idempotency);
    if (outcome.replayed) ctx.set('idempotent-replayed', 'true');
    const { answer } = outcome;
    if (!answer) throw new Error('write door: an API write stores no answer');
    sendJson(ctx, answer.status, answer.json);
  };
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
