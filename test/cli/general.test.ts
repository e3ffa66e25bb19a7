import { expect } from 'chai';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { one } from '../../src/db/statements.js';
import { CliHarness, expectBadArguments, expectOk, expectOneErrorLine, parseOneObject } from './support.js';

describe('daybook (global behaviour)', () => {
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  describe('help', () => {
    it('prints the commands on stdout and exits 0 for --help', async () => {
      const result = await cli.run(['--help']);
      expectOk(result);
      for (const command of ['serve', 'migrate', 'demo', 'account', 'business', 'key', 'period', 'rate']) {
        expect(result.stdout).to.match(new RegExp(`^  ${command}\\b`, 'm'));
      }
      expect(result.stdout).to.contain('--db <path>').and.contain('--json');
      expect(result.stderr).to.equal('');
    });

    it('exits 0 for a subcommand --help, naming its options', async () => {
      const result = await cli.run(['key', 'create', '--help']);
      expectOk(result);
      expect(result.stdout).to.contain('--access <access>').and.contain('--expires <YYYY-MM-DD>');
    });
  });

  describe('bad arguments (exit 2, one line on stderr)', () => {
    it('refuses no command, a group without its command, and an unknown command', async () => {
      expectBadArguments(await cli.run([]), /missing command/);
      expectBadArguments(await cli.run(['key']), /missing command \(usage: daybook key/);
      expectBadArguments(await cli.run(['ledger', 'close']), /unknown command 'ledger'/);
      expectBadArguments(await cli.run(['key', 'rotate']), /unknown command 'rotate'/);
    });

    it('refuses an unknown option, a missing option value and extra arguments', async () => {
      expectBadArguments(await cli.run(['account', 'create', '--name', 'x', '--colour', 'red']), /unknown option '--colour'/);
      expectBadArguments(await cli.run(['account', 'create', '--name']), /argument missing/);
      expectBadArguments(await cli.run(['account', 'create', '--name', 'x', 'extra']), /too many arguments/);
    });

    it('refuses --port out of range for serve before starting anything', async () => {
      expectBadArguments(await cli.run(['serve', '--port', '70000']), /0 to 65535/);
      expectBadArguments(await cli.run(['demo', '--port', 'http']), /--port/);
    });

    it('refuses a bad configuration value for serve with one line naming the setting', async () => {
      expectBadArguments(await cli.run(['serve'], { env: { DAYBOOK_SQLITE_SYNCHRONOUS: 'sometimes' } }), /DAYBOOK_SQLITE_SYNCHRONOUS/);
    });

    it('refuses demo --db on a file that already holds books', async () => {
      await cli.createAccount();
      expectBadArguments(await cli.run(['demo', '--port', '0']), /already exists/);
      expect(cli.withDb((db) => one<{ n: bigint }>(db, 'SELECT count(*) AS n FROM tenants')?.n)).to.equal(1n);
    });
  });

  describe('unexpected failures', () => {
    it('exits 1 with one line when the books file cannot be opened', async () => {
      const directory = join(cli.dir, 'a-directory');
      mkdirSync(directory);
      const result = await cli.run(['--db', directory, 'account', 'create', '--name', 'x'], { withoutDb: true });
      expect(result.code).to.equal(1);
      expect(result.stdout).to.equal('');
      expectOneErrorLine(result.stderr);
      expect(result.stderr).to.match(/^daybook: unexpected error: /);
    });

    it('exits 1 when the books file is not a database', async () => {
      writeFileSync(cli.dbPath, 'not sqlite at all, just text that is long enough to be a header'.repeat(20));
      const result = await cli.run(['key', 'list', '--account', '0b8e1f5e-1111-4111-8111-111111111111']);
      expect(result.code).to.equal(1);
      expectOneErrorLine(result.stderr);
    });
  });

  describe('--json', () => {
    it('is accepted before or after the command and prints exactly one object', async () => {
      const before = await cli.run(['--json', 'account', 'create', '--name', 'A']);
      const after = await cli.run(['account', 'create', '--name', 'B', '--json']);
      expect(parseOneObject<{ name: string }>(before.stdout).name).to.equal('A');
      expect(parseOneObject<{ name: string }>(after.stdout).name).to.equal('B');
    });
  });

  describe('--db', () => {
    it('defaults to DAYBOOK_DB when --db is not given', async () => {
      const other = join(cli.dir, 'nested', 'from-env.sqlite');
      const result = await cli.run(['--json', 'account', 'create', '--name', 'Env Firm'], { withoutDb: true, env: { DAYBOOK_DB: other } });
      expectOk(result);
      const { id } = parseOneObject<{ id: string }>(result.stdout);
      const listed = await cli.run(['--db', other, '--json', 'key', 'list', '--account', id], { withoutDb: true });
      expect(parseOneObject(listed.stdout)).to.deep.equal({ keys: [] });
    });

    it('refuses a missing books file for commands about existing records, and creates none (exit 2)', async () => {
      const typo = join(cli.dir, 'typo.sqlite');
      for (const args of [
        ['key', 'list', '--account', '00000000-0000-4000-8000-000000000001'],
        ['period', 'lock', '--business', '00000000-0000-4000-8000-000000000001', '--through', '2026-01-31'],
      ]) {
        expectBadArguments(await cli.run(['--db', typo, ...args], { withoutDb: true }), /no books at .*typo\.sqlite/);
        expect(existsSync(typo)).to.equal(false);
      }
    });
  });

  describe('migrate', () => {
    it('creates and migrates a fresh file, then reports it up to date', async () => {
      const first = await cli.json<{ db: string; applied: string[] }>(['migrate']);
      expect(first.db).to.equal(cli.dbPath);
      expect(first.applied.length).to.be.greaterThan(0);
      const second = await cli.run(['migrate']);
      expectOk(second);
      expect(second.stdout).to.equal(`Migrated ${cli.dbPath}: already up to date\n`);
    });
  });
});
