import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildApiTenant, expectError, expectInvalid, rateLimitHeaders, type ApiTenant, useTenantApp } from '../support/api.js';
import { buildTenant, buildBusiness, buildKey } from '../support/factories.js';

/** The postable leaves of the standard chart, by code, with their paths. */
const STANDARD_LEAVES: Array<[code: string, type: string, path: string]> = [
  ['1110', 'asset', 'Assets > Cash and Bank > Business Checking'],
  ['1120', 'asset', 'Assets > Cash and Bank > Business Savings'],
  ['1130', 'asset', 'Assets > Cash and Bank > Card Payments Clearing'],
  ['1200', 'asset', 'Assets > Accounts Receivable'],
  ['1300', 'asset', 'Assets > Prepaid Expenses'],
  ['1500', 'asset', 'Assets > Equipment'],
  ['2100', 'liability', 'Liabilities > Accounts Payable'],
  ['2200', 'liability', 'Liabilities > Sales Tax Payable'],
  ['2300', 'liability', 'Liabilities > Business Credit Card'],
  ['2400', 'liability', 'Liabilities > Customer Deposits'],
  ['3100', 'equity', "Equity > Owner's Equity"],
  ['3200', 'equity', "Equity > Owner's Draws"],
  ['3900', 'equity', 'Equity > Retained Earnings'],
  ['4100', 'revenue', 'Revenue > Sales'],
  ['4200', 'revenue', 'Revenue > Service Revenue'],
  ['4900', 'revenue', 'Revenue > Other Income'],
  ['6110', 'expense', 'Expenses > Operating Expenses > Advertising and Marketing'],
  ['6120', 'expense', 'Expenses > Operating Expenses > Bank Fees'],
  ['6125', 'expense', 'Expenses > Operating Expenses > Payment Processing Fees'],
  ['6130', 'expense', 'Expenses > Operating Expenses > Contractors'],
  ['6140', 'expense', 'Expenses > Operating Expenses > Insurance'],
  ['6150', 'expense', 'Expenses > Operating Expenses > Meals'],
  ['6160', 'expense', 'Expenses > Operating Expenses > Office Supplies'],
  ['6170', 'expense', 'Expenses > Operating Expenses > Professional Fees'],
  ['6180', 'expense', 'Expenses > Operating Expenses > Rent'],
  ['6190', 'expense', 'Expenses > Operating Expenses > Software and Subscriptions'],
  ['6200', 'expense', 'Expenses > Operating Expenses > Travel'],
  ['6210', 'expense', 'Expenses > Operating Expenses > Utilities'],
  ['6990', 'expense', 'Expenses > Operating Expenses > Uncategorized Expense'],
  ['7100', 'expense', 'Expenses > Other Expenses > Realized FX Gain or Loss'],
];

const HEADING_CODES = ['1000', '1100', '2000', '3000', '4000', '6000', '6100', '7000'];

describe('GET /businesses', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('answers {accountName, businesses[]} with every business of the account as {id, name}, by name (200)', async () => {
    const account = buildTenant(app.db, app.clock, { name: 'Harbor & Co Accountants' });
    const zeta = buildBusiness(app.db, app.clock, { tenantId: account.id, name: 'Zeta Bakery' });
    const alpha = buildBusiness(app.db, app.clock, { tenantId: account.id, name: 'Alpha Plumbing' });
    buildBusiness(app.db, app.clock, { name: 'Someone Else Entirely' });
    const key = buildKey(app.db, app.clock, { tenantId: account.id });

    const res = await app.get('/api/v1/businesses', key.key);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      accountName: 'Harbor & Co Accountants',
      businesses: [
        { id: alpha.id, name: 'Alpha Plumbing' },
        { id: zeta.id, name: 'Zeta Bakery' },
      ],
    });
  });

  it('lists only the granted businesses for a limited key (200)', async () => {
    const tenant = buildApiTenant(app, { plan: 'middle', businesses: 3, name: 'Limited Firm' });
    const [first, second, third] = tenant.businesses;
    const limited = buildKey(app.db, app.clock, { tenantId: tenant.id, businessIds: [third!.id, first!.id] });

    const res = await app.get('/api/v1/businesses', limited.key);
    expect(res.status).to.equal(200);
    expect(res.body.accountName).to.equal('Limited Firm');
    const ids = (res.body.businesses as Array<{ id: string }>).map((b) => b.id).sort();
    expect(ids).to.deep.equal([first!.id, third!.id].sort());
    expect(ids).to.not.include(second!.id);

    const unlimited = await app.get('/api/v1/businesses', tenant.key);
    expect(unlimited.body.businesses).to.have.length(3);
  });

  it('answers an empty list for an account with no business yet (200)', async () => {
    const account = buildTenant(app.db, app.clock, { name: 'Empty Firm' });
    const key = buildKey(app.db, app.clock, { tenantId: account.id });
    const res = await app.get('/api/v1/businesses', key.key);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ accountName: 'Empty Firm', businesses: [] });
  });

  it('takes no query parameters (422 validation_failed naming the parameter)', async () => {
    const tenant = buildApiTenant(app);
    expectInvalid(await app.get(`/api/v1/businesses?entityId=${tenant.business.id}`, tenant.key), 'entityId');
  });
});

describe('GET /accounts', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useTenantApp((started) => ({ app, tenant } = started));

  it('answers every postable leaf, ordered by code, each {id, code, name, type, path}, not paged (200)', async () => {
    const res = await app.get('/api/v1/accounts', tenant.key);
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body)).to.deep.equal(['accounts']);
    const accounts = res.body.accounts as Array<Record<string, string>>;
    expect(accounts.map((a) => [a.code, a.type, a.path])).to.deep.equal(STANDARD_LEAVES);
    for (const account of accounts) {
      expect(account).to.have.all.keys('id', 'code', 'name', 'type', 'path');
      expect(account.path!.endsWith(` > ${account.name}`)).to.equal(true);
    }
    const ids = app.db
      .prepare('SELECT id FROM ledger_accounts WHERE business_id = ? AND is_heading = 0 AND archived = 0 ORDER BY code')
      .all(tenant.business.id)
      .map((row) => (row as { id: string }).id);
    expect(accounts.map((a) => a.id)).to.deep.equal(ids);
  });

  it('never returns parent headings', async () => {
    const res = await app.get('/api/v1/accounts', tenant.key);
    const codes = (res.body.accounts as Array<{ code: string }>).map((a) => a.code);
    for (const heading of HEADING_CODES) expect(codes).to.not.include(heading);
  });

  it('never returns an archived account', async () => {
    const own = buildApiTenant(app);
    app.db.prepare("UPDATE ledger_accounts SET archived = 1 WHERE business_id = ? AND code = '1120'").run(own.business.id);
    const res = await app.get('/api/v1/accounts', own.key);
    expect(res.status).to.equal(200);
    const codes = (res.body.accounts as Array<{ code: string }>).map((a) => a.code);
    expect(codes).to.not.include('1120');
    expect(codes).to.have.length(STANDARD_LEAVES.length - 1);
  });

  it('filters by type (200)', async () => {
    const res = await app.get('/api/v1/accounts?type=revenue', tenant.key);
    expect(res.status).to.equal(200);
    expect((res.body.accounts as Array<{ name: string; type: string }>).map((a) => [a.name, a.type])).to.deep.equal([
      ['Sales', 'revenue'],
      ['Service Revenue', 'revenue'],
      ['Other Income', 'revenue'],
    ]);
    const liabilities = await app.get('/api/v1/accounts?type=liability', tenant.key);
    expect(liabilities.body.accounts).to.have.length(4);
  });

  it('refuses an unknown type ("type:", 422 validation_failed)', async () => {
    expectInvalid(await app.get('/api/v1/accounts?type=income', tenant.key), 'type');
    expectInvalid(await app.get('/api/v1/accounts?type=Revenue', tenant.key), 'type');
    expectInvalid(await app.get('/api/v1/accounts?type=', tenant.key), 'type');
  });

  it('takes no paging parameters (422 validation_failed)', async () => {
    expectInvalid(await app.get('/api/v1/accounts?limit=10', tenant.key), 'limit');
    expectInvalid(await app.get('/api/v1/accounts?cursor=abc', tenant.key), 'cursor');
  });
});

describe('Entity rules (entityId)', () => {
  let app: TestApp;
  let firm: ApiTenant;
  let stranger: ApiTenant;
  let limitedKey: string;
  let granted: string;
  let notGranted: string;

  before(async () => {
    app = await startTestApp();
    firm = buildApiTenant(app, { plan: 'large', businesses: 3 });
    stranger = buildApiTenant(app);
    granted = firm.businesses[0]!.id;
    notGranted = firm.businesses[1]!.id;
    limitedKey = buildKey(app.db, app.clock, { tenantId: firm.id, businessIds: [granted] }).key;
  });
  after(async () => {
    await app.close();
  });

  it('serves a granted entityId (200) with that business\'s own accounts', async () => {
    const res = await app.get(`/api/v1/accounts?entityId=${granted}`, limitedKey);
    expect(res.status).to.equal(200);
    const bankId = app.db.prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND code = '1110'").get(granted) as { id: string };
    expect((res.body.accounts as Array<{ id: string }>).map((a) => a.id)).to.include(bankId.id);
  });

  it('refuses an entityId the key was not given (403 entity_not_allowed), counted against the budget', async () => {
    const res = await app.get(`/api/v1/accounts?entityId=${notGranted}`, limitedKey);
    expectError(res, 403, 'entity_not_allowed');
    rateLimitHeaders(res);
  });

  it('refuses another account\'s business for a limited key (403 entity_not_allowed)', async () => {
    expectError(await app.get(`/api/v1/accounts?entityId=${stranger.business.id}`, limitedKey), 403, 'entity_not_allowed');
  });

  it('answers another account\'s business with 404 not_found for an unlimited key, counted against the budget', async () => {
    const res = await app.get(`/api/v1/accounts?entityId=${stranger.business.id}`, firm.key);
    expectError(res, 404, 'not_found');
    rateLimitHeaders(res);
  });

  it('answers a random uuid with 404 not_found, identical to another account\'s business', async () => {
    const random = await app.get(`/api/v1/accounts?entityId=${randomUUID()}`, firm.key);
    expectError(random, 404, 'not_found');
    const foreign = await app.get(`/api/v1/accounts?entityId=${stranger.business.id}`, firm.key);
    expect(random.body.error.message).to.equal(foreign.body.error.message);
  });

  it('uses the only reachable business when entityId is omitted (200)', async () => {
    const limited = await app.get('/api/v1/accounts', limitedKey);
    expect(limited.status).to.equal(200);
    const explicit = await app.get(`/api/v1/accounts?entityId=${granted}`, limitedKey);
    expect(limited.body).to.deep.equal(explicit.body);

    const single = await app.get('/api/v1/accounts', stranger.key);
    expect(single.status).to.equal(200);
    const strangerBank = app.db
      .prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND code = '1110'")
      .get(stranger.business.id) as { id: string };
    expect((single.body.accounts as Array<{ id: string }>).map((a) => a.id)).to.include(strangerBank.id);
  });

  it('refuses an omitted entityId when the key reaches several businesses ("entityId:", 422 validation_failed)', async () => {
    const res = await app.get('/api/v1/accounts', firm.key);
    expectInvalid(res, 'entityId');
    rateLimitHeaders(res);
    const twoGranted = buildKey(app.db, app.clock, { tenantId: firm.id, businessIds: [granted, notGranted] });
    expectInvalid(await app.get('/api/v1/accounts', twoGranted.key), 'entityId');
  });

  it('reads an entityId case-insensitively, as UUIDs are (uppercase spelling of a granted business, 200)', async () => {
    const lower = await app.get(`/api/v1/accounts?entityId=${granted}`, limitedKey);
    const upperLimited = await app.get(`/api/v1/accounts?entityId=${granted.toUpperCase()}`, limitedKey);
    expect(upperLimited.status, upperLimited.text.slice(0, 200)).to.equal(200);
    expect(upperLimited.body).to.deep.equal(lower.body);
    const upperUnlimited = await app.get(`/api/v1/accounts?entityId=${granted.toUpperCase()}`, firm.key);
    expect(upperUnlimited.status, upperUnlimited.text.slice(0, 200)).to.equal(200);
    expect(upperUnlimited.body).to.deep.equal(lower.body);
    expectError(await app.get(`/api/v1/accounts?entityId=${notGranted.toUpperCase()}`, limitedKey), 403, 'entity_not_allowed');
  });

  it('refuses a malformed entityId ("entityId:", 422 validation_failed)', async () => {
    expectInvalid(await app.get('/api/v1/accounts?entityId=not-a-uuid', firm.key), 'entityId');
    expectInvalid(await app.get(`/api/v1/accounts?entityId=${granted}x`, limitedKey), 'entityId');
    expectInvalid(await app.get('/api/v1/accounts?entityId=', firm.key), 'entityId');
  });

  it('lets a limited key see only its granted businesses in GET /businesses', async () => {
    const res = await app.get('/api/v1/businesses', limitedKey);
    expect(res.status).to.equal(200);
    expect((res.body.businesses as Array<{ id: string }>).map((b) => b.id)).to.deep.equal([granted]);
  });
});
