import { expect } from 'chai';
import { getBusiness } from '../../src/books/businesses.js';
import { inTransaction } from '../../src/db/connection.js';
import { postDeposit } from '../support/factories.js';
import { CliHarness, expectBadArguments, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';

/** `daybook verify`: the stored balances against the journal lines, over a books file made through the CLI. */
describe('daybook verify', () => {
  let cli: CliHarness;
  let businessId: string;

  beforeEach(async () => {
    cli = new CliHarness();
    businessId = await cli.createBusiness(await cli.createAccount(), ['--name', 'Lakeside Bakery']);
    cli.withDb((db) =>
      inTransaction(db, () => {
        postDeposit(db, cli.clock, businessId, '2026-01-05', 500_000n);
        postDeposit(db, cli.clock, businessId, '2026-02-10', 25_000n);
      }),
    );
  });
  afterEach(() => cli.cleanup());

  it('says all agree when they do: 4 lines, 10 stored sums (2 accounts x 2 days, 2 months and 1 year)', async () => {
    const result = await cli.run(['verify', '--business', businessId]);
    expectOk(result);
    expect(result.stdout).to.equal('Checked 10 stored balances of Lakeside Bakery against 4 journal lines: all agree.\n');
    expect(parseOneObject((await cli.run(['--json', 'verify', '--business', businessId])).stdout)).to.deep.equal({
      businessId,
      lines: 4,
      storedBalances: 10,
      mismatches: 0,
    });
  });

  it('exits 3 naming each stored sum that differs from the lines', async () => {
    const bank = cli.withDb((db) => {
      getBusiness(db, businessId);
      const id = (db.prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND system_role = 'bank'").get(businessId) as { id: string }).id;
      db.prepare("UPDATE ledger_balances SET debit_cents = debit_cents + 1 WHERE business_id = ? AND ledger_account_id = ? AND span = 'year'").run(businessId, id);
      return id;
    });
    const result = await cli.run(['verify', '--business', businessId]);
    expect(result.code).to.equal(3);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal(
      `daybook: year from 2026-01-01, account ${bank}, basis both: stored debits 525001, credits 0; lines debits 525000, credits 0\n` +
        'daybook: 1 stored balances disagree with the journal; checked 10 stored balances of Lakeside Bakery against 4 journal lines\n',
    );
  });

  it('with --json prints one object holding the differences, and still exits 3', async () => {
    const bank = cli.withDb((db) => {
      const id = (db.prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND system_role = 'bank'").get(businessId) as { id: string }).id;
      db.prepare("UPDATE ledger_balances SET credit_cents = credit_cents + 7 WHERE business_id = ? AND ledger_account_id = ? AND span = 'day' AND period_start = '2026-02-10'").run(businessId, id);
      return id;
    });
    const result = await cli.run(['--json', 'verify', '--business', businessId]);
    expect(result.code).to.equal(3);
    expect(parseOneObject(result.stdout)).to.deep.equal({
      businessId,
      lines: 4,
      storedBalances: 10,
      mismatches: 1,
      differences: [
        {
          span: 'day',
          periodStart: '2026-02-10',
          accountId: bank,
          basis: 'both',
          stored: { debitCents: '25000', creditCents: '7' },
          fromLines: { debitCents: '25000', creditCents: '0' },
        },
      ],
    });
    expect(result.stderr).to.match(/^daybook: 1 stored balances disagree with the journal; checked 10 stored balances/);
  });

  it('refuses an unknown business (exit 2)', async () => {
    expectBadArguments(await cli.run(['verify', '--business', UNKNOWN_ID]), /^daybook: no business with id /);
  });
});
