import { expect } from 'chai';
import { lockedThrough } from '../../src/books/periods.js';
import { one } from '../../src/db/statements.js';
import { CliHarness, expectBadArguments, expectOk, UNKNOWN_ID } from './support.js';

describe('daybook period lock', () => {
  let cli: CliHarness;
  let businessId: string;
  beforeEach(async () => {
    cli = new CliHarness();
    businessId = await cli.createBusiness(await cli.createAccount());
  });
  afterEach(() => cli.cleanup());

  it('locks periods through a date, and only forward', async () => {
    const first = await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-01-31']);
    expectOk(first);
    expect(first.stdout).to.contain('locked through 2026-01-31');
    expect(await cli.json(['period', 'lock', '--business', businessId, '--through', '2026-02-28'])).to.deep.equal({
      businessId,
      lockedThrough: '2026-02-28',
    });
    expectBadArguments(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-02-28']), /only move forward/);
    expectBadArguments(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-01-31']), /only move forward/);
    expect(cli.withDb((db) => lockedThrough(db, businessId))).to.equal('2026-02-28');
  });

  it('refuses a bad date, an unknown business and missing options (exit 2)', async () => {
    expectBadArguments(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-02-30']), /--through/);
    expectBadArguments(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-1-31']), /YYYY-MM-DD/);
    expectBadArguments(await cli.run(['period', 'lock', '--business', UNKNOWN_ID, '--through', '2026-01-31']), /no such business/i);
    expectBadArguments(await cli.run(['period', 'lock', '--business', businessId]), /--through/);
    expect(cli.withDb((db) => lockedThrough(db, businessId))).to.equal(null);
  });
});

describe('daybook rate set', () => {
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  const storedRate = (currency: string, date: string) =>
    cli.withDb((db) => one<{ usd_per_unit: string; source: string }>(db, 'SELECT * FROM exchange_rates WHERE currency = ? AND rate_date = ?', currency, date));

  it("normalises '1.0850' to '1.085' and stores it as a manual rate", async () => {
    const result = await cli.run(['rate', 'set', '--currency', 'EUR', '--date', '2026-03-01', '--usd-per-unit', '1.0850']);
    expectOk(result);
    expect(result.stdout).to.equal('Rate set: 1 EUR = 1.085 USD on 2026-03-01 (manual)\n');
    expect(storedRate('EUR', '2026-03-01')).to.include({ usd_per_unit: '1.085', source: 'manual' });
  });

  it('replaces the rate of the same day and prints one JSON object', async () => {
    await cli.json(['rate', 'set', '--currency', 'GBP', '--date', '2026-03-01', '--usd-per-unit', '1.25']);
    const rate = await cli.json(['rate', 'set', '--currency', 'GBP', '--date', '2026-03-01', '--usd-per-unit', '1.2700']);
    expect(rate).to.deep.equal({ currency: 'GBP', date: '2026-03-01', usdPerUnit: '1.27', source: 'manual' });
    expect(storedRate('GBP', '2026-03-01')?.usd_per_unit).to.equal('1.27');
  });

  it('refuses USD or an unknown currency, a bad date and a bad rate (exit 2)', async () => {
    const set = (currency: string, date: string, rate: string) => cli.run(['rate', 'set', '--currency', currency, '--date', date, '--usd-per-unit', rate]);
    expectBadArguments(await set('USD', '2026-03-01', '1'), /CAD, EUR, GBP, MXN/);
    expectBadArguments(await set('eur', '2026-03-01', '1'), /--currency/);
    expectBadArguments(await set('EUR', '2026-02-30', '1'), /--date/);
    expectBadArguments(await set('EUR', '2026-03-01', '0'), /usdPerUnit: must be greater than zero/);
    expectBadArguments(await set('EUR', '2026-03-01', '-1.2'), /usdPerUnit/);
    expectBadArguments(await set('EUR', '2026-03-01', '1.00000000001'), /usdPerUnit/);
    expect(cli.withDb((db) => one<{ n: bigint }>(db, 'SELECT count(*) AS n FROM exchange_rates')?.n)).to.equal(0n);
  });
});
