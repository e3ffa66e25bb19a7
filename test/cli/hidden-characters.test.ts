import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { accountIdByName } from '../support/factories.js';
import { CliHarness } from './support.js';

/**
 * The admin command takes the same free text and vendor names as the API: a bank statement's
 * descriptions (the review queue, the register) and vendors, and a bill's vendor. They refuse
 * what the API refuses: control characters and bidirectional overrides in a description
 * (newline and tab aside), invisible characters in a vendor name.
 */

describe('daybook: hidden characters in descriptions and vendor names', () => {
  let cli: CliHarness;
  let businessId: string;

  beforeEach(async () => {
    cli = new CliHarness();
    const accountId = await cli.createAccount();
    businessId = await cli.createBusiness(accountId, ['--name', 'Lakeside Bakery']);
  });
  afterEach(() => cli.cleanup());

  const rowCount = (table: string): number => cli.withDb((db) => Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: bigint }).n));

  async function importStatement(rows: string[]) {
    const path = join(cli.dir, 'statement.csv');
    writeFileSync(path, ['date,description,amount,vendor', ...rows].join('\n'));
    return cli.run(['import', 'bank', '--business', businessId, '--file', path]);
  }

  describe('import bank', () => {
    const refused: Array<[what: string, char: string, shown: string]> = [
      ['a right-to-left override', '\u202e', '\\u202e'],
      ['NUL', '\u0000', '\\u0000'],
      ['ESC', '\u001b', '\\u001b'],
      ['BEL', '\u0007', '\\u0007'],
      ['DEL', '\u007f', '\\u007f'],
    ];
    for (const [what, char, shown] of refused) {
      it(`refuses a description holding ${what}, naming the row, and imports nothing`, async () => {
        const result = await importStatement(['2026-03-01,Coffee,-4.50,', `2026-03-02,"Flour${char}Mill",-62.00,`]);
        expect(result.code, result.stderr).to.equal(2);
        expect(result.stderr).to.equal(
          `daybook: row 2: description "Flour${shown}Mill" must not contain control characters (other than newline and tab) or bidirectional override marks\n`,
        );
        expect(rowCount('transactions')).to.equal(0);
      });
    }

    it('keeps a tab and a line break inside a quoted description', async () => {
      const result = await importStatement(['2026-03-02,"Flour\tMill\nsecond line",-62.00,']);
      expect(result.code, result.stderr).to.equal(0);
      expect(cli.withDb((db) => db.prepare('SELECT description FROM transactions').all())).to.deep.equal([{ description: 'Flour\tMill\nsecond line' }]);
    });

    it('refuses a vendor with a zero-width space, naming the row (data rows count from 1), and creates no vendor', async () => {
      const result = await importStatement(['2026-03-02,Flour,-62.00,Miller\u200b & Sons']);
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stderr).to.equal('daybook: row 1: vendor "Miller\u200b & Sons" must not contain invisible characters (such as a zero-width space or a soft hyphen)\n');
      expect(rowCount('vendors')).to.equal(0);
    });
  });

  describe('bill create', () => {
    it('refuses a --vendor with a soft hyphen (exit 2, "--vendor:"), writing nothing', async () => {
      const account = cli.withDb((db) => accountIdByName(db, businessId, 'Office Supplies'));
      const result = await cli.run([
        'bill',
        'create',
        '--business',
        businessId,
        '--vendor',
        'Mil\u00adler & Sons',
        '--number',
        'A-1001',
        '--issue-date',
        '2026-03-02',
        '--due-date',
        '2026-04-01',
        '--amount-cents',
        '125000',
        '--account',
        account,
      ]);
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stderr).to.equal('daybook: --vendor: must not contain invisible characters (such as a zero-width space or a soft hyphen)\n');
      expect([rowCount('vendors'), rowCount('bills')]).to.deep.equal([0, 0]);
    });
  });
});
