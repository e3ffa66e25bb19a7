import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { OPERATION_IDS } from '../../src/http/operation.js';
import { operations } from '../../src/api/v1/index.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { DocumentCheck } from '../support/document-check.js';

type Json = Record<string, any>;

/** GET /openapi/v1.json: the published contract, built from the schemas the server validates with. */
describe('the OpenAPI document (GET /openapi/v1.json)', () => {
  let app: TestApp;
  let doc: Json;
  before(async () => {
    app = await startTestApp(undefined, { config: { siteUrl: 'https://books.example.com' } });
    const res = await app.get('/openapi/v1.json', null);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    doc = res.body as Json;
  });
  after(() => app.close());

  const allOperations = (): [string, string, Json][] =>
    Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [path, method, op] as [string, string, Json]));

  it('is OpenAPI 3.1.0 with the spec operationIds, exactly the 22', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(allOperations().map(([, , op]) => op.operationId).sort()).to.deep.equal([...OPERATION_IDS].sort());
  });

  it('serves the API under DAYBOOK_SITE_URL, with bearer keys', () => {
    expect(doc.servers).to.deep.equal([{ url: 'https://books.example.com/api/v1' }]);
    expect(doc.security).to.deep.equal([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).to.include({ type: 'http', scheme: 'bearer' });
  });

  it('writes paths with {parameters} and declares each path parameter', () => {
    const [path, , op] = allOperations().find(([, , candidate]) => candidate.operationId === 'invoices.send')!;
    expect(path).to.equal('/invoices/{id}/send');
    expect(op.parameters.find((p: Json) => p.in === 'path')).to.deep.include({ name: 'id', required: true });
  });

  it("gives each operation its permission, and each POST an Idempotency-Key header and a JSON body", () => {
    for (const operation of operations) {
      const op = doc.paths[operation.path.replace(/:(\w+)/g, '{$1}')][operation.method.toLowerCase()];
      expect(op['x-permission'], operation.id).to.equal(operation.permission);
      const idempotency = op.parameters.find((p: Json) => p.name === 'Idempotency-Key');
      if (operation.method === 'POST') {
        expect(idempotency, operation.id).to.deep.include({ in: 'header', required: false });
        expect(op.requestBody.content['application/json'].schema, operation.id).to.be.an('object');
        // Send, remind and accept have no required field, so their body may be left out.
        expect(op.requestBody.required, operation.id).to.equal((operation.body.required ?? []).length > 0);
      } else {
        expect(idempotency, operation.id).to.equal(undefined);
        expect(op.requestBody, operation.id).to.equal(undefined);
      }
    }
  });

  it('carries parameter limits from the validating schemas (limit 1 to 100, default 50)', () => {
    const op = allOperations().find(([, , candidate]) => candidate.operationId === 'customers.list')![2];
    const limit = op.parameters.find((p: Json) => p.name === 'limit');
    expect(limit).to.deep.include({ in: 'query', required: false });
    expect(limit.schema).to.include({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
  });

  it('answers every declared error code under its status, the common ones on every operation and conflict on every POST, with the Error schema', () => {
    for (const operation of operations) {
      const op = doc.paths[operation.path.replace(/:(\w+)/g, '{$1}')][operation.method.toLowerCase()];
      const idempotency = operation.method === 'POST' ? (['conflict'] as const) : [];
      for (const code of ['invalid_key', 'insufficient_scope', 'rate_limited', 'validation_failed', 'internal_error', ...idempotency, ...operation.errors] as const) {
        const response = op.responses[String(ERROR_STATUS[code])];
        expect(response?.description, `${operation.id} ${code}`).to.contain(code);
        const schema = response.content['application/json'].schema;
        expect(schema.allOf[0]).to.deep.equal({ $ref: '#/components/schemas/Error' });
        expect(schema.allOf[1].properties.error.properties.code.enum, `${operation.id} ${code}`).to.include(code);
        // A generator reading the narrowing alone still knows the code is a string.
        expect(schema.allOf[1].properties.error.properties.code.type, `${operation.id} ${code}`).to.equal('string');
        expect(response.headers['x-request-id']).to.include({ required: true });
      }
      expect(op.responses['429'].headers['retry-after'], operation.id).to.include({ required: true });
      for (const status of Object.keys(operation.responses)) expect(op.responses[status].headers, `${operation.id} ${status}`).to.have.keys('x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset');
    }
  });

  it('narrows each error status to the codes the operation can answer (a 404 of customers.create is no 404 at all)', () => {
    const create = doc.paths['/customers'].post;
    expect(create.responses['409'].content['application/json'].schema.allOf[1].properties.error.properties.code.enum).to.have.members(['conflict']);
    expect(create.responses['404']).to.equal(undefined);
  });

  describe('the check every API test runs against this document (test/support/document-check.ts)', () => {
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}): TestResponse => ({
      status,
      body,
      text: JSON.stringify(body),
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1', ...headers },
    });
    const customer = { id: '0b5f3c2e-7a7d-4c59-9d51-1f3f0a6a8e11', name: 'Ada', email: null, currency: 'USD', paymentTermsDays: 30 };
    let check: DocumentCheck;
    before(() => {
      check = new DocumentCheck(doc);
    });

    it('passes what the document declares, and what it does not describe', () => {
      const res = reply(404, { error: { code: 'not_found', message: 'No customer', requestId: 'r1' } });
      expect(check.problem('GET', '/api/v1/nowhere', res)).to.equal(null);
      expect(check.problem('GET', '/api/v1/invoices/0b5f3c2e-7a7d-4c59-9d51-1f3f0a6a8e11', res)).to.equal(null);
    });

    it('refuses a status the operation does not declare', () => {
      const res = reply(404, { error: { code: 'not_found', message: 'No customer', requestId: 'r1' } });
      expect(check.problem('POST', '/api/v1/customers', res)).to.match(/404, a status the document does not declare/);
    });

    it('refuses an error code its status does not list for the operation', () => {
      const res = reply(409, { error: { code: 'period_locked', message: 'Locked', requestId: 'r1' } });
      expect(check.problem('POST', '/api/v1/customers', res)).to.match(/body the document does not allow/);
    });

    it('refuses a missing required header, and a header of the wrong form', () => {
      const body = { error: { code: 'rate_limited', message: 'Slow down', requestId: 'r1' } };
      expect(check.problem('GET', '/api/v1/customers', reply(429, body))).to.match(/required header retry-after is missing/);
      expect(check.problem('GET', '/api/v1/customers', reply(429, body, { 'retry-after': 'soon' }))).to.match(/header retry-after \(soon\) does not fit/);
      expect(check.problem('GET', '/api/v1/customers', reply(429, body, { 'retry-after': '30' }))).to.equal(null);
    });

    it('refuses a field the schema does not declare', () => {
      const page = { customers: [customer], nextCursor: null };
      const fine = check.problem('GET', '/api/v1/customers?limit=1', reply(200, page));
      expect(fine).to.equal(null);
      const extra = check.problem('GET', '/api/v1/customers?limit=1', reply(200, { ...page, customers: [{ ...customer, secret: 1 }] }));
      expect(extra).to.match(/\/customers\/0 must NOT have additional properties \(secret\)/);
    });
  });

  it('makes the date, cents and currency formats reusable components, used by reference', () => {
    expect(doc.components.schemas.Date).to.include({ type: 'string', format: 'date' });
    expect(doc.components.schemas.Cents).to.include({ type: 'string', pattern: '^[0-9]{1,30}$' });
    expect(doc.components.schemas.CurrencyCode.enum).to.deep.equal(['USD', 'CAD', 'EUR', 'GBP', 'MXN']);
    const dateFrom = doc.paths['/transactions'].get.parameters.find((p: Json) => p.name === 'dateFrom');
    expect(dateFrom.schema).to.deep.equal({ $ref: '#/components/schemas/Date' });
    expect(doc.paths['/expenses'].post.requestBody.content['application/json'].schema.properties.amountCents).to.deep.equal({ $ref: '#/components/schemas/Cents' });
  });

  it('makes money and the error body reusable components, and every $ref resolves', () => {
    expect(doc.components.schemas.Money.properties.cents).to.include({ type: 'string', pattern: '^[0-9]+$' });
    expect(doc.components.schemas.Error.properties.error).to.be.an('object');
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    expect(refs.length).to.be.greaterThan(22);
    for (const ref of new Set(refs)) expect(doc.components.schemas, ref).to.have.property(/schemas\/([^"]+)"/.exec(ref)![1]!);
  });

  it('lints clean with @redocly/cli: no errors, and only the warnings docs/decisions.md explains', function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'daybook-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc, null, 2));
      let output: string;
      try {
        output = execFileSync(join(projectRoot, 'node_modules/.bin/redocly'), ['lint', file, '--format=json'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        });
      } catch (error) {
        // redocly exits 1 when it finds errors; its report is still on stdout.
        output = String((error as { stdout?: string }).stdout ?? '');
      }
      const report = JSON.parse(output) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; severity: string; message: string }[] };
      expect(report.problems.filter((problem) => problem.severity === 'error')).to.deep.equal([]);
      // A self-hosted API has no one licence for its description; the test's site URL is example.com.
      expect(report.problems.map((problem) => problem.ruleId).sort()).to.deep.equal(['info-license', 'no-server-example.com']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
