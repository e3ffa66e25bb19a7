import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { OPERATION_IDS } from '../../src/api/v1/operation-ids.js';
import { operations } from '../../src/api/v1/index.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { nameProblem, vendorNameProblem } from '../../src/names.js';
import { coerceQuery, schemaProblem } from '../../src/http/validate.js';
import type { Operation } from '../../src/http/operation.js';
import { examplesOf } from '../../src/api/schemas/examples.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { DocumentCheck } from '../support/document-check.js';
import { DocumentSchemas, documentPatterns } from '../support/document-schemas.js';
import { type EngineName, representableInGo, runEngine, TRICKY_TEXTS } from '../support/regex-engines.js';

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
    expect(doc.paths['/invoices'].post.requestBody.content['application/json'].schema.properties.lines.items.properties.unitPriceCents).to.deep.equal({ $ref: '#/components/schemas/Cents' });
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

  describe('says what the server checks (a property-based tester reading it finds no gap)', () => {
    let schemas: DocumentSchemas;
    before(() => {
      schemas = new DocumentSchemas(doc);
    });
    const bodyProperty = (path: string, ...names: string[]) => ['paths', path, 'post', 'requestBody', 'content', 'application/json', 'schema', 'properties', ...names.flatMap((name, i) => (i === 0 ? [name] : ['items', 'properties', name]))];
    const operation = (id: string): Operation => operations.find((candidate) => candidate.id === id)!;
    const fits = (path: (string | number)[], value: unknown) => schemas.problem(path, value) === null;

    it('gives money that must be more than zero its own schema, PositiveCents: "0" is no amount for an expense or a payment', () => {
      const expense = bodyProperty('/expenses', 'amountCents');
      const payment = bodyProperty('/invoices/{id}/payments', 'amountCents');
      expect(fits(expense, '0'), 'an expense of "0"').to.equal(false);
      expect(fits(payment, '000'), 'a payment of "000"').to.equal(false);
      expect(schemas.document.paths['/expenses'].post.requestBody.content['application/json'].schema.properties.amountCents).to.deep.equal({ $ref: '#/components/schemas/PositiveCents' });
      expect(doc.components.schemas.PositiveCents.allOf).to.deep.equal([{ $ref: '#/components/schemas/Cents' }]);
      for (const amount of ['0', '000', '0000000000000000000000000000000', '1', '0010', '4599', '1'.repeat(30), '1'.repeat(31), '-1', '1.5', '']) {
        const server = schemaProblem(operation('expenses.create').body, { date: '2026-11-20', amountCents: amount, vendorName: 'Crema', accountId: '4195c8e6-2b7a-4d3e-8f05-9a1c6e4d2b73' }) === null;
        expect(fits(expense, amount), `expense ${amount}`).to.equal(server);
        expect(fits(payment, amount), `payment ${amount}`).to.equal(schemaProblem(operation('invoices.recordPayment').body, { amountCents: amount, method: 'cash' }) === null);
      }
      // A line may cost nothing (a free item); only the invoice's total must be above zero, which no schema can say.
      expect(fits(bodyProperty('/invoices', 'lines', 'unitPriceCents'), '0')).to.equal(true);
    });

    it('writes the email rule the server checks, not format: email, which lets 0@com through', () => {
      const email = bodyProperty('/customers', 'email');
      const published = schemas.document.paths['/customers'].post.requestBody.content['application/json'].schema.properties.email;
      // Any JSON Schema tool reads the pattern alike; format: email is RFC 5321's looser mailbox in most of them.
      expect(published.pattern, 'a pattern for the address').to.be.a('string');
      expect(new RegExp(published.pattern, 'u').test('0@com'), 'the pattern refuses 0@com').to.equal(false);
      expect(published).to.not.have.property('format');
      const addresses = ['0@com', 'a@b.co', 'accounts@harborbistro.example', 'A.B@EXAMPLE.COM', 'a..b@x.y', '.a@x.y', 'a.@x.y', 'a@-x.y', 'a@x-.y', 'a@x_y.z', 'a@1.2', "o'r+tag@x.io", 'a b@x.y', 'é@x.y', '\u017f@x.yz', '\u212a@x.yz', 'a@x.y\n', '@x.y', 'a@', 'a@x', 'a@x.', `${'a'.repeat(320)}@x.y`];
      for (const address of addresses) {
        const server = schemaProblem(operation('customers.create').body, { name: 'Harbor Bistro', email: address }) === null;
        expect(fits(email, address), address).to.equal(server);
      }
    });

    it('says on every entityId that it is required when the key reaches more than one business', () => {
      const entityIds: { where: string; description: string }[] = [];
      for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
        for (const [method, op] of Object.entries(methods)) {
          for (const parameter of op.parameters as Json[]) if (parameter.name === 'entityId') entityIds.push({ where: `${method} ${path} (query)`, description: parameter.description });
          const property = op.requestBody?.content['application/json'].schema.properties?.entityId;
          if (property) entityIds.push({ where: `${method} ${path} (body)`, description: property.description });
        }
      }
      expect(entityIds.length).to.equal(12);
      for (const { where, description } of entityIds) {
        expect(description, where).to.match(where.startsWith('get /review-queue') ? /limited to several businesses, which must name one: omitting it then is 422 validation_failed/ : /Required when the key reaches more than one business: omitting it then is 422 validation_failed/);
      }
    });

    it('holds a tax rate to 0 to 100, as the server does', () => {
      const rate = bodyProperty('/invoices', 'taxRatePercent');
      const body = (taxRatePercent: string) => ({ customerId: '56c249ce-1af7-4b02-ad95-1b445d7f7ccc', taxRatePercent, lines: [{ description: 'Trays', quantity: '1', unitPriceCents: '100', accountId: '76233abb-0f4e-4c43-9d0a-3b8f1e6c2a41' }] });
      for (const [value, ok] of [['0', true], ['8.875', true], ['099.5', true], ['100', true], ['100.000000', true], ['100.000001', false], ['101', false], ['999', false], ['1000', false], ['.5', false]] as const) {
        expect(fits(rate, value), value).to.equal(ok);
        // The server refuses above 100 when it prices the draft, after its schema; both refuse alike.
        if (ok) expect(schemaProblem(operation('invoices.create').body, body(value)), value).to.equal(null);
      }
    });

    it('writes every pattern for every common engine: no \\p{…} class, \\s, lookaround or \\u{…} escape', () => {
      const patterns = documentPatterns(doc);
      expect(patterns.length).to.be.greaterThan(10);
      for (const { pattern, at } of patterns) expect(pattern, at).to.not.match(/\\[pP]\{|\\[sSdDwWbB]|\(\?<?[=!]|\\u\{/);
    });

    it('publishes the name and vendorName rules the server checks: both decide alike on tricky names', () => {
      const name = bodyProperty('/customers', 'name');
      const vendorName = bodyProperty('/expenses', 'vendorName');
      const generated = Array.from({ length: 400 }, (_, i) => TRICKY_TEXTS[i % TRICKY_TEXTS.length]! + TRICKY_TEXTS[(i * 7) % TRICKY_TEXTS.length]! + TRICKY_TEXTS[(i * 13) % TRICKY_TEXTS.length]!);
      for (const text of [...TRICKY_TEXTS, ...generated]) {
        expect(fits(name, text), `name ${JSON.stringify(text)}`).to.equal(nameProblem(text) === null);
        expect(fits(vendorName, text), `vendorName ${JSON.stringify(text)}`).to.equal(vendorNameProblem(text) === null);
      }
    });

    for (const engine of ['python', 'java', 'go'] as EngineName[]) {
      it(`reads every pattern alike in ${engine === 'python' ? "Python's re" : engine === 'java' ? "Java's java.util.regex" : "Go's regexp (RE2), once \\uXXXX is written \\x{XXXX}"}`, function () {
        this.timeout(60_000);
        const patterns = Object.fromEntries([...new Set(documentPatterns(doc).map(({ pattern }) => pattern))].map((pattern, i) => [`p${i}`, pattern]));
        // A Go string is UTF-8: a lone surrogate cannot reach it.
        const subjects = engine === 'go' ? TRICKY_TEXTS.filter(representableInGo) : TRICKY_TEXTS;
        const answers = runEngine(engine, patterns, subjects);
        if (answers === null) {
          if (process.env.CI === 'true') throw new Error(`${engine} is not installed: CI must run this test (.ci/run installs it)`);
          console.warn(`      skipped: ${engine} is not installed here; CI runs this test`);
          this.skip(); // reason: ${engine} is not installed on this machine; CI installs it and never skips (see above)
        }
        for (const [key, pattern] of Object.entries(patterns)) {
          const js = new RegExp(pattern, 'u');
          expect(answers[key], `${engine} compiles ${pattern.slice(0, 80)}`).to.be.an('array');
          subjects.forEach((subject, i) => expect((answers[key] as boolean[])[i], `${engine}: ${pattern.slice(0, 60)} on ${JSON.stringify(subject)}`).to.equal(js.test(subject)));
        }
      });
    }
  });

  describe('examples: the requests and answers of the guides, on every operation', () => {
    let schemas: DocumentSchemas;
    before(() => {
      schemas = new DocumentSchemas(doc);
    });
    const opOf = (operation: Operation) => doc.paths[operation.path.replace(/:(\w+)/g, '{$1}')][operation.method.toLowerCase()] as Json;

    it('gives every operation an answer, each POST with a body a request, and each parameter of a read its value', () => {
      for (const operation of operations) {
        const op = opOf(operation);
        const success = Object.keys(operation.responses).sort()[0]!;
        expect(Object.keys(op.responses[success].content['application/json'].examples ?? {}), `${operation.id} ${success}`).to.not.be.empty;
        if ((operation.body.required ?? []).length > 0) expect(Object.keys(op.requestBody.content['application/json'].examples ?? {}), operation.id).to.not.be.empty;
        for (const parameter of op.parameters as Json[]) {
          if (parameter.in === 'path' || parameter.required) expect(parameter, `${operation.id} ${parameter.name}`).to.have.property('example');
        }
      }
    });

    it('publishes every example of src/api/schemas/examples.ts: none is left out for a parameter or status the operation lacks', () => {
      for (const operation of operations) {
        const examples = examplesOf(operation.id)!;
        const op = opOf(operation);
        for (const name of Object.keys(examples.parameters ?? {})) expect(op.parameters.find((p: Json) => p.name === name), `${operation.id} parameter ${name}`).to.have.property('example');
        for (const name of Object.keys(examples.requests ?? {})) expect(op.requestBody.content['application/json'].examples, `${operation.id} request ${name}`).to.have.property(name);
        for (const [status, named] of Object.entries(examples.responses)) {
          for (const name of Object.keys(named ?? {})) expect(op.responses[status]?.content['application/json'].examples, `${operation.id} ${status} ${name}`).to.have.property(name);
        }
        // A request example and its answer share a name.
        const answered = new Set(Object.values(examples.responses).flatMap((named) => Object.keys(named ?? {})));
        for (const name of Object.keys(examples.requests ?? {})) expect(answered.has(name), `${operation.id}: the answer to ${name}`).to.equal(true);
      }
    });

    it('fits every example to the schema beside it in the document', () => {
      let checked = 0;
      for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
        for (const [method, op] of Object.entries(methods)) {
          (op.parameters as Json[]).forEach((parameter, index) => {
            if (!('example' in parameter)) return;
            expect(schemas.problem(['paths', path, method, 'parameters', index, 'schema'], parameter.example), `${method} ${path} ${parameter.name}`).to.equal(null);
            checked += 1;
          });
          for (const [name, example] of Object.entries((op.requestBody?.content['application/json'].examples ?? {}) as Record<string, Json>)) {
            expect(schemas.problem(['paths', path, method, 'requestBody', 'content', 'application/json', 'schema'], example.value), `${method} ${path} request ${name}`).to.equal(null);
            checked += 1;
          }
          for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
            for (const [name, example] of Object.entries((response.content?.['application/json'].examples ?? {}) as Record<string, Json>)) {
              expect(schemas.problem(['paths', path, method, 'responses', status, 'content', 'application/json', 'schema'], example.value), `${method} ${path} ${status} ${name}`).to.equal(null);
              checked += 1;
            }
          }
        }
      }
      expect(checked).to.be.greaterThan(70);
    });

    it("passes every example request through the server's own validation (the schemas it checks requests with)", () => {
      for (const operation of operations) {
        const examples = examplesOf(operation.id)!;
        const parameters = examples.parameters ?? {};
        const pick = (names: string[]) => Object.fromEntries(Object.entries(parameters).filter(([name]) => names.includes(name)).map(([name, value]) => [name, String(value)]));
        expect(schemaProblem(operation.params, pick(Object.keys(operation.params.properties))), `${operation.id} path`).to.equal(null);
        expect(schemaProblem(operation.query, coerceQuery(operation.query, pick(Object.keys(operation.query.properties)))), `${operation.id} query`).to.equal(null);
        for (const [name, example] of Object.entries(examples.requests ?? {})) expect(schemaProblem(operation.body, example.value), `${operation.id} ${name}`).to.equal(null);
      }
    });
  });
});
