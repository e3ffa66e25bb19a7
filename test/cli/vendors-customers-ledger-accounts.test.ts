import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { type ApiTenant, buildApiTenant, countRows } from '../support/api.js';
import { accountIdByName, anyAccountIdByName } from '../support/factories.js';
import { addCustomer, addVendor } from '../support/register.js';
import { CliHarness, expectBadArguments, expectOk, UNKNOWN_ID } from './support.js';

/**
 * `daybook vendor set --1099`, `vendor|customer|ledger-account archive|unarchive`, run
 * in-process over the very books file a test app serves, so each change is read back through
 * the API that only reads these flags.
 */

const APP_START = '2026-03-15T12:00:00.000Z';

interface AuditRow {
  action: string;
  subject_type: string;
  subject_id: string;
  actor_type: string;
}

describe('daybook vendor, customer and ledger-account flags', () => {
  let cli: CliHarness;
  let app: TestApp;
  let tenant: ApiTenant;

  beforeEach(async () => {
    cli = new CliHarness();
    cli.clock.set(APP_START);
    app = await startTestApp(APP_START, { dbPath: cli.dbPath, config: { fxProviderUrl: 'http://127.0.0.1:9/' } });
    tenant = buildApiTenant(app, { plan: 'large' });
  });
  afterEach(async () => {
    await app.close();
    cli.cleanup();
  });

  const auditRows = (subjectId: string) =>
    app.db.prepare('SELECT action, subject_type, subject_id, actor_type FROM audit_log WHERE subject_id = ? ORDER BY rowid').all(subjectId) as AuditRow[];
  const auditCount = () => countRows(app.db, 'SELECT count(*) FROM audit_log');

  async function vendorsListed(query = ''): Promise<{ id: string; name: string; is1099Eligible: boolean }[]> {
    const res = await app.get(`/api/v1/vendors${query}`, tenant.key);
    expect(res.status, res.text).to.equal(200);
    return res.body.vendors;
  }
  async function customerIdsListed(query = ''): Promise<string[]> {
    const res = await app.get(`/api/v1/customers${query}`, tenant.key);
    expect(res.status, res.text).to.equal(200);
    return (res.body.customers as { id: string }[]).map((customer) => customer.id);
  }
  async function ledgerAccountIdsListed(): Promise<string[]> {
    const res = await app.get(`/api/v1/accounts?entityId=${tenant.business.id}`, tenant.key);
    expect(res.status, res.text).to.equal(200);
    return (res.body.accounts as { id: string }[]).map((account) => account.id);
  }

  describe('vendor set --1099', () => {
    it('marks a vendor 1099-eligible and back, audited, and GET /vendors shows is1099Eligible', async () => {
      const vendorId = addVendor(app, tenant.id, 'Bayside Oven Repair');
      const set = await cli.json(['vendor', 'set', '--id', vendorId, '--1099', 'yes']);
      expect(set).to.deep.equal({ id: vendorId, tenantId: tenant.id, name: 'Bayside Oven Repair', is1099Eligible: true, archived: false });
      expect((await vendorsListed()).find((vendor) => vendor.id === vendorId)?.is1099Eligible).to.equal(true);

      const unset = await cli.json(['vendor', 'set', '--id', vendorId, '--1099', 'no']);
      expect(unset.is1099Eligible).to.equal(false);
      expect((await vendorsListed()).find((vendor) => vendor.id === vendorId)?.is1099Eligible).to.equal(false);
      expect(auditRows(vendorId).slice(-2)).to.deep.equal([
        { action: 'vendor.set_1099', subject_type: 'vendor', subject_id: vendorId, actor_type: 'cli' },
        { action: 'vendor.set_1099', subject_type: 'vendor', subject_id: vendorId, actor_type: 'cli' },
      ]);
    });

    it('prints one line for people without --json', async () => {
      const vendorId = addVendor(app, tenant.id, 'Brightside CPA');
      const result = await cli.run(['vendor', 'set', '--id', vendorId, '--1099', 'yes']);
      expectOk(result);
      expect(result.stdout).to.equal('Vendor Brightside CPA is now 1099-eligible.\n');
    });

    it('refuses an unknown vendor, and a --1099 that is not yes or no, with exit 2 and nothing written', async () => {
      const before = auditCount();
      expectBadArguments(await cli.run(['vendor', 'set', '--id', UNKNOWN_ID, '--1099', 'yes']), /No such vendor/);
      const vendorId = addVendor(app, tenant.id, 'Greenleaf Nursery');
      expectBadArguments(await cli.run(['vendor', 'set', '--id', vendorId, '--1099', 'maybe']), /--1099/);
      expectBadArguments(await cli.run(['vendor', 'set', '--id', vendorId]), /--1099/);
      expect(auditCount()).to.equal(before + 1); // the vendor's own creation only
    });
  });

  describe('vendor archive|unarchive', () => {
    it('hides the vendor from GET /vendors unless includeArchived=true, audited, and brings it back', async () => {
      const vendorId = addVendor(app, tenant.id, 'Old Harbor Dairy');
      const archived = await cli.json(['vendor', 'archive', '--id', vendorId]);
      expect(archived).to.include({ id: vendorId, archived: true });
      expect((await vendorsListed()).map((vendor) => vendor.id)).not.to.include(vendorId);
      expect((await vendorsListed('?includeArchived=true')).map((vendor) => vendor.id)).to.include(vendorId);

      expect(await cli.json(['vendor', 'unarchive', '--id', vendorId])).to.include({ id: vendorId, archived: false });
      expect((await vendorsListed()).map((vendor) => vendor.id)).to.include(vendorId);
      expect(auditRows(vendorId).map((row) => [row.action, row.actor_type])).to.deep.equal([
        ['vendor.create', 'cli'],
        ['vendor.archive', 'cli'],
        ['vendor.unarchive', 'cli'],
      ]);
    });

    it('refuses an unknown vendor with exit 2', async () => {
      expectBadArguments(await cli.run(['vendor', 'archive', '--id', UNKNOWN_ID]), /No such vendor/);
      expectBadArguments(await cli.run(['vendor', 'unarchive', '--id', 'not-an-id']), /--id/);
    });
  });

  describe('customer archive|unarchive', () => {
    it('hides the customer from GET /customers unless includeArchived=true, audited, and brings it back', async () => {
      const customerId = addCustomer(app, tenant.id, { name: 'Seaside Pop-Up Market' });
      const archived = await cli.json(['customer', 'archive', '--id', customerId]);
      expect(archived).to.deep.equal({ id: customerId, tenantId: tenant.id, name: 'Seaside Pop-Up Market', archived: true });
      expect(await customerIdsListed()).not.to.include(customerId);
      expect(await customerIdsListed('?includeArchived=true')).to.include(customerId);

      expect(await cli.json(['customer', 'unarchive', '--id', customerId])).to.include({ archived: false });
      expect(await customerIdsListed()).to.include(customerId);
      expect(auditRows(customerId).slice(1).map((row) => [row.action, row.subject_type, row.actor_type])).to.deep.equal([
        ['customer.archive', 'customer', 'cli'],
        ['customer.unarchive', 'customer', 'cli'],
      ]);
    });

    it('refuses an unknown customer with exit 2 and writes nothing', async () => {
      const before = auditCount();
      expectBadArguments(await cli.run(['customer', 'archive', '--id', UNKNOWN_ID]), /No such customer/);
      expect(auditCount()).to.equal(before);
    });
  });

  describe('ledger-account archive|unarchive', () => {
    it('takes the account out of GET /accounts, audited with its business, and puts it back', async () => {
      const accountId = accountIdByName(app.db, tenant.business.id, 'Prepaid Expenses');
      const archived = await cli.json(['ledger-account', 'archive', '--id', accountId]);
      expect(archived).to.deep.equal({
        id: accountId,
        tenantId: tenant.id,
        businessId: tenant.business.id,
        code: '1300',
        name: 'Prepaid Expenses',
        type: 'asset',
        archived: true,
      });
      expect(await ledgerAccountIdsListed()).not.to.include(accountId);

      expect(await cli.json(['ledger-account', 'unarchive', '--id', accountId])).to.include({ archived: false });
      expect(await ledgerAccountIdsListed()).to.include(accountId);
      const rows = app.db.prepare('SELECT action, business_id, actor_type FROM audit_log WHERE subject_id = ? ORDER BY rowid').all(accountId);
      expect(rows).to.deep.equal([
        { action: 'ledger_account.archive', business_id: tenant.business.id, actor_type: 'cli' },
        { action: 'ledger_account.unarchive', business_id: tenant.business.id, actor_type: 'cli' },
      ]);
    });

    it('refuses a system account, a heading and an unknown id with exit 2, leaving it as it was', async () => {
      const before = auditCount();
      const receivables = accountIdByName(app.db, tenant.business.id, 'Accounts Receivable');
      expectBadArguments(await cli.run(['ledger-account', 'archive', '--id', receivables]), /1200 Accounts Receivable is a system account/);
      const heading = anyAccountIdByName(app.db, tenant.business.id, 'Operating Expenses');
      expectBadArguments(await cli.run(['ledger-account', 'archive', '--id', heading]), /is a heading/);
      expectBadArguments(await cli.run(['ledger-account', 'archive', '--id', UNKNOWN_ID]), /No such ledger account/);
      expect(await ledgerAccountIdsListed()).to.include(receivables);
      expect(auditCount()).to.equal(before);
    });

    it('refuses an account that an open invoice uses, naming the invoice, and allows it once the invoice is void', async () => {
      const accountId = accountIdByName(app.db, tenant.business.id, 'Other Income');
      const customerId = addCustomer(app, tenant.id, { name: 'Harbor Cafe' });
      const res = await app.post('/api/v1/invoices', tenant.key, {
        customerId,
        issueDate: '2026-03-02',
        lines: [{ description: 'Catering', quantity: '1', unitPriceCents: '50000', accountId }],
      });
      expect(res.status, res.text).to.equal(201);
      const invoiceId = res.body.invoiceId as string;
      const number = (app.db.prepare('SELECT number FROM invoices WHERE id = ?').get(invoiceId) as { number: string }).number;
      const before = auditCount();

      expectBadArguments(await cli.run(['ledger-account', 'archive', '--id', accountId]), new RegExp(`used by open invoices \\(${number}\\)`));
      expect(auditCount()).to.equal(before);
      expect(await ledgerAccountIdsListed()).to.include(accountId);

      expectOk(await cli.run(['invoice', 'void', '--id', invoiceId]));
      expect(await cli.json(['ledger-account', 'archive', '--id', accountId])).to.include({ archived: true });
    });

    it('is a different command from `daybook account`, the tenant', async () => {
      const result = await cli.run(['ledger-account', '--help']);
      expect(result.stdout).to.match(/not `daybook account`, the tenant/);
    });
  });
});
