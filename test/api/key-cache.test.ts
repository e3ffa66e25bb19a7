import { expect } from 'chai';
import { revokeKey } from '../../src/books/keys.js';
import { createBusiness } from '../../src/books/businesses.js';
import { BUSINESS_RECORD_COLUMNS } from '../../src/db/migrations/20261127_0018_access_version.js';
import { updateTenant } from '../../src/books/tenants.js';
import { openDb } from '../../src/db/connection.js';
import { type ApiTenant, expectError, useFreshTenantPerTest } from '../support/api.js';
import type { TestApp } from '../support/app.js';
import { invoiceBody } from '../support/invoicing.js';
import { accountIdByName, TEST_ACTOR } from '../support/factories.js';

/**
 * Authenticated requests reuse the key's principal, with the businesses it reaches, while the
 * access records are unchanged (src/db/access-cache.ts, used by src/books/keys.ts; the
 * triggers of migration 0018 move the version). Whatever changes a key, its account or the
 * businesses must apply on the very next request, whether this server made the change or
 * another process did, and however it was made.
 */
describe('remembered keys: every change to a key or its account applies on the next request', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useFreshTenantPerTest((started) => ({ app, tenant } = started), { tenant: { businesses: 2 } });

  const businesses = async () => app.get('/api/v1/businesses', tenant.key);

  /** Runs `change` through a second connection to the books file, as `daybook` in another process would. */
  const fromAnotherProcess = (change: (db: ReturnType<typeof openDb>) => void) => {
    const other = openDb(app.dbPath);
    try {
      change(other);
    } finally {
      other.close();
    }
  };

  it('a key revoked by another process is refused on the next request', async () => {
    expect((await businesses()).status).to.equal(200);
    expect((await businesses()).status).to.equal(200);
    fromAnotherProcess((db) => revokeKey(db, app.clock, TEST_ACTOR, tenant.keys[0]!.id));
    expectError(await businesses(), 401, 'invalid_key');
  });

  it("API access turned off through the server's own connection is refused on the next request", async () => {
    expect((await businesses()).status).to.equal(200);
    updateTenant(app.db, app.clock, TEST_ACTOR, tenant.id, { apiAccess: false });
    expectError(await businesses(), 401, 'invalid_key');
  });

  it('a key limited to one business by a plain SQL write elsewhere sees one business next', async () => {
    expect((await businesses()).body.businesses).to.have.lengthOf(2);
    fromAnotherProcess((db) => db.prepare('INSERT INTO api_key_businesses (api_key_id, business_id) VALUES (?, ?)').run(tenant.keys[0]!.id, tenant.businesses[1]!.id));
    expect((await businesses()).body.businesses.map((b: { id: string }) => b.id)).to.deep.equal([tenant.businesses[1]!.id]);
  });

  it('a business added through the server\'s connection and one renamed by plain SQL elsewhere show on the next request', async () => {
    const names = async (): Promise<string[]> => (await businesses()).body.businesses.map((b: { name: string }) => b.name);
    expect(await names()).to.have.lengthOf(2);
    createBusiness(app.db, app.clock, TEST_ACTOR, { tenantId: tenant.id, name: 'Zephyr Third Shop' });
    expect(await names()).to.have.lengthOf(3).and.include('Zephyr Third Shop');
    fromAnotherProcess((db) => db.prepare('UPDATE businesses SET name = ? WHERE id = ?').run('Aardvark Renamed', tenant.businesses[1]!.id));
    expect((await names())[0]).to.equal('Aardvark Renamed');
  });

  it('a write to the books leaves the access version standing; a change to an account moves it and shows next', async () => {
    const version = (): bigint => (app.serverDb.prepare('SELECT version FROM access_version').get() as { version: bigint }).version;
    const before = version();
    const accountId = accountIdByName(app.db, tenant.business.id, 'Office Supplies');
    const expense = await app.post('/api/v1/expenses', tenant.key, { entityId: tenant.business.id, date: '2026-03-10', amountCents: '1200', vendorName: 'Staples', accountId });
    expect(expense.status).to.equal(201);
    expect(version(), 'an expense changes no access record').to.equal(before);
    const customer = await app.post('/api/v1/customers', tenant.key, { name: 'Version Customer' });
    expect(customer.status).to.equal(201);
    const invoice = await app.post('/api/v1/invoices', tenant.key, invoiceBody(app, tenant.business.id, customer.body.id, { entityId: tenant.business.id }));
    expect(invoice.status, invoice.text).to.equal(201);
    expect(version(), 'an invoice (which moves the business\'s next invoice number) changes no access record').to.equal(before);
    fromAnotherProcess((db) => db.prepare('UPDATE tenants SET name = ? WHERE id = ?').run('Renamed Firm', tenant.id));
    expect(version()).to.equal(before + 1n);
    expect((await businesses()).body.accountName).to.equal('Renamed Firm');
  });

  it('watches every column of businesses a business record is read from, and only next_invoice_number is left out', () => {
    const columns = (app.db.prepare('SELECT name FROM pragma_table_info(?)').all('businesses') as { name: string }[]).map((column) => column.name);
    expect([...BUSINESS_RECORD_COLUMNS, 'next_invoice_number'].sort()).to.deep.equal([...columns].sort());
  });

  it('a key past its last day is refused although nothing in the books changed', async () => {
    fromAnotherProcess((db) => db.prepare('UPDATE api_keys SET expires_on = ? WHERE id = ?').run('2026-03-15', tenant.keys[0]!.id));
    expect((await businesses()).status).to.equal(200);
    app.clock.set('2026-03-16T00:00:01.000Z');
    expectError(await businesses(), 401, 'invalid_key');
  });
});
