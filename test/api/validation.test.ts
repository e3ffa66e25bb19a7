import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { defineCommand } from '../../src/door/door.js';
import { ApiError } from '../../src/errors.js';
import { defineRead, defineWrite } from '../../src/http/operation.js';
import type { ReplyViolation } from '../../src/http/reply-check.js';
import { BooleanParam, LimitParam, Money, Nullable, SignedMoney, Strict, StringEnum, Uuid } from '../../src/api/schemas/common.js';
import { schemaProblem } from '../../src/http/validate.js';
import { sendRequest, startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { documentCheckFor } from '../support/document-check.js';
import { type ApiTenant, buildApiTenant, expectError, expectInvalid } from '../support/api.js';
import { auditProbe } from '../support/probes.js';

/**
 * Input and reply schemas through the real pipeline: query parameters get their real types
 * (integers and booleans read from their exact text), bodies are never coerced, enums are
 * plain string enums, a nested field is named by its path, and every reply is held to the
 * schema its operation declares.
 */

/** GET /probe/echo?limit&includeArchived&status: echoes the typed query. */
const echoProbe = defineRead({
  id: 'customers.list',
  method: 'GET',
  path: '/probe/echo',
  permission: 'customers:read',
  summary: 'probe: echo the typed query',
  params: Strict({}),
  query: Strict({
    limit: Type.Optional(LimitParam),
    includeArchived: Type.Optional(BooleanParam),
    status: Type.Optional(StringEnum(['pending', 'accepted'])),
    rate: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
  }),
  body: Strict({}),
  responses: {
    200: {
      description: 'the query as the handler sees it',
      schema: Strict({
        limit: Nullable(Type.Integer()),
        includeArchived: Nullable(Type.Boolean()),
        status: Nullable(Type.String()),
        rate: Nullable(Type.Number()),
      }),
    },
  },
  errors: [],
  handle: ({ query }) => ({
    status: 200,
    body: { limit: query.limit ?? null, includeArchived: query.includeArchived ?? null, status: query.status ?? null, rate: query.rate ?? null },
  }),
});

/** POST /probe/lines {count?, lines[]}: a nested body, never coerced. */
const linesProbe = defineWrite({
  id: 'invoices.create',
  method: 'POST',
  path: '/probe/lines',
  permission: 'invoices:write',
  summary: 'probe: a nested body',
  params: Strict({}),
  query: Strict({}),
  body: Strict({
    count: Type.Optional(Type.Integer()),
    ownerId: Type.Optional(Nullable(Uuid)),
    lines: Type.Array(Strict({ description: Type.String(), quantity: Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,6})?$', 'x-error': 'must be a number with up to 6 decimals' }) }), { minItems: 1 }),
  }),
  responses: { 201: { description: 'accepted', schema: Strict({ lines: Type.Integer(), ownerId: Nullable(Uuid) }) } },
  errors: [],
  command: defineCommand({
    name: 'probe.lines',
    scope: (input: { tenantId: string; lines: number; ownerId: string | null }) => ({ account: input.tenantId }),
    run: (context, input) => {
      auditProbe(context);
      return { lines: input.lines, ownerId: input.ownerId };
    },
  }),
  input: ({ principal, body }) => ({ tenantId: principal.tenant.id, lines: body.lines.length, ownerId: body.ownerId ?? null }),
  reply: (result) => ({ status: 201, body: result }),
});

/** GET /probe/drift?kind=...: replies that break the declared contract in one way each. */
const driftProbe = defineRead({
  id: 'vendors.list',
  method: 'GET',
  path: '/probe/drift',
  permission: 'vendors:read',
  summary: 'probe: replies that drift from the declaration',
  params: Strict({}),
  query: Strict({ kind: StringEnum(['ok', 'extra-field', 'wrong-type', 'undeclared-status', 'undeclared-code', 'declared-code', 'fault']) }),
  body: Strict({}),
  responses: { 200: { description: 'ok', schema: Strict({ name: Type.String() }) } },
  errors: ['not_found'],
  handle({ query }) {
    switch (query.kind) {
      case 'ok':
        return { status: 200, body: { name: 'fine' } };
      case 'extra-field':
        return { status: 200, body: { name: 'fine', secret: 'leaked' } as { name: string } };
      case 'wrong-type':
        return { status: 200, body: { name: 42 as unknown as string } };
      case 'undeclared-status':
        return { status: 203 as 200, body: { name: 'fine' } };
      case 'undeclared-code':
        throw new ApiError('conflict', 'a GET has no conflict to report');
      case 'declared-code':
        throw new ApiError('not_found', 'No such thing.');
      case 'fault':
        throw new Error('a bug');
    }
  },
});

describe('Input and reply schemas', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  const violations: ReplyViolation[] = [];

  before(async () => {
    app = await startTestApp(undefined, {
      operations: [echoProbe, linesProbe, driftProbe],
      onReplyViolation: (violation) => violations.push(violation),
    });
    tenant = buildApiTenant(app);
  });
  after(async () => {
    await app.close();
  });

  const echo = (query: string) => app.get(`/api/v1/probe/echo?${query}`, tenant.key);

  describe('query parameters have their real types (coerced from the query string only)', () => {
    it('reads limit as an integer and includeArchived as a boolean', async () => {
      const res = await echo('limit=20&includeArchived=true');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ limit: 20, includeArchived: true, status: null, rate: null });
      expect((await echo('includeArchived=false')).body.includeArchived).to.equal(false);
    });

    it('accepts limit at both ends of 1 to 100', async () => {
      expect((await echo('limit=1')).body.limit).to.equal(1);
      expect((await echo('limit=100')).body.limit).to.equal(100);
    });

    const badLimits: Array<[string, string]> = [
      ['abc', 'limit: must be an integer'],
      ['1.5', 'limit: must be an integer'],
      ['+5', 'limit: must be an integer'],
      ['05', 'limit: must be an integer'],
      ['', 'limit: must be an integer'],
      ['1e2', 'limit: must be an integer'],
      ['0x10', 'limit: must be an integer'],
      ['0', 'limit: must be at least 1'],
      ['-0', 'limit: must be at least 1'],
      ['10000000000000000', 'limit: must be at most 100'],
      ['-3', 'limit: must be at least 1'],
      ['101', 'limit: must be at most 100'],
    ];
    for (const [text, message] of badLimits) {
      it(`refuses limit=${text} (422 "${message}")`, async () => {
        const res = await echo(`limit=${encodeURIComponent(text)}`);
        expectInvalid(res, 'limit');
        expect(res.body.error.message).to.equal(message);
      });
    }

    for (const text of ['1', 'TRUE', 'yes', '']) {
      it(`refuses includeArchived=${text} (422 "includeArchived: must be true or false")`, async () => {
        const res = await echo(`includeArchived=${text}`);
        expectInvalid(res, 'includeArchived');
        expect(res.body.error.message).to.equal('includeArchived: must be true or false');
      });
    }

    it('reads a number parameter from its plain decimal text', async () => {
      expect((await echo('rate=2.5')).body.rate).to.equal(2.5);
      expectInvalid(await echo('rate=2.'), 'rate');
      expectInvalid(await echo('rate=1e1'), 'rate');
      expect((await echo('rate=11')).body.error.message).to.equal('rate: must be at most 10');
    });

    it('names the allowed values of an enum (422 "status: must be one of pending, accepted")', async () => {
      const res = await echo('status=archived');
      expectInvalid(res, 'status');
      expect(res.body.error.message).to.equal('status: must be one of pending, accepted');
    });
  });

  describe('bodies are never coerced', () => {
    it('refuses a digit string where the body wants an integer (422 "count: must be an integer")', async () => {
      const res = await app.post('/api/v1/probe/lines', tenant.key, { count: '5', lines: [{ description: 'a', quantity: '1' }] });
      expectInvalid(res, 'count');
      expect(res.body.error.message).to.equal('count: must be an integer');
    });

  });

  describe('ids are case-insensitive on input', () => {
    it('lower-cases a uuid inside a nullable field, as everywhere else', async () => {
      const res = await app.post('/api/v1/probe/lines', tenant.key, { ownerId: 'C0FFEE00-AAAA-4BBB-8CCC-0123456789AB', lines: [{ description: 'a', quantity: '1' }] });
      expect(res.status).to.equal(201);
      expect(res.body.ownerId).to.equal('c0ffee00-aaaa-4bbb-8ccc-0123456789ab');
      const none = await app.post('/api/v1/probe/lines', tenant.key, { ownerId: null, lines: [{ description: 'a', quantity: '1' }] });
      expect(none.body.ownerId).to.equal(null);
    });
  });

  describe('a nested field is named by its path (errors rule 2)', () => {
    it('names lines.0.quantity when the first line\'s quantity is wrong', async () => {
      const res = await app.post('/api/v1/probe/lines', tenant.key, { lines: [{ description: 'Consulting', quantity: '1,5' }] });
      expectInvalid(res, 'lines.0.quantity');
      expect(res.body.error.message).to.equal('lines.0.quantity: must be a number with up to 6 decimals');
    });

    it('names lines.2.quantity for the third line, and lines.1.description when it is missing', async () => {
      const good = { description: 'ok', quantity: '2' };
      expectInvalid(await app.post('/api/v1/probe/lines', tenant.key, { lines: [good, good, { description: 'x', quantity: 3 }] }), 'lines.2.quantity');
      expectInvalid(await app.post('/api/v1/probe/lines', tenant.key, { lines: [good, { quantity: '1' }] }), 'lines.1.description');
    });

    it('names an unknown field inside a line by its path', async () => {
      const res = await app.post('/api/v1/probe/lines', tenant.key, { lines: [{ description: 'a', quantity: '1', colour: 'red' }] });
      expectInvalid(res, 'lines.0.colour');
      expect(res.body.error.message).to.equal('lines.0.colour: is not a recognized field');
    });
  });

  describe('every reply is held to its declaration', () => {
    beforeEach(() => {
      violations.length = 0;
    });

    // A drifting reply would fail app.get itself (it also holds each reply to the published
    // document), so these go around it, and the test asks the document check what it sees.
    const drift = async (kind: string): Promise<{ res: TestResponse; documentProblem: string | null }> => {
      const path = `/api/v1/probe/drift?kind=${kind}`;
      const res = await sendRequest(app.url, 'GET', path, { key: tenant.key });
      const document = (await sendRequest(app.url, 'GET', '/openapi/v1.json')).body;
      return { res, documentProblem: documentCheckFor(document).problem('GET', path, res) };
    };

    it('reports nothing for a reply that matches', async () => {
      expect((await app.get('/api/v1/probe/drift?kind=ok', tenant.key)).status).to.equal(200);
      expect(violations).to.deep.equal([]);
    });

    const drifts: Array<[string, number, RegExp]> = [
      ['extra-field', 200, /does not match the declared schema: secret: is not a recognized field/],
      ['wrong-type', 200, /does not match the declared schema: name: must be a string/],
      ['undeclared-status', 203, /status 203 is not declared/],
    ];
    for (const [kind, status, problem] of drifts) {
      it(`reports a reply with ${kind.replace('-', ' ')}`, async () => {
        const { res, documentProblem } = await drift(kind);
        expect(res.status).to.equal(status);
        expect(documentProblem).to.be.a('string');
        expect(violations).to.have.lengthOf(1);
        expect(violations[0]).to.include({ operationId: 'vendors.list', status });
        expect(violations[0]!.problem).to.match(problem);
      });
    }

    it('reports an error code the operation does not declare', async () => {
      const { res, documentProblem } = await drift('undeclared-code');
      expectError(res, 409, 'conflict');
      expect(documentProblem).to.match(/409, a status the document does not declare/);
      expect(violations).to.have.lengthOf(1);
      expect(violations[0]).to.deep.equal({ operationId: 'vendors.list', status: 409, problem: 'error code conflict is not declared' });
    });

    it('lets a declared error code and the common ones through', async () => {
      expectError(await app.get('/api/v1/probe/drift?kind=declared-code', tenant.key), 404, 'not_found');
      expectError(await app.get('/api/v1/probe/drift?kind=bogus', tenant.key), 422, 'validation_failed');
      expectError(await app.allowingFaults(() => app.get('/api/v1/probe/drift?kind=fault', tenant.key)), 500, 'internal_error');
      expect(violations).to.deep.equal([]);
    });
  });
});

describe('Schema building blocks', () => {
  it('StringEnum emits a plain string enum, not an anyOf of consts', () => {
    expect(JSON.parse(JSON.stringify(StringEnum(['a', 'b'], { description: 'd' })))).to.deep.equal({ type: 'string', enum: ['a', 'b'], description: 'd' });
  });

  it('Money refuses negative cents; SignedMoney (report figures only) accepts them', () => {
    const negative = { cents: '-123', formatted: '-$1.23', currency: 'USD' };
    expect(schemaProblem(Money, negative)).to.match(/^cents:/);
    expect(schemaProblem(SignedMoney, negative)).to.equal(null);
    expect(schemaProblem(Money, { ...negative, cents: '123' })).to.equal(null);
  });

  it('LimitParam is an integer from 1 to 100 with 50 as its documented default', () => {
    expect(LimitParam).to.include({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
  });
});
