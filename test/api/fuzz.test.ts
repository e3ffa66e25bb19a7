import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { operations } from '../../src/api/v1/index.js';
import { setRate } from '../../src/books/fx.js';
import { revokeKey } from '../../src/books/keys.js';
import { lockPeriod } from '../../src/books/periods.js';
import { MAX_BODY_BYTES } from '../../src/http/body.js';
import type { Operation } from '../../src/http/operation.js';
import type { ReplyViolation } from '../../src/http/reply-check.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { type ApiTenant, buildApiTenant, paddedJsonObject, setTenant, uuidsIn } from '../support/api.js';
import { buildKey, TEST_ACTOR } from '../support/factories.js';
import {
  answerProblems,
  BAD_JSON,
  BAD_UTF8,
  countDifferences,
  CursorRef,
  describeRequest,
  hostileStringArb,
  hostileValueArb,
  IdRef,
  inParallel,
  JsonEntries,
  jsonText,
  type KeyScope,
  normalizePath,
  predict,
  type Prediction,
  RawJson,
  resolveRefs,
  schemaFields,
  tableCounter,
  totalChanges,
  validValueArb,
  type WireRequest,
  WireSender,
  wrongTypeArb,
} from '../support/fuzz.js';
import { addBilledCustomer, createInvoice, invoiceBody, sendInvoice } from '../support/invoicing.js';
import { addCustomer, addExpense, addVendor, archive } from '../support/register.js';
import { queueReviewItem } from '../support/review.js';

/**
 * The API under a fuzzer. fast-check draws requests from the request schemas of all 22
 * operations (read from the operation objects, so a new field is fuzzed as soon as it is
 * declared), half of them as a client would send them and half mutated: wrong types, huge and
 * deeply nested values, lone surrogates, NUL, direction marks, astral characters, numbers where
 * strings belong, duplicate keys, bad UTF-8 and bad JSON, headers missing or doubled, odd
 * framings, and paths with odd encodings. They go to a real server over loopback (kept-alive
 * sockets with several requests in flight, a fresh raw socket for what must not share a
 * connection) against one real SQLite file, under keys of five accounts: cross-tenant and
 * cross-business ids are part of the mix.
 *
 * Every answer must be below 500, JSON under /api/v1, with the spec's error body, a code from
 * the closed list at its status, error.requestId equal to x-request-id, and a validation_failed
 * message that starts with a field path. A request the pipeline must refuse (predict, in
 * test/support/fuzz.ts) is never answered 2xx, and a success never shows or touches another account's (or
 * an unreachable business's) records. Refused writes change nothing: batches of writes built to
 * be refused run with every table's row count (and the connection's change count) compared
 * around them, and a sample of the other writes runs alone with the counts compared. Every
 * reply is also held to its operation's declared schema (checkReplies, on the server).
 *
 * FUZZ_SEED and FUZZ_REQUESTS override the seed and the number of requests (default 100,000).
 */

const SEED = process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== '' ? Number(process.env.FUZZ_SEED) : 20_260_315;
const REQUESTS = process.env.FUZZ_REQUESTS !== undefined && process.env.FUZZ_REQUESTS !== '' ? Number(process.env.FUZZ_REQUESTS) : 100_000;
const BATCH = 32;
const IN_FLIGHT = 12;
const TODAY = '2026-03-15';
const START = `${TODAY}T12:00:00.000Z`;
/** Failed authentications per address before rate_limited (spec, Limits); the clock moves a window on a little after it, so both answers are seen. */
const AUTH_FAILURES_BEFORE_NEW_WINDOW = 310;
const WINDOW_MS = 600_000;

/** Field paths any validation_failed message may start with, besides the operations' own fields and what the request sent. */
const PIPELINE_FIELDS = ['body', 'query', 'path', 'request', 'host', 'Content-Type', 'Content-Length', 'Idempotency-Key'];

/** Every field the operations declare, arrays as N (lines.N.quantity). */
const DECLARED_FIELDS = new Set<string>([
  ...PIPELINE_FIELDS,
  ...operations.flatMap((op) => [op.params, op.query, op.body].flatMap((schema) => schemaFields(schema).map((field) => field.path.join('.')))),
]);

// ---------------------------------------------------------------------------------------------
// The books under test: five accounts

type KeyLabel = 'rwAll' | 'rwA1' | 'roA' | 'B' | 'C' | 'P' | 'revoked' | 'noAccess' | 'none' | 'garbage';

interface Owner {
  tenant: string;
  /** null for account-wide records (customers, vendors). */
  business: string | null;
}

interface BusinessPools {
  accounts: string[];
  expenseAccounts: string[];
  revenueAccounts: string[];
  transactions: string[];
  invoices: string[];
  drafts: string[];
  sent: string[];
  reviews: string[];
  pending: string[];
}

interface World {
  app: TestApp;
  tenants: Record<'A' | 'B' | 'C' | 'P' | 'N', ApiTenant>;
  keys: Record<Exclude<KeyLabel, 'none' | 'garbage'>, string>;
  /** Working keys by value. */
  scopes: Map<string, KeyScope>;
  owners: Map<string, Owner>;
  businessesOf: Map<string, string[]>;
  byBusiness: Map<string, BusinessPools>;
  customersOf: Map<string, string[]>;
  vendorsOf: Map<string, string[]>;
  /** nextCursor values lists answered, each with the operation and the query that asked for it (to follow it, or to misuse it). */
  cursors: Array<{ op: string; query: Record<string, string>; cursor: string }>;
}

function seedBooks(app: TestApp): World {
  const A = buildApiTenant(app, { plan: 'large', businesses: 2, keys: [{ access: 'read_write' }, { access: 'read' }] });
  const B = buildApiTenant(app, { plan: 'large' });
  const C = buildApiTenant(app, { plan: 'small' });
  const P = buildApiTenant(app, { plan: 'large' });
  const N = buildApiTenant(app, { plan: 'large' });
  const [A1, A2] = A.businesses as [ApiTenant['business'], ApiTenant['business']];
  const rwA1 = buildKey(app.db, app.clock, { tenantId: A.id, businessIds: [A1.id] });
  const revoked = buildKey(app.db, app.clock, { tenantId: A.id });
  revokeKey(app.db, app.clock, TEST_ACTOR, revoked.id);
  for (const tenant of [A, B, P]) setTenant(app, tenant.id, { rateLimit: { mode: 'off' } });
  setTenant(app, N.id, { apiAccess: false });
  lockPeriod(app.db, app.clock, TEST_ACTOR, A2.id, '2025-12-31');
  for (const date of ['2026-03-01', '2026-03-13', '2025-12-15']) {
    for (const [currency, rate] of [['EUR', '1.08'], ['GBP', '1.27'], ['CAD', '0.74'], ['MXN', '0.058']] as const) setRate(app.db, app.clock, CLI_ACTOR, { currency, date, usdPerUnit: rate });
  }

  const world: World = {
    app,
    tenants: { A, B, C, P, N },
    keys: { rwAll: A.key, rwA1: rwA1.key, roA: A.keys[1]!.key, B: B.key, C: C.key, P: P.key, revoked: revoked.key, noAccess: N.key },
    scopes: new Map([
      [A.key, { label: 'rwAll', tenant: A.id, reach: [A1.id, A2.id], writes: true }],
      [rwA1.key, { label: 'rwA1', tenant: A.id, reach: [A1.id], writes: true }],
      [A.keys[1]!.key, { label: 'roA', tenant: A.id, reach: [A1.id, A2.id], writes: false }],
      [B.key, { label: 'B', tenant: B.id, reach: [B.business.id], writes: true }],
      [C.key, { label: 'C', tenant: C.id, reach: [C.business.id], writes: true }],
      [P.key, { label: 'P', tenant: P.id, reach: [P.business.id], writes: true }],
    ]),
    owners: new Map(),
    businessesOf: new Map(),
    byBusiness: new Map(),
    customersOf: new Map(),
    vendorsOf: new Map(),
    cursors: [],
  };
  return world;
}

/** Customers, vendors, expenses, review items and invoices (drafts, sent, foreign) in every business that takes API writes. */
async function seedRecords(world: World): Promise<void> {
  const { app } = world;
  const { A, B, C, P } = world.tenants;
  for (const tenant of [A, B, C, P]) {
    const customers = Array.from({ length: 4 }, () => addBilledCustomer(app, tenant.id));
    archive(app, 'customers', addBilledCustomer(app, tenant.id));
    addCustomer(app, tenant.id, { name: `Walk-in ${tenant.id.slice(-8)}` });
    for (const name of ['Staples', 'Harborview Leasing', 'Delta Air Lines']) addVendor(app, tenant.id, name);
    const key = tenant === A ? world.keys.rwAll : tenant.key;
    for (const business of tenant.businesses) {
      for (let i = 0; i < 3; i++) addExpense(app, business, { date: `2026-03-0${i + 1}`, amountCents: BigInt(1000 + i * 250), vendor: { name: 'Staples' } });
      for (let i = 0; i < 10; i++) {
        queueReviewItem(app, business, { date: `2026-03-${String(i + 1).padStart(2, '0')}`, amountCents: BigInt(500 + i), proposedAccount: i % 4 === 0 ? null : 'Office Supplies', confidence: i % 3 === 0 ? null : 0.5 + i / 40 });
      }
      const entity = tenant === A ? { entityId: business.id } : {};
      for (let i = 0; i < 6; i++) {
        const body = invoiceBody(app, business.id, customers[i % customers.length]!, { ...entity, ...(i === 5 ? { currency: 'EUR', issueDate: '2026-03-13' } : {}) });
        const { invoiceId } = await createInvoice(app, key, body);
        if (i % 2 === 1) await sendInvoice(app, key, invoiceId);
      }
    }
  }
}

/** Reads who owns every record, and the pools requests draw their ids from, from the books. */
function refreshPools(world: World): void {
  const db = world.app.db;
  const rows = <T>(sql: string) => db.prepare(sql).all() as T[];
  world.owners.clear();
  world.businessesOf.clear();
  world.byBusiness.clear();
  world.customersOf.clear();
  world.vendorsOf.clear();
  const tenantOf = new Map<string, string>();
  for (const row of rows<{ id: string; tenant_id: string }>('SELECT id, tenant_id FROM businesses')) {
    tenantOf.set(row.id, row.tenant_id);
    world.owners.set(row.id, { tenant: row.tenant_id, business: row.id });
    push(world.businessesOf, row.tenant_id, row.id);
    world.byBusiness.set(row.id, { accounts: [], expenseAccounts: [], revenueAccounts: [], transactions: [], invoices: [], drafts: [], sent: [], reviews: [], pending: [] });
  }
  const own = (id: string, business: string) => world.owners.set(id, { tenant: tenantOf.get(business)!, business });
  for (const row of rows<{ id: string; business_id: string; type: string; is_heading: bigint; archived: bigint; system_role: string | null }>(
    'SELECT id, business_id, type, is_heading, archived, system_role FROM ledger_accounts',
  )) {
    own(row.id, row.business_id);
    const pools = world.byBusiness.get(row.business_id)!;
    pools.accounts.push(row.id);
    const postable = row.is_heading === 0n && row.archived === 0n;
    if (postable && (row.type === 'expense' || row.type === 'asset') && (row.system_role === null || row.system_role === 'uncategorized_expense')) pools.expenseAccounts.push(row.id);
    if (postable && row.type === 'revenue') pools.revenueAccounts.push(row.id);
  }
  for (const row of rows<{ id: string; business_id: string }>('SELECT id, business_id FROM transactions')) {
    own(row.id, row.business_id);
    world.byBusiness.get(row.business_id)!.transactions.push(row.id);
  }
  for (const row of rows<{ id: string; business_id: string }>('SELECT id, business_id FROM expenses')) own(row.id, row.business_id);
  for (const row of rows<{ id: string; business_id: string; status: string }>('SELECT id, business_id, status FROM invoices')) {
    own(row.id, row.business_id);
    const pools = world.byBusiness.get(row.business_id)!;
    pools.invoices.push(row.id);
    if (row.status === 'draft') pools.drafts.push(row.id);
    if (row.status === 'sent' || row.status === 'partially_paid' || row.status === 'overdue' || row.status === 'viewed') pools.sent.push(row.id);
  }
  for (const row of rows<{ id: string; business_id: string; accepted_at: string | null }>('SELECT id, business_id, accepted_at FROM review_queue_items')) {
    own(row.id, row.business_id);
    const pools = world.byBusiness.get(row.business_id)!;
    pools.reviews.push(row.id);
    if (row.accepted_at === null) pools.pending.push(row.id);
  }
  for (const row of rows<{ id: string; tenant_id: string }>('SELECT id, tenant_id FROM customers')) {
    world.owners.set(row.id, { tenant: row.tenant_id, business: null });
    push(world.customersOf, row.tenant_id, row.id);
  }
  for (const row of rows<{ id: string; tenant_id: string }>('SELECT id, tenant_id FROM vendors')) {
    world.owners.set(row.id, { tenant: row.tenant_id, business: null });
    push(world.vendorsOf, row.tenant_id, row.id);
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

// ---------------------------------------------------------------------------------------------
// Drafts: what fast-check generates; ids and cursors are picked when the request is sent

type Framing = 'length' | 'chunked' | 'no-length' | 'short-length' | 'double-length' | 'te-and-cl' | 'bad-chunk' | 'length-not-a-number' | 'declared-huge';
type Encoding = 'gzip' | 'gzip-plain' | 'gzip-bomb' | 'deflate' | 'br' | 'identity' | 'x-unknown' | 'gzip, gzip';
type PathShape = 'trailing-slash' | 'double-slash' | 'upper-case' | 'prefix-case' | 'dot-segment' | 'encoded-slashes' | 'extra-segment' | 'overlong-segment' | 'unicode-segment' | 'nul-segment' | 'double-encoded' | 'matrix';

type Mutation =
  | { kind: 'body.set'; path: string[]; value: unknown }
  | { kind: 'body.delete'; path: string[] }
  | { kind: 'body.duplicate'; name: string; value: unknown; validLast: boolean }
  | { kind: 'body.replace'; value: unknown }
  | { kind: 'body.text'; text: string }
  | { kind: 'body.bad-utf8'; at: number; bytes: number[] }
  | { kind: 'body.bom' }
  | { kind: 'body.size'; bytes: number }
  | { kind: 'content-type'; value: string | null }
  | { kind: 'content-encoding'; value: Encoding }
  | { kind: 'framing'; value: Framing }
  | { kind: 'query.add'; pair: string }
  | { kind: 'query.set'; name: string; value: unknown }
  | { kind: 'path.param'; value: string }
  | { kind: 'path.shape'; shape: PathShape; seed: number }
  | { kind: 'method'; value: string }
  | { kind: 'header.drop'; name: 'authorization' | 'content-type' | 'host' | 'idempotency-key' }
  | { kind: 'header.double'; name: 'authorization' | 'content-type' | 'idempotency-key' | 'host'; value: string }
  | { kind: 'header.add'; name: string; value: string }
  | { kind: 'idempotency'; value: string };

interface Draft {
  op: number;
  key: KeyLabel;
  /** Which malformed Authorization a 'garbage' key sends. */
  auth: number;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  /** How a request with nothing to say sends it: no body, `{}`, or Content-Length: 0. */
  empty: 'none' | 'object' | 'length0';
  idempotencyKey: string | null;
  /** None for a request as a client would send it; else one to three. */
  mutations: Mutation[];
  /** A write sent alone, with the row counts compared around it. */
  solo: boolean;
}

/** Authorization headers around a working key that are not quite `Bearer <key>` (the scheme's case does not matter; the model knows which still work). */
const AUTH_VARIANTS: ReadonlyArray<(key: string) => string> = [
  () => 'Bearer',
  () => 'Bearer ',
  () => 'Basic dXNlcjpwYXNzd29yZA==',
  (key) => `Bearer ${key}x`,
  (key) => `Bearer ${key.slice(0, -1)}`,
  (key) => `bearer ${key}`,
  (key) => `BEARER ${key}`,
  (key) => `Bearer  ${key}`,
  (key) => `Bearer ${key} `,
  (key) => `Token ${key}`,
  (key) => key,
  () => `Bearer ${'x'.repeat(201)}`,
  () => `Bearer ${'k'.repeat(8000)}`,
  () => 'Bearer dbk_live_0000000000000000000000000000000000000000',
  (key) => `Bearer ${key.toUpperCase()}`,
  (key) => `Bearer ${key}\u00e9`,
  (key) => `Bearer ${key}😀`,
  (key) => `Bearer\t${key}`,
  (key) => `Bearer ${key}, Bearer ${key}`,
];

const keyArb: fc.Arbitrary<KeyLabel> = fc.oneof(
  { weight: 30, arbitrary: fc.constant<KeyLabel>('rwAll') },
  { weight: 20, arbitrary: fc.constant<KeyLabel>('rwA1') },
  { weight: 14, arbitrary: fc.constant<KeyLabel>('B') },
  { weight: 6, arbitrary: fc.constant<KeyLabel>('roA') },
  { weight: 4, arbitrary: fc.constant<KeyLabel>('C') },
  { weight: 5, arbitrary: fc.constant<KeyLabel>('P') },
  { weight: 2, arbitrary: fc.constant<KeyLabel>('revoked') },
  { weight: 1, arbitrary: fc.constant<KeyLabel>('noAccess') },
  { weight: 2, arbitrary: fc.constant<KeyLabel>('none') },
  { weight: 2, arbitrary: fc.constant<KeyLabel>('garbage') },
);

/** A few fixed keys (so replays and clashes happen) and fresh printable ones. */
const idempotencyKeyArb = fc.oneof(
  { weight: 2, arbitrary: fc.nat(24).map((n) => `fuzz-key-${n}`) },
  { weight: 3, arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 60 }) },
);

const badIdempotencyKeyArb = fc.oneof(
  fc.constantFrom('', ' ', 'a'.repeat(201), 'x'.repeat(5000), 'clé', '😀', 'tab\there', 'nul\u0000', 'cr\rlf\n', '\u007f', 'k\u0085'),
  hostileStringArb,
);

const contentTypeArb = fc.constantFrom<string | null>(
  null,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/vnd.api+json',
  'json',
  'text/json',
  'application/xml',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'Application/JSON',
  'application/json; charset=latin1',
  'application/json, text/plain',
  'application/*',
  '*/*',
  ' application/json ',
  'application/json\u00e9',
);

const pathParamArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '%00',
    'abc%00',
    '%2F',
    'a%2Fb',
    '%252F',
    '..',
    '.',
    '%2e%2e',
    '%',
    '%zz',
    '%E0%A4%A',
    '%C0%AF',
    '%ED%A0%80',
    '%FF',
    '%F0%9F%98%80',
    'null',
    'undefined',
    '0',
    '-1',
    '*',
    '%20',
    '+',
    '~',
    'urn:uuid:c0ffee00-aaaa-4bbb-8ccc-0123456789ab',
    'c0ffee00-aaaa-4bbb-8ccc-0123456789ab%00',
    '00000000-0000-0000-0000-000000000000',
    'C0FFEE00-AAAA-4BBB-8CCC-0123456789AB',
    'c0ffee00aaaa4bbb8ccc0123456789ab',
    '{c0ffee00-aaaa-4bbb-8ccc-0123456789ab}',
  ),
  fc.uuid().map((id) => [...id].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')),
  fc.uuid().map((id) => encodeURIComponent(encodeURIComponent(`${id}/`))),
  hostileStringArb.map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '?'))),
  hostileStringArb.map((text) => text.slice(0, 300)),
  fc.constantFrom(2_000, 9_000).map((n) => 'a'.repeat(n)),
);

const unknownNameArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'Name', 'NAME', 'name ', 'id', 'entityid', 'a/b', '~0', '~1', '\u0000', 'é', '😀', '$where', 'lines[0]', 'x'.repeat(300)),
  fc.string({ maxLength: 12 }).filter((name) => !name.includes(', ')),
);

const queryPairArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('%zz=1', 'limit=%E0%A4%A', 'a=%ED%A0%80', '%00=1', 'x=%00', '=', '==', '&&&', '=1', 'a[]=1', 'a[b]=1', '__proto__=1', 'constructor=x', 'id=c0ffee00-aaaa-4bbb-8ccc-0123456789ab', 'limit=1&limit=2', 'limit', 'limit=', 'a=b=c', 'search=%', 'search=%25', 'text=_'),
  fc.tuple(unknownNameArb, hostileStringArb).map(([name, value]) => `${encodeURIComponent(name.replace(/[\ud800-\udfff]/g, '?'))}=${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '?'))}`),
);

const headerAddArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom<[string, string]>(
    ['x-forwarded-for', '203.0.113.9'],
    ['cookie', 'session=abc; daybook=1'],
    ['accept', 'text/html'],
    ['accept-encoding', 'gzip, br'],
    ['expect', '100-continue'],
    ['connection', 'close'],
    ['origin', 'https://evil.example'],
    ['x-request-id', 'client-chosen-id'],
    ['x-http-method-override', 'DELETE'],
    ['transfer-encoding', 'identity'],
    ['content-length', '0'],
    ['range', 'bytes=0-10'],
    ['if-none-match', '*'],
    ['x-long', 'v'.repeat(12_000)],
    ['x-unicode', 'é😀'],
    ['x-nul', 'a\u0000b'],
  ),
  fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), hostileStringArb.map((v) => v.slice(0, 200))),
).map(([name, value]) => ({ kind: 'header.add', name, value }) as Mutation);

/** The path a schema field has in a value: arrays at their first item. */
const concrete = (path: string[]) => path.map((part) => (part === 'N' ? '0' : part));

function mutationArb(op: Operation): fc.Arbitrary<Mutation> {
  const bodyFields = schemaFields(op.body);
  const queryFields = Object.entries(op.query.properties as Record<string, TSchema>);
  const hasParams = Object.keys(op.params.properties).length > 0;
  /** Weights are whole numbers: W leaves room for the rare ones. */
  const W = 10;
  const choices: Array<fc.WeightedArbitrary<Mutation>> = [
    {
      weight: 4 * W,
      arbitrary: fc
        .tuple(unknownNameArb, hostileValueArb, bodyFields.length > 0 ? fc.constantFrom(...bodyFields.filter((f) => f.schema.type === 'object').map((f) => concrete(f.path)), []) : fc.constant([]))
        .map(([name, value, under]) => ({ kind: 'body.set', path: [...under, name], value })),
    },
    { weight: 3 * W, arbitrary: hostileValueArb.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof RawJson).map((value) => ({ kind: 'body.replace', value })) },
    { weight: 3 * W, arbitrary: fc.constantFrom(...BAD_JSON).map((text) => ({ kind: 'body.text', text })) },
    { weight: 3 * W, arbitrary: fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...BAD_UTF8)).map(([at, bytes]) => ({ kind: 'body.bad-utf8', at, bytes })) },
    { weight: 1 * W, arbitrary: fc.constant({ kind: 'body.bom' }) },
    // Bodies at and past the limit cost the most to send and parse: about one mutation in 700.
    { weight: 1, arbitrary: fc.constantFrom(MAX_BODY_BYTES - 10, MAX_BODY_BYTES, MAX_BODY_BYTES + 1, MAX_BODY_BYTES + 5000).map((bytes) => ({ kind: 'body.size', bytes })) },
    { weight: 3 * W, arbitrary: contentTypeArb.map((value) => ({ kind: 'content-type', value })) },
    { weight: 2 * W, arbitrary: fc.constantFrom<Encoding>('gzip', 'gzip-plain', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip', 'gzip', 'gzip-plain', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip', 'gzip-bomb').map((value) => ({ kind: 'content-encoding', value })) },
    {
      weight: 3 * W,
      arbitrary: fc
        .constantFrom<Framing>('chunked', 'chunked', 'no-length', 'short-length', 'double-length', 'te-and-cl', 'bad-chunk', 'length-not-a-number', 'declared-huge')
        .map((value) => ({ kind: 'framing', value })),
    },
    { weight: 4 * W, arbitrary: queryPairArb.map((pair) => ({ kind: 'query.add', pair })) },
    {
      weight: 3 * W,
      arbitrary: fc
        .constantFrom<PathShape>('trailing-slash', 'double-slash', 'upper-case', 'prefix-case', 'dot-segment', 'encoded-slashes', 'extra-segment', 'overlong-segment', 'unicode-segment', 'nul-segment', 'double-encoded', 'matrix')
        .chain((shape) => fc.nat().map((seed) => ({ kind: 'path.shape', shape, seed }) as Mutation)),
    },
    { weight: 3 * W, arbitrary: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'GET', 'POST', 'get', 'post', 'FOO', 'TRACE', 'PROPFIND').map((value) => ({ kind: 'method', value })) },
    { weight: 2 * W, arbitrary: fc.constantFrom('authorization', 'content-type', 'host', 'idempotency-key').map((name) => ({ kind: 'header.drop', name }) as Mutation) },
    {
      weight: 3 * W,
      arbitrary: fc
        .tuple(fc.constantFrom('authorization', 'content-type', 'idempotency-key', 'host'), fc.constantFrom('Bearer x', 'text/plain', 'application/json', 'fuzz-key-1', 'other.example', ''))
        .map(([name, value]) => ({ kind: 'header.double', name, value }) as Mutation),
    },
    { weight: 2 * W, arbitrary: headerAddArb },
    { weight: 2 * W, arbitrary: badIdempotencyKeyArb.map((value) => ({ kind: 'idempotency', value })) },
  ];
  if (bodyFields.length > 0) {
    choices.push(
      { weight: 6 * W, arbitrary: fc.constantFrom(...bodyFields).chain((field) => wrongTypeArb(field.schema).map((value) => ({ kind: 'body.set', path: concrete(field.path), value }) as Mutation)) },
      { weight: 5 * W, arbitrary: fc.tuple(fc.constantFrom(...bodyFields), hostileValueArb).map(([field, value]) => ({ kind: 'body.set', path: concrete(field.path), value })) },
      { weight: 2 * W, arbitrary: fc.constantFrom(...bodyFields).map((field) => ({ kind: 'body.delete', path: concrete(field.path) })) },
      {
        weight: 2 * W,
        arbitrary: fc
          .tuple(fc.constantFrom(...bodyFields.filter((f) => f.path.length === 1)), hostileValueArb, fc.boolean())
          .map(([field, value, validLast]) => ({ kind: 'body.duplicate', name: field.path[0]!, value, validLast })),
      },
    );
  }
  if (queryFields.length > 0) {
    choices.push({
      weight: 4 * W,
      arbitrary: fc.tuple(fc.constantFrom(...queryFields), fc.oneof(hostileValueArb, fc.constantFrom('1e2', '+5', '05', '0', '101', '-1', '9999999999999999999', 'TRUE', '1', 'yes', ''))).map(([[name], value]) => ({ kind: 'query.set', name, value })),
    });
  }
  if (hasParams) choices.push({ weight: 5 * W, arbitrary: pathParamArb.map((value) => ({ kind: 'path.param', value })) });
  return fc.oneof(...choices);
}

const context = { today: TODAY };

const draftArbs = new Map<string, fc.Arbitrary<Draft>>();

/** One operation's drafts: valid-looking (no mutation) or with one to three mutations. Built once per operation (building reads every schema). */
function draftArb(opIndex: number, mutated: 'never' | 'always' | 'half'): fc.Arbitrary<Draft> {
  const key = `${opIndex}:${mutated}`;
  let arb = draftArbs.get(key);
  if (!arb) {
    arb = buildDraftArb(opIndex, mutated);
    draftArbs.set(key, arb);
  }
  return arb;
}

function buildDraftArb(opIndex: number, mutated: 'never' | 'always' | 'half'): fc.Arbitrary<Draft> {
  const op = operations[opIndex]!;
  const mutations =
    mutated === 'never'
      ? fc.constant<Mutation[]>([])
      : mutated === 'always'
        ? fc.array(mutationArb(op), { minLength: 1, maxLength: 3 })
        : fc.oneof(fc.constant<Mutation[]>([]), fc.array(mutationArb(op), { minLength: 1, maxLength: 3 }));
  return fc.record({
    op: fc.constant(opIndex),
    key: keyArb,
    auth: fc.nat(AUTH_VARIANTS.length - 1),
    params: validValueArb(op.params, context) as fc.Arbitrary<Record<string, unknown>>,
    query: validValueArb(op.query, context) as fc.Arbitrary<Record<string, unknown>>,
    body: validValueArb(op.body, context) as fc.Arbitrary<Record<string, unknown>>,
    empty: fc.constantFrom<Draft['empty']>('none', 'object', 'length0'),
    idempotencyKey: op.method === 'POST' ? fc.option(idempotencyKeyArb, { freq: 2 }) : fc.option(idempotencyKeyArb, { freq: 10, nil: null }).map((k) => k ?? null),
    mutations,
    solo: fc.nat(3).map((n) => n === 0),
  });
}

const READS = operations.map((op, i) => [op, i] as const).filter(([op]) => op.method === 'GET').map(([, i]) => i);
const WRITES = operations.map((op, i) => [op, i] as const).filter(([op]) => op.method === 'POST').map(([, i]) => i);

interface Batch {
  kind: 'mixed' | 'refusal';
  drafts: Draft[];
}

/** Mixed batches (every operation, half mutated) and batches of writes built to be refused (checked with the books' counts around them). */
const batchArb: fc.Arbitrary<Batch> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(fc.nat(operations.length - 1).chain((i) => draftArb(i, 'half')), { minLength: BATCH, maxLength: BATCH })
      .map((drafts) => ({ kind: 'mixed' as const, drafts })),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(
        fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...WRITES).chain((i) => draftArb(i, 'always')) },
          { weight: 1, arbitrary: fc.constantFrom(...READS).chain((i) => draftArb(i, 'always')) },
        ),
        { minLength: BATCH, maxLength: BATCH },
      )
      .map((drafts) => ({ kind: 'refusal' as const, drafts })),
  },
);

// ---------------------------------------------------------------------------------------------
// From draft to bytes

const GZIP_BOMB = gzipSync(Buffer.from(`{${' '.repeat(2 * MAX_BODY_BYTES)}}`));

/** A uuid no record has, from `index`. */
const unknownUuid = (index: number) => `00000000-0000-4000-8000-${(index % 0xffffffffffff).toString(16).padStart(12, '0')}`;

interface Materialized {
  wire: WireRequest;
  /** The operation the draft was drawn for. */
  drafted: Operation;
  label: KeyLabel;
  /** What the pipeline must do with it (worked out when first asked: most answers never need it). */
  readonly prediction: Prediction;
}

function materialize(world: World, sender: WireSender, draft: Draft): Materialized {
  const op = operations[draft.op]!;
  const scopeLabel: KeyLabel = draft.key === 'none' || draft.key === 'garbage' || draft.key === 'revoked' || draft.key === 'noAccess' ? 'rwAll' : draft.key;
  const scope = world.scopes.get(world.keys[scopeLabel as keyof World['keys']])!;

  // The business the request is about: the entityId it names, else the key's first.
  const entityRef = (draft.body.entityId ?? draft.query.entityId) as IdRef | undefined;
  const entity = entityRef instanceof IdRef ? pickId(world, scope, scope.reach[0]!, entityRef, op) : scope.reach[0]!;
  const targetBusiness = world.owners.get(entity)?.business ?? scope.reach[0]!;
  const resolve = (ref: IdRef | CursorRef) => (ref instanceof CursorRef ? pickCursor(world, ref) : ref.field === 'entityId' ? entity : pickId(world, scope, targetBusiness, ref, op));
  const params = resolveRefs(draft.params, resolve) as Record<string, unknown>;
  const query = (followedCursor(world, op, draft.query) ?? resolveRefs(draft.query, resolve)) as Record<string, unknown>;
  let body: unknown = resolveRefs(draft.body, resolve);

  // The body.
  let text: string | null = null;
  for (const m of draft.mutations) {
    if (m.kind === 'body.set') body = setPath(body, m.path, m.value);
    else if (m.kind === 'body.delete') body = deletePath(body, m.path);
    else if (m.kind === 'body.replace') body = m.value;
    else if (m.kind === 'body.duplicate' && isObject(body)) {
      const entries = Object.entries(body).filter(([k]) => k !== m.name);
      const valid = Object.hasOwn(body, m.name) ? body[m.name] : 'x';
      body = new JsonEntries([...entries, ...(m.validLast ? [[m.name, m.value] as const, [m.name, valid] as const] : [[m.name, valid] as const, [m.name, m.value] as const])]);
    } else if (m.kind === 'body.text') text = m.text;
  }
  const saysSomething = (isObject(body) && Object.keys(body).length > 0) || !isObject(body) || text !== null;
  const bodyMutated = draft.mutations.some((m) => m.kind.startsWith('body.') || m.kind === 'content-type' || m.kind === 'content-encoding');
  const sendBody = bodyMutated || (op.method === 'POST' && (saysSomething || draft.empty === 'object'));
  let payload: Buffer | null = null;
  if (sendBody) {
    const size = draft.mutations.find((m) => m.kind === 'body.size') as { bytes: number } | undefined;
    if (size && text === null && isObject(body) && jsonText(body).length < size.bytes) payload = paddedJsonObject(body, size.bytes);
    else payload = Buffer.from(text ?? jsonText(body), 'utf8');
    for (const m of draft.mutations) {
      if (m.kind === 'body.bad-utf8') {
        const at = Math.floor(m.at * payload.length);
        payload = Buffer.concat([payload.subarray(0, at), Buffer.from(m.bytes), payload.subarray(at)]);
      } else if (m.kind === 'body.bom') payload = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), payload]);
    }
  }

  // The target: path, then query.
  let path = op.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const mutatedParam = draft.mutations.find((m) => m.kind === 'path.param') as { value: string } | undefined;
    return mutatedParam ? mutatedParam.value : encodeURIComponent(String(params[name] ?? ''));
  });
  path = `/api/v1${path}`;
  for (const m of draft.mutations) if (m.kind === 'path.shape') path = reshape(path, m.shape, m.seed);
  const pairs = Object.entries(query).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(queryText(value))}`);
  for (const m of draft.mutations) {
    if (m.kind === 'query.add') pairs.push(m.pair);
    else if (m.kind === 'query.set') {
      const index = pairs.findIndex((p) => p.startsWith(`${encodeURIComponent(m.name)}=`));
      const pair = `${encodeURIComponent(m.name)}=${encodeURIComponent(queryText(m.value).replace(/[\ud800-\udfff]/g, '?'))}`;
      if (index >= 0) pairs[index] = pair;
      else pairs.push(pair);
    }
  }
  const target = pairs.length > 0 ? `${path}?${pairs.join('&')}` : path;

  // Headers, in the order a client writes them.
  const method = (draft.mutations.find((m) => m.kind === 'method') as { value: string } | undefined)?.value ?? op.method;
  const headers: Array<[string, string]> = [];
  const dropped = new Set(draft.mutations.filter((m) => m.kind === 'header.drop').map((m) => (m as { name: string }).name));
  if (!dropped.has('host')) headers.push(['Host', sender.host]);
  const authorization =
    draft.key === 'none'
      ? null
      : draft.key === 'garbage'
        ? AUTH_VARIANTS[draft.auth % AUTH_VARIANTS.length]!(world.keys.rwAll)
        : `Bearer ${world.keys[draft.key as keyof World['keys']]}`;
  if (authorization !== null && !dropped.has('authorization')) headers.push(['Authorization', authorization]);
  const contentType = draft.mutations.find((m) => m.kind === 'content-type') as { value: string | null } | undefined;
  if (payload !== null && !dropped.has('content-type')) {
    if (!contentType) headers.push(['Content-Type', 'application/json']);
    else if (contentType.value !== null) headers.push(['Content-Type', contentType.value]);
  }
  const encoding = (draft.mutations.find((m) => m.kind === 'content-encoding') as { value: Encoding } | undefined)?.value;
  if (encoding && payload !== null) {
    headers.push(['Content-Encoding', encoding === 'gzip-plain' || encoding === 'gzip-bomb' ? 'gzip' : encoding]);
    if (encoding === 'gzip') payload = gzipSync(payload);
    else if (encoding === 'deflate') payload = deflateSync(payload);
    else if (encoding === 'br') payload = brotliCompressSync(payload);
    else if (encoding === 'gzip-bomb') payload = GZIP_BOMB;
    else if (encoding === 'gzip, gzip') payload = gzipSync(gzipSync(payload));
  }
  const idempotency = (draft.mutations.find((m) => m.kind === 'idempotency') as { value: string } | undefined)?.value ?? draft.idempotencyKey;
  if (idempotency !== null && !dropped.has('idempotency-key')) headers.push(['Idempotency-Key', idempotency]);
  for (const m of draft.mutations) {
    if (m.kind === 'header.double') headers.push([titleCase(m.name), m.name === 'host' ? sender.host : m.value]);
    else if (m.kind === 'header.add') headers.push([m.name, m.value]);
  }

  // Framing.
  const framing = (draft.mutations.find((m) => m.kind === 'framing') as { value: Framing } | undefined)?.value ?? 'length';
  let raw = false;
  let chunkedBody = false;
  let trailing: Buffer | undefined;
  let malformed: string | undefined;
  if (payload === null && op.method === 'POST' && draft.empty === 'length0' && framing === 'length') headers.push(['Content-Length', '0']);
  if (payload !== null) {
    switch (framing) {
      case 'length':
        headers.push(['Content-Length', String(payload.length)]);
        break;
      case 'chunked':
        chunkedBody = true;
        headers.push(['Transfer-Encoding', 'chunked']);
        break;
      case 'no-length':
        raw = true;
        trailing = payload;
        payload = null;
        break;
      case 'short-length': {
        raw = true;
        const declared = Math.max(0, payload.length - 1 - (payload.length % 5));
        headers.push(['Content-Length', String(declared)]);
        trailing = payload.subarray(declared);
        payload = payload.subarray(0, declared);
        break;
      }
      case 'double-length':
        raw = true;
        headers.push(['Content-Length', String(payload.length)], ['Content-Length', String(payload.length)]);
        break;
      case 'te-and-cl':
        raw = true;
        chunkedBody = true;
        malformed = 'Content-Length and Transfer-Encoding: chunked';
        headers.push(['Content-Length', String(payload.length)], ['Transfer-Encoding', 'chunked']);
        break;
      case 'bad-chunk':
        raw = true;
        malformed = 'chunk sizes that are not hexadecimal';
        headers.push(['Transfer-Encoding', 'chunked']);
        payload = Buffer.concat([Buffer.from(`zz\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]);
        break;
      case 'length-not-a-number':
        raw = true;
        malformed = 'Content-Length not a number';
        headers.push(['Content-Length', `${payload.length}abc`]);
        break;
      case 'declared-huge':
        raw = true;
        headers.push(['Content-Length', String(MAX_BODY_BYTES * 2)]);
        break;
    }
  }
  // A line break inside the request line or a header could split it into more than one request: those get a connection of their own.
  raw ||= /[\r\n]/.test(target) || headers.some(([name, value]) => /[\r\n]/.test(name) || /[\r\n]/.test(value));
  let sentMethod = method;
  if (raw) {
    // sendRaw reads neither an answer to HEAD (a Content-Length and no body) nor an interim 100 Continue: over a raw socket, neither is asked for.
    if (method === 'HEAD') sentMethod = op.method;
    for (let i = headers.length - 1; i >= 0; i--) if (headers[i]![0].toLowerCase() === 'expect') headers.splice(i, 1);
    // sendRaw always writes a Host line: say so.
    if (!headers.some(([name]) => name.toLowerCase() === 'host')) headers.unshift(['Host', sender.host]);
  }
  const wire: WireRequest = { method: sentMethod, target, headers, body: payload, chunked: chunkedBody, raw, ...(malformed ? { malformed } : {}), ...(trailing ? { trailing } : {}) };
  let prediction: Prediction | undefined;
  return {
    wire,
    drafted: op,
    label: draft.key,
    get prediction() {
      return (prediction ??= predict(wire, operations, world.scopes));
    },
  };
}

function titleCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

function queryText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof RawJson) return value.text;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return jsonText(value);
}

function reshape(path: string, shape: PathShape, seed: number): string {
  switch (shape) {
    case 'trailing-slash':
      return `${path}/`;
    case 'double-slash':
      return path.replace('/api/v1/', '/api/v1//');
    case 'upper-case':
      return path.replace(/\/api\/v1\/([a-z])/, (_, c: string) => `/api/v1/${c.toUpperCase()}`);
    case 'prefix-case':
      return path.replace('/api/v1', seed % 2 === 0 ? '/API/v1' : '/api/V1');
    case 'dot-segment':
      return path.replace('/api/v1/', seed % 2 === 0 ? '/api/v1/./' : '/api/v1/x/../');
    case 'encoded-slashes':
      return `/api/v1/${path.slice('/api/v1/'.length).replace(/\//g, '%2F')}`;
    case 'extra-segment':
      return `${path}/${['x', 'send', 'accept', '%2e%2e', 'é'][seed % 5]}`;
    case 'overlong-segment':
      return `${path}/${'s'.repeat([300, 5_000, 20_000][seed % 3]!)}`;
    case 'unicode-segment':
      return `${path}/${['é', '😀', '\u202e', '\ufeff', '\u0000', ' '][seed % 6]}`;
    case 'nul-segment':
      return `${path}%00`;
    case 'double-encoded':
      return path.replace('/api/v1/', '/api/v1%252F');
    case 'matrix':
      return `${path};jsessionid=1`;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawJson) && !(value instanceof JsonEntries);
}

function setPath(value: unknown, path: string[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) {
    const copy = [...value];
    const index = Number(head);
    if (Number.isInteger(index)) copy[index] = setPath(copy[index], rest, leaf);
    return copy;
  }
  const base: Record<string, unknown> = isObject(value) ? { ...value } : {};
  if (head === '__proto__') Object.defineProperty(base, head, { value: setPath(undefined, rest, leaf), enumerable: true, writable: true, configurable: true });
  else base[head] = setPath(base[head], rest, leaf);
  return base;
}

function deletePath(value: unknown, path: string[]): unknown {
  if (path.length === 0 || !(isObject(value) || Array.isArray(value))) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) return value.map((item, i) => (String(i) === head ? deletePath(item, rest) : item));
  const copy = { ...value };
  if (rest.length === 0) delete copy[head];
  else copy[head] = deletePath(copy[head], rest);
  return copy;
}

/** The records a uuid field names: own and fitting mostly, then own but elsewhere, another account's, or none. */
function pickId(world: World, scope: KeyScope, business: string, ref: IdRef, op: Operation): string {
  const pools = (biz: string) => world.byBusiness.get(biz);
  const listFor = (biz: string, tenant: string): string[] => {
    const p = pools(biz);
    switch (ref.field) {
      case 'entityId':
        return world.businessesOf.get(tenant) ?? [];
      case 'customerId':
        return world.customersOf.get(tenant) ?? [];
      case 'vendorId':
        return world.vendorsOf.get(tenant) ?? [];
      case 'accountId':
        if (!p) return [];
        return op.id === 'invoices.create' ? p.revenueAccounts : op.id === 'expenses.create' || op.id === 'review.accept' ? p.expenseAccounts : p.accounts;
      case 'id':
        if (!p) return [];
        switch (op.id) {
          case 'transactions.get':
            return p.transactions;
          case 'invoices.send':
            return p.drafts.length > 0 ? p.drafts : p.invoices;
          case 'invoices.remind':
          case 'invoices.recordPayment':
            return p.sent.length > 0 ? p.sent : p.invoices;
          case 'review.accept':
            return p.pending.length > 0 ? p.pending : p.reviews;
          default:
            return p.invoices;
        }
      default:
        return [...world.owners.keys()];
    }
  };
  const pick = (list: readonly string[]) => (list.length === 0 ? unknownUuid(ref.index) : list[ref.index % list.length]!);
  const tenants = [...world.businessesOf.keys()];
  if (ref.choice < 70) {
    const biz = ref.field === 'id' ? scope.reach[ref.index % scope.reach.length]! : ref.field === 'entityId' ? scope.reach[ref.index % scope.reach.length]! : business;
    return ref.field === 'entityId' ? biz : pick(listFor(biz, scope.tenant));
  }
  if (ref.choice < 82) {
    const others = (world.businessesOf.get(scope.tenant) ?? []).filter((b) => !scope.reach.includes(b) || b !== business);
    const biz = others.length > 0 ? others[ref.index % others.length]! : business;
    return ref.field === 'entityId' ? biz : pick(listFor(biz, scope.tenant));
  }
  if (ref.choice < 94) {
    const foreign = tenants.filter((t) => t !== scope.tenant);
    const tenant = foreign[ref.index % foreign.length]!;
    const businesses = world.businessesOf.get(tenant) ?? [];
    const biz = businesses[ref.index % Math.max(1, businesses.length)] ?? business;
    return ref.field === 'entityId' ? biz : pick(listFor(biz, tenant));
  }
  const own = pick(listFor(business, scope.tenant));
  return [unknownUuid(ref.index), '00000000-0000-0000-0000-000000000000', own.toUpperCase(), `urn:uuid:${own}`, own.replace(/-/g, '')][ref.choice % 5]!;
}

/** A cursor field: text, or a nextCursor some list answered (for another list, or other filters). */
function pickCursor(world: World, ref: CursorRef): string {
  if (ref.index % 4 === 0 || world.cursors.length === 0) return ref.fallback;
  return world.cursors[ref.index % world.cursors.length]!.cursor;
}

/** Now and then a list request follows a nextCursor it was given: the same query, the next page. */
function followedCursor(world: World, op: Operation, query: Record<string, unknown>): Record<string, unknown> | null {
  const ref = query.cursor;
  if (!(ref instanceof CursorRef) || ref.index % 3 === 0) return null;
  const mine = world.cursors.filter((entry) => entry.op === op.id);
  if (mine.length === 0) return null;
  const entry = mine[ref.index % mine.length]!;
  return { ...entry.query, cursor: entry.cursor };
}

// ---------------------------------------------------------------------------------------------
// The run

interface Finding {
  signature: string;
  count: number;
  example: string;
}

interface Sent {
  m: Materialized;
  res: TestResponse;
}

describe('Fuzzing every operation with generated and mutated requests', function () {
  // 100,000 requests take about a minute here; the bound is for a slow machine.
  this.timeout(Math.max(120_000, REQUESTS * 4));

  let app: TestApp;
  let world: World;
  const violations: ReplyViolation[] = [];

  before(async () => {
    app = await startTestApp(START, {
      // No scheduled job may write to the books while a batch's row counts are compared.
      config: { jobOutbox: null, jobOverdue: null, jobHousekeeping: null },
      onReplyViolation: (violation) => violations.push(violation),
    });
    world = seedBooks(app);
    await seedRecords(world);
    // A small budget for one account, once its records are in: its 429s are part of the mix (each new failed-authentication window resets it too).
    setTenant(app, world.tenants.C.id, { rateLimit: { mode: 'custom', readsPerWindow: 40, writesPerWindow: 6 } });
    // And one account past due: whatever would post answers read_only_billing_state.
    setTenant(app, world.tenants.P.id, { billingState: 'past_due' });
    refreshPools(world);
  });
  after(async () => {
    await app?.close();
  });

  it(`answers ${REQUESTS} generated and mutated requests without a 5xx, outside the spec's error list, or a change from a refused write`, async () => {
    const sender = new WireSender(app.url);
    const counts = tableCounter(app.db);
    const findings = new Map<string, Finding>();
    const stats = {
      sent: 0,
      raw: 0,
      byStatus: new Map<number, number>(),
      byOperation: new Map<string, { total: number; ok: number; refused: number }>(),
      refusalBatches: 0,
      refusalChecked: 0,
      soloChecked: 0,
      windows: 0,
    };
    let authFailures = 0;
    const started = performance.now();
    const cpuAtStart = process.cpuUsage();

    /** One problem: counted under its signature, with the shortest request that showed it as the example (a poor man's shrinking). */
    const find = (signature: string, sent: Sent | null, detail: string) => {
      const example = sent
        ? `${detail}\n  drawn for ${sent.m.drafted.id} with key ${sent.m.label}; the model said: ${sent.m.prediction.refusal ?? 'may be accepted'}\n${describeRequest(sent.m.wire)}\n  answer: ${sent.res.status} ${JSON.stringify(sent.res.headers)}\n  ${sent.res.text.slice(0, 600)}`
        : detail;
      const known = findings.get(signature);
      if (!known) findings.set(signature, { signature, count: 1, example });
      else {
        known.count += 1;
        if (example.length < known.example.length) known.example = example;
      }
    };

    const send = async (m: Materialized): Promise<Sent | null> => {
      let res: TestResponse;
      try {
        res = await sender.send(m.wire);
      } catch (error) {
        find(`no answer: ${(error as Error).message.slice(0, 60)}`, null, `no answer (${(error as Error).message}) to\n${describeRequest(m.wire)}`);
        return null;
      }
      const sent: Sent = { m, res };
      record(sent);
      return sent;
    };

    const record = (sent: Sent) => {
      const { m, res } = sent;
      stats.sent += 1;
      if (m.wire.raw) stats.raw += 1;
      stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
      const opId = res.status < 300 ? (m.prediction.operation?.id ?? m.drafted.id) : m.drafted.id;
      const entry = stats.byOperation.get(opId) ?? { total: 0, ok: 0, refused: 0 };
      entry.total += 1;
      if (res.status < 300) entry.ok += 1;
      else entry.refused += 1;
      stats.byOperation.set(opId, entry);
      if (res.status === 401 || (res.status === 429 && ['none', 'garbage', 'revoked', 'noAccess'].includes(m.label))) authFailures += 1;

      const api = m.wire.target.startsWith('/api/v1') || res.status === 422;
      const fieldPaths = { has: (path: string) => DECLARED_FIELDS.has(path) || DECLARED_FIELDS.has(normalizePath(path)) || m.prediction.sentPaths.has(path) };
      const problems = answerProblems(res, { api, head: m.wire.method === 'HEAD', fieldPaths });
      if (problems.length > 0) {
        // The model's reason (what kind of request it was) splits one symptom by cause.
        const kind = (m.prediction.refusal ?? 'may be accepted').split(':')[0];
        find(`${res.status}: ${problems[0]!.replace(/"[^"]*"|[0-9a-f-]{36}/g, '…').slice(0, 100)} [${kind}${m.prediction.refusal?.startsWith('http') ? `: ${m.prediction.refusal.slice(6, 40)}` : ''}]`, sent, problems.join('; '));
      }
      // The server checks each reply against its operation's declaration just before writing it: a violation belongs to the next answer of that operation and status.
      const violation = violations.findIndex((v) => v.status === res.status && v.operationId === (m.prediction.operation?.id ?? m.drafted.id));
      if (violation >= 0) {
        const [v] = violations.splice(violation, 1);
        find(`reply broke its declaration: ${v!.operationId} ${v!.status}`, sent, `${v!.operationId} answered ${v!.status}: ${v!.problem}`);
      }
      if (m.wire.method === 'GET' && res.body?.error?.message?.startsWith('Idempotency-Key:')) find('a GET refused for its Idempotency-Key', sent, 'spec rule 6: an Idempotency-Key on a GET is ignored');
      if (res.status >= 200 && res.status < 300) {
        const { refusal } = m.prediction;
        if (refusal) find(`answered ${res.status} to a request the pipeline must refuse (${refusal.slice(0, 40)})`, sent, `must be refused: ${refusal}`);
        checkReach(sent);
        learn(sent);
      }
    };

    /** A success never names a record of another account, or of a business the key cannot reach. */
    const checkReach = (sent: Sent) => {
      const { prediction } = sent.m;
      const key = prediction.key;
      if (!key) {
        find('a success without a working key', sent, 'answered 2xx without a working key');
        return;
      }
      const reachable = (id: string) => {
        const owner = world.owners.get(id);
        return !owner || (owner.tenant === key.tenant && (owner.business === null || key.reach.includes(owner.business)));
      };
      for (const id of uuidsIn(sent.res.text)) {
        if (!reachable(id)) find(`a ${prediction.operation?.id} success shows another account's or business's record`, sent, `the answer holds ${id}, owned by ${JSON.stringify(world.owners.get(id))}`);
      }
      const op = prediction.operation;
      if (!op) return;
      const named = [...Object.values(prediction.params ?? {}), ...(op.method === 'POST' ? uuidsIn(JSON.stringify(prediction.body ?? {})) : []), ...(prediction.query?.entityId ? [prediction.query.entityId] : [])];
      for (const id of named.map((v) => String(v).toLowerCase())) {
        if (!reachable(id)) find(`${op.id} succeeded on another account's or business's record`, sent, `the request names ${id}, owned by ${JSON.stringify(world.owners.get(id))}`);
      }
      if (op.method === 'POST') {
        const businesses = new Set(named.map((id) => world.owners.get(id.toLowerCase())?.business).filter((b): b is string => typeof b === 'string'));
        if (businesses.size > 1) find(`${op.id} succeeded across businesses`, sent, `the request names records of ${[...businesses].join(' and ')}`);
      }
    };

    /** Cursors feed later requests (new records come in with refreshPools). */
    const learn = (sent: Sent) => {
      const cursor = sent.res.body?.nextCursor;
      const { operation, query } = sent.m.prediction;
      if (typeof cursor === 'string' && operation && query) {
        const entry = { op: operation.id, query: Object.fromEntries(Object.entries(query).filter(([name]) => name !== 'cursor')), cursor };
        if (world.cursors.length < 1000) world.cursors.push(entry);
        else world.cursors[stats.sent % world.cursors.length] = entry;
      }
    };

    const fast = async (ms: Materialized[]) => (await inParallel(ms, IN_FLIGHT, send)).filter((s): s is Sent => s !== null);

    /** Writes the pipeline must refuse, all at once: not one row may change, nor may the connection write anything. */
    const refusalBatch = async (ms: Materialized[]) => {
      stats.refusalBatches += 1;
      const before = counts();
      const changesBefore = totalChanges(app.db);
      const answered = await fast(ms);
      const after = counts();
      const changed = countDifferences(before, after);
      const writesDuringBatch = totalChanges(app.db) - changesBefore;
      stats.refusalChecked += answered.length;
      for (const sent of answered) {
        if (sent.res.status < 300) find('a request built to be refused was answered 2xx', sent, `refusal batch: the model said ${sent.m.prediction.refusal}`);
      }
      if (changed.length > 0 || writesDuringBatch > 0) {
        find(
          'refused requests changed the books',
          null,
          `a batch of ${answered.length} refused requests changed ${changed.join(', ') || `${writesDuringBatch} rows (total_changes)`}; the batch:\n${answered
            .filter((s) => s.m.wire.method === 'POST')
            .map((s) => `${describeRequest(s.m.wire)}\n  answer: ${s.res.status} ${s.res.text.slice(0, 200)}`)
            .join('\n')}`,
        );
      }
    };

    /** One write alone: refused (or replayed), it changes no row count; done, it appends its audit row. */
    const soloWrite = async (m: Materialized) => {
      const before = counts();
      const sent = await send(m);
      if (!sent) return;
      stats.soloChecked += 1;
      const changed = countDifferences(before, counts());
      const replayed = sent.res.headers['idempotent-replayed'] === 'true';
      if ((sent.res.status >= 400 || replayed) && changed.length > 0) {
        find(`a ${replayed ? 'replayed' : 'refused'} ${sent.m.drafted.id} changed the books`, sent, `row counts changed: ${changed.join(', ')}`);
      }
      if (sent.res.status < 300 && !replayed && sent.m.prediction.operation?.method === 'POST' && !changed.some((c) => c.startsWith('audit_log '))) {
        find(`a ${sent.m.drafted.id} success appended no audit row`, sent, `row counts changed: ${changed.join(', ') || 'none'}`);
      }
    };

    const runBatch = async (batch: Batch, run: number) => {
      if (run % 40 === 0) refreshPools(world);
      const ms = batch.drafts.map((draft) => materialize(world, sender, draft));
      if (batch.kind === 'refusal') {
        const sure = ms.filter((m) => m.prediction.refusal !== null);
        await refusalBatch(sure);
        await fast(ms.filter((m) => !sure.includes(m)));
      } else {
        const alone = ms.filter((m, i) => batch.drafts[i]!.solo && m.drafted.method === 'POST' && m.wire.method === 'POST');
        for (const m of alone) await soloWrite(m);
        await fast(ms.filter((m) => !alone.includes(m)));
      }
      for (const v of violations.splice(0)) find(`reply broke its declaration: ${v.operationId} ${v.status}`, null, `${v.operationId} answered ${v.status}: ${v.problem} (a request of batch ${run})`);
      // A new failed-authentication window once this one has been used up (and a few 429s seen).
      if (authFailures >= AUTH_FAILURES_BEFORE_NEW_WINDOW) {
        app.clock.advanceMs(WINDOW_MS + 1);
        authFailures = 0;
        stats.windows += 1;
      }
      if (findings.size >= 40) throw new Error('too many distinct problems: stopping early');
    };

    let run = 0;
    const details = await fc.check(
      fc.asyncProperty(batchArb, async (batch) => {
        await runBatch(batch, run++);
      }),
      { seed: SEED, numRuns: Math.ceil(REQUESTS / BATCH), endOnFailure: true },
    );
    sender.destroy();

    // The process still serves, and the books can still take a write.
    const health = await fetch(`${app.url}/healthz`);
    const healthBody = (await health.json()) as { ok: boolean };
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuAtStart);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const histogram = [...stats.byStatus.entries()].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', ');
    const byOperation = [...stats.byOperation.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, s]) => `${id} ${s.total} (${s.ok} ok)`)
      .join(', ');
    console.log(
      `\n  fuzz: seed ${SEED} (FUZZ_SEED), ${stats.sent} requests (FUZZ_REQUESTS ${REQUESTS}) in ${seconds.toFixed(1)} s (${cpuSeconds.toFixed(1)} s of CPU), ${Math.round(stats.sent / seconds)}/s; ` +
        `${stats.raw} over fresh raw sockets\n` +
        `  refused writes checked against the books: ${stats.refusalChecked} in ${stats.refusalBatches} batches, ${stats.soloChecked} writes alone; ${stats.windows} failed-authentication windows\n` +
        `  by status: ${histogram}\n  by operation: ${byOperation}`,
    );

    const problems = [...findings.values()].map((f) => `--- ${f.signature} (${f.count}x)\n${f.example}`);
    if (details.failed) problems.unshift(`fast-check stopped (seed ${SEED}, path ${details.counterexamplePath}): ${String(details.errorInstance)}`);
    expect(problems.length, `fuzzing with seed ${SEED} found ${problems.length} distinct problems:\n${problems.join('\n')}\n`).to.equal(0);
    expect(health.status, 'GET /healthz after the run').to.equal(200);
    expect(healthBody.ok).to.equal(true);
    expect(stats.sent, 'requests answered').to.be.at.least(REQUESTS);
    if (REQUESTS >= 20_000) {
      const neverServed = operations.filter((op) => (stats.byOperation.get(op.id)?.ok ?? 0) === 0).map((op) => op.id);
      expect(neverServed, 'operations that never answered 2xx: the generator no longer reaches them').to.deep.equal([]);
    }
  });
});
