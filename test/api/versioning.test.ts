import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATION_IDS } from '../../src/api/v1/operation-ids.js';
import { projectRoot } from '../../src/paths.js';
import { type ApiTenant, expectInvalid, useTenantApp } from '../support/api.js';
import type { TestApp } from '../support/app.js';
import { addBilledCustomer, createInvoice, invoiceBody } from '../support/invoicing.js';

/** The spec's "Versioning" rules, each held here by the number the spec gives it. */
describe('Versioning', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useTenantApp((started) => ({ app, tenant } = started));

  it('rule 1: the surface is v1 under /api/v1, described by OpenAPI 3.1.0 at {site_url}/openapi/v1.json', async () => {
    const res = await app.get('/openapi/v1.json', null);
    expect(res.body.openapi).to.equal('3.1.0');
    expect(res.body.servers[0].url).to.match(/\/api\/v1$/);
  });

  it('rule 2: docs/CHANGELOG.md is a list of dated entries, oldest first', () => {
    const dates = [...readFileSync(join(projectRoot, 'docs/CHANGELOG.md'), 'utf8').matchAll(/^## (\d{4}-\d{2}-\d{2})\b/gm)].map((match) => match[1]!);
    expect(dates.length).to.be.greaterThan(1);
    expect(dates).to.deep.equal([...dates].sort());
  });

  it('rule 3: exactly the 22 operations, by the identifiers the spec lists', async () => {
    const res = await app.get('/openapi/v1.json', null);
    const served = Object.values(res.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(served.sort()).to.deep.equal(
      [
        'businesses.list', 'accounts.list', 'customers.list', 'customers.create', 'vendors.list', 'transactions.list', 'transactions.get', 'expenses.create',
        'invoices.list', 'invoices.get', 'invoices.create', 'invoices.send', 'invoices.remind', 'invoices.recordPayment', 'review.list', 'review.accept',
        'today.get', 'reports.profitAndLoss', 'reports.balanceSheet', 'reports.trialBalance', 'reports.arAging', 'reports.apAging',
      ].sort(),
    );
    expect(OPERATION_IDS).to.have.lengthOf(22);
  });

  describe('rule 4: the behaviours settled before general availability', () => {
    it('POST /customers answers 200, not 201, when it returns an existing customer', async () => {
      const first = await app.post('/api/v1/customers', tenant.key, { name: 'Settled Behaviour Ltd' });
      const again = await app.post('/api/v1/customers', tenant.key, { name: 'Settled Behaviour Ltd' });
      expect([first.status, again.status]).to.deep.equal([201, 200]);
      expect(again.body.id).to.equal(first.body.id);
    });

    it('POST /invoices takes an optional currency, USD when left out', async () => {
      const customerId = addBilledCustomer(app, tenant.id);
      const { invoiceId } = await createInvoice(app, tenant.key, invoiceBody(app, tenant.business.id, customerId));
      expect((await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key)).body.currency).to.equal('USD');
    });

    it('GET /businesses returns accountName alongside businesses', async () => {
      const res = await app.get('/api/v1/businesses', tenant.key);
      expect(Object.keys(res.body).sort()).to.deep.equal(['accountName', 'businesses']);
      expect(res.body.accountName).to.equal(tenant.record.name);
    });

    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      it(`${method} answers the JSON 404`, async () => {
        const res = await app.request(method, '/api/v1/customers', { key: tenant.key, body: {} });
        expect(res.status).to.equal(404);
        expect(res.body.error.code).to.equal('not_found');
      });
    }

    it('text fields have maximum lengths: longer input is 422 validation_failed naming the field', async () => {
      expectInvalid(await app.post('/api/v1/customers', tenant.key, { name: 'n'.repeat(201) }), 'name');
    });
  });
});
