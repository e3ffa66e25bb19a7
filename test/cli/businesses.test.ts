import { expect } from 'chai';
import { all, one } from '../../src/db/statements.js';
import { CliHarness, expectBadArguments, expectOk, UNKNOWN_ID } from './support.js';

describe('daybook business create', () => {
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  it('creates an accrual business with the standard chart', async () => {
    const accountId = await cli.createAccount();
    const result = await cli.run(['business', 'create', '--account', accountId, '--name', 'Lakeside Bakery']);
    expectOk(result);
    const id = /^id: (\S+)$/m.exec(result.stdout)?.[1];
    expect(result.stdout).to.contain('Business created: Lakeside Bakery').and.contain('accrual basis');
    const row = cli.withDb((db) => one<Record<string, unknown>>(db, 'SELECT * FROM businesses WHERE id = ?', id));
    expect(row).to.include({ tenant_id: accountId, name: 'Lakeside Bakery', basis: 'accrual', payment_terms_days: null });
    const roles = cli.withDb((db) =>
      all<{ system_role: string }>(db, 'SELECT system_role FROM ledger_accounts WHERE business_id = ? AND system_role IS NOT NULL', id),
    );
    expect(roles.map((r) => r.system_role)).to.include.members(['bank', 'accounts_receivable', 'owner_equity', 'fx_gain_loss']);
  });

  it('takes --basis cash and --payment-terms-days, and prints {id, ...} with --json', async () => {
    const accountId = await cli.createAccount();
    const business = await cli.json(['business', 'create', '--account', accountId, '--name', 'Ridgeline', '--basis', 'cash', '--payment-terms-days', '14']);
    expect(business).to.include({ accountId, name: 'Ridgeline', basis: 'cash', paymentTermsDays: 14 });
    expect(business.id).to.be.a('string');
  });

  it('accepts payment terms of 0 and 365', async () => {
    const accountId = await cli.createAccount();
    expect((await cli.json(['business', 'create', '--account', accountId, '--name', 'A', '--payment-terms-days', '0'])).paymentTermsDays).to.equal(0);
    expect((await cli.json(['business', 'create', '--account', accountId, '--name', 'B', '--payment-terms-days', '365'])).paymentTermsDays).to.equal(365);
  });

  for (const days of ['400', '366', '-1', '1.5', '30d', '']) {
    it(`refuses --payment-terms-days '${days}' (exit 2)`, async () => {
      const accountId = await cli.createAccount();
      expectBadArguments(
        await cli.run(['business', 'create', '--account', accountId, '--name', 'X', '--payment-terms-days', days]),
        /payment-terms-days/,
      );
    });
  }

  it('refuses an unknown account, a bad basis and missing options (exit 2)', async () => {
    const accountId = await cli.createAccount();
    expectBadArguments(await cli.run(['business', 'create', '--account', UNKNOWN_ID, '--name', 'X']), /no such account/i);
    expectBadArguments(await cli.run(['business', 'create', '--account', accountId, '--name', 'X', '--basis', 'hybrid']), /accrual, cash/);
    expectBadArguments(await cli.run(['business', 'create', '--name', 'X']), /--account/);
    expectBadArguments(await cli.run(['business', 'create', '--account', accountId]), /--name/);
    const count = cli.withDb((db) => one<{ n: bigint }>(db, 'SELECT count(*) AS n FROM businesses')?.n);
    expect(count).to.equal(0n);
  });
});
