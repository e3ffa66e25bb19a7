import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { OPERATION_IDS } from '../../src/http/operation.js';
import { operations } from '../../src/api/v1/index.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { startTestApp, type TestApp } from '../support/app.js';

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
        expect(response.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
      }
      for (const status of Object.keys(operation.responses)) expect(op.responses[status].headers, `${operation.id} ${status}`).to.have.keys('x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset');
    }
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
