import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { operations } from '../../src/api/v1/index.js';
import { buildApp } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { defineCommand } from '../../src/door/door.js';
import { OPERATION_IDS } from '../../src/api/v1/operation-ids.js';
import { defineRead, defineWrite, type Operation } from '../../src/http/operation.js';
import { isPermission } from '../../src/http/permissions.js';
import { precompile } from '../../src/http/validate.js';
import { createLogger } from '../../src/log.js';
import { recordAudit } from '../../src/store/audit.js';
import { Strict, Uuid } from '../../src/api/schemas/common.js';
import { freshDb, type TempDb } from '../support/db.js';

const good = defineRead({
  id: 'transactions.get',
  method: 'GET',
  path: '/things/:id',
  permission: 'transactions:read',
  summary: 'a thing',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({}),
  responses: { 200: { description: 'ok', schema: Strict({}) } },
  errors: [],
  handle: () => ({ status: 200, body: {} }),
});

const goodWrite = defineWrite({
  id: 'expenses.create',
  method: 'POST',
  path: '/things',
  permission: 'expenses:write',
  summary: 'make a thing',
  params: Strict({}),
  query: Strict({}),
  body: Strict({}),
  responses: { 201: { description: 'made', schema: Strict({}) } },
  errors: [],
  command: defineCommand({
    name: 'probe.thing',
    scope: (input: { tenantId: string }) => ({ account: input.tenantId }),
    run: ({ db, clock, actor }, input) => recordAudit(db, clock, actor, { tenantId: input.tenantId, action: 'probe.thing' }),
  }),
  input: ({ principal }) => ({ tenantId: principal.tenant.id }),
  reply: () => ({ status: 201, body: {} }),
});

describe('operation declarations (checked at start-up)', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  const start = (served: readonly Operation[]) => {
    const app = buildApp({
      db: temp.db,
      clock: fixedClock('2026-03-15T12:00:00Z'),
      config: loadConfig({}, { db: temp.path, logLevel: 'silent' }),
      log: createLogger('silent'),
      operations: served,
    });
    app.close();
  };

  it('every published operation has a spec operation id and a known permission', () => {
    for (const operation of operations) {
      expect(OPERATION_IDS).to.include(operation.id);
      expect(isPermission(operation.permission), operation.id).to.equal(true);
    }
    expect(new Set(operations.map((op) => op.id)).size).to.equal(operations.length);
  });

  it("compiles every published operation's input and response schemas under the validator's strict settings", () => {
    let compiled = 0;
    for (const operation of operations) {
      for (const schema of [operation.params, operation.query, operation.body, ...Object.values(operation.responses).map((response) => response.schema)]) {
        expect(() => precompile(schema), operation.id).not.to.throw();
        compiled += 1;
      }
    }
    expect(compiled).to.be.at.least(operations.length * 4);
  });

  it('starts with a well-declared operation', () => {
    expect(() => start([good])).not.to.throw();
  });

  const broken: Array<[string, Partial<Operation>, RegExp]> = [
    ['no permission', { permission: undefined as never }, /declares no valid permission/],
    ['an unknown permission', { permission: 'ledger:write' as never }, /declares no valid permission/],
    ['an operation id outside the spec', { id: 'things.get' as never }, /unknown operation id/],
    ['a method other than GET or POST', { method: 'DELETE' as never }, /only GET and POST/],
    ['a body schema that accepts unknown fields', { body: Type.Object({}) }, /must refuse unknown fields/],
    ['path parameters that differ from the params schema', { params: Strict({ thingId: Uuid }) }, /path parameters/],
    ['no declared response', { responses: {} }, /declares no response/],
    ['a response without a schema', { responses: { 200: { description: 'ok' } } as never }, /needs a 2xx status and a schema/],
    ['an error status declared as a response', { responses: { 404: { description: 'gone', schema: Strict({}) } } }, /needs a 2xx status/],
    ['a GET without handle()', { handle: undefined as never }, /a GET needs handle\(\)/],
    [
      'a response object that accepts undeclared fields',
      { responses: { 200: { description: 'ok', schema: Strict({ items: Type.Array(Type.Object({ id: Uuid })) }) } } },
      /response 200 must say exactly what it holds, but body\.items\.items accepts fields it does not declare/,
    ],
    ['a response with an untyped value', { responses: { 200: { description: 'ok', schema: Strict({ anything: Type.Any() }) } } }, /body\.anything has no type/],
    ['an object as a query parameter', { query: Strict({ filter: Type.Optional(Strict({ a: Type.String() })) }) }, /query parameter filter must be a string, a bounded integer/],
    ['a union as a query parameter', { query: Strict({ when: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) }) }, /query parameter when must be a string/],
    ['an integer query parameter without bounds', { query: Strict({ page: Type.Optional(Type.Integer({ minimum: 1 })) }) }, /query parameter page must declare its minimum and maximum/],
  ];
  for (const [label, change, message] of broken) {
    it(`refuses to start with ${label}`, () => {
      expect(() => start([{ ...good, ...change } as Operation])).to.throw(message);
    });
  }

  it('starts with a well-declared write', () => {
    expect(() => start([goodWrite])).not.to.throw();
  });

  it('refuses to start with a POST that has no command for the write door (a POST cannot bypass it)', () => {
    const bypass = { ...goodWrite, command: undefined, handle: () => ({ status: 201, body: {} }) } as unknown as Operation;
    expect(() => start([bypass])).to.throw(/a POST needs a command \(the write door runs it\), input\(\) and reply\(\)/);
  });

  it('refuses to start with the same operation declared twice', () => {
    expect(() => start([good, good])).to.throw(/declared twice/);
  });
});
