import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { operations } from '../../src/api/v1/index.js';
import { setRate } from '../../src/books/fx.js';
import type { Operation } from '../../src/http/operation.js';
import type { OperationId } from '../../src/api/v1/operation-ids.js';
import { OPERATION_EXAMPLES } from '../../src/api/schemas/examples.js';
import { buildApiTenant, type ApiTenant } from '../support/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { accountIdByName } from '../support/factories.js';
import { addBilledCustomer } from '../support/invoicing.js';
import { queueReviewItem } from '../support/review.js';

type Json = Record<string, any>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The order of the guides: what a later example needs (a customer, a draft, a sent invoice) an earlier one made. */
const WALK: readonly OperationId[] = [
  'businesses.list',
  'accounts.list',
  'customers.create',
  'customers.list',
  'vendors.list',
  'expenses.create',
  'transactions.list',
  'transactions.get',
  'invoices.create',
  'invoices.list',
  'invoices.get',
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
];

/**
 * Every example request of the published document (src/api/schemas/examples.ts), sent to a running
 * server in the order of the guides: each is accepted, with the status of the answer example of
 * the same name. The examples name the ids of the guides' demo books; each id is sent as the
 * record of these books that plays its part (the business, the Sales account, the customer or
 * invoice an earlier example made).
 */
describe('the OpenAPI examples, sent to a running server', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  /** An id of the examples -> the id of the record that plays its part here. */
  const ids = new Map<string, string>();
  const made: { invoiceId?: string; transactionId?: string } = {};

  before(async () => {
    app = await startTestApp('2026-11-20T00:00:00.000Z');
    tenant = buildApiTenant(app, { plan: 'large', name: 'Harbor & Pine Bookkeeping' });
    // What the demo books held before the guides' calls: an existing customer, a rate for the euro invoice.
    addBilledCustomer(app, tenant.id, { name: 'Anchor Cafe Downtown' });
    setRate(app.db, app.clock, CLI_ACTOR, { currency: 'EUR', date: '2026-11-20', usdPerUnit: '1.0512' });
  });
  after(() => app.close());

  /** The id to send for an example's `id` at `path` (the field's name, within the body or the parameters). */
  function realId(operationId: OperationId, path: string[], exampleId: string): string {
    const known = ids.get(exampleId);
    if (known) return known;
    const field = path.at(-1);
    const business = tenant.business.id;
    if (field === 'entityId') return business;
    if (field === 'accountId') return accountIdByName(app.db, business, path.includes('lines') ? 'Sales' : 'Meals');
    if (field === 'id' && operationId.startsWith('invoices.') && made.invoiceId) return made.invoiceId;
    if (field === 'id' && operationId === 'transactions.get' && made.transactionId) return made.transactionId;
    if (field === 'id' && operationId === 'review.accept') {
      return queueReviewItem(app, tenant.business, { date: '2026-11-07', amountCents: 39840n, description: 'NORTHWIND FLOUR MILL 0042 PORTLAND OR' }).itemId;
    }
    throw new Error(`${operationId}: no record here plays the part of ${exampleId} (${path.join('.')})`);
  }

  function withRealIds(operationId: OperationId, value: unknown, path: string[] = []): unknown {
    if (typeof value === 'string' && UUID.test(value)) return realId(operationId, path, value);
    if (Array.isArray(value)) return value.map((item, index) => withRealIds(operationId, item, [...path, String(index)]));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, withRealIds(operationId, child, [...path, key])]));
    return value;
  }

  /** Remembers which record of these books each id of an answer example stands for. */
  function learnIds(example: unknown, actual: unknown): void {
    if (typeof example === 'string' && UUID.test(example) && typeof actual === 'string') ids.set(example, actual);
    else if (example && typeof example === 'object' && actual && typeof actual === 'object') {
      for (const [key, child] of Object.entries(example)) learnIds(child, (actual as Json)[key]);
    }
  }

  function target(operation: Operation, parameters: Record<string, unknown>): string {
    let path = operation.path;
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(parameters)) {
      if (Object.hasOwn(operation.params.properties, name)) path = path.replace(`:${name}`, encodeURIComponent(String(value)));
      else query.set(name, String(value));
    }
    const search = query.toString();
    return `/api/v1${path}${search ? `?${search}` : ''}`;
  }

  it('covers every operation', () => {
    expect([...WALK].sort()).to.deep.equal(operations.map((operation) => operation.id).sort());
  });

  for (const operationId of WALK) {
    const examples = OPERATION_EXAMPLES[operationId];
    const answers = Object.entries(examples.responses).flatMap(([status, named]) => Object.entries(named ?? {}).map(([name, example]) => ({ status: Number(status), name, example })));
    const requests = Object.entries(examples.requests ?? {});
    const sends: { name: string; body: unknown }[] = requests.length > 0 ? requests.map(([name, example]) => ({ name, body: example.value })) : [{ name: answers[0]!.name, body: undefined }];

    for (const { name, body } of sends) {
      const answer = answers.find((candidate) => candidate.name === name)!;
      it(`${operationId}: the example ${name} is answered ${answer.status}`, async () => {
        const operation = operations.find((candidate) => candidate.id === operationId)!;
        const parameters = withRealIds(operationId, examples.parameters ?? {}) as Record<string, unknown>;
        const path = target(operation, parameters);
        const res =
          operation.method === 'GET' ? await app.get(path, tenant.key) : await app.post(path, tenant.key, body === undefined ? undefined : withRealIds(operationId, body));
        expect(res.status, `${operation.method} ${path}: ${res.text.slice(0, 300)}`).to.equal(answer.status);
        // A write's answer names what it made; a list's rows need not line up with the example's.
        if (operation.method === 'POST') learnIds(answer.example.value, res.body);
        if (operationId === 'invoices.create' && !made.invoiceId) made.invoiceId = (res.body as Json).invoiceId as string;
        if (operationId === 'expenses.create') made.transactionId = (res.body as Json).transactionId as string;
      });
    }
  }
});
