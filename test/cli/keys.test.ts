import { expect } from 'chai';
import { authenticateKey, fingerprintKey } from '../../src/books/keys.js';
import { all, one } from '../../src/db/statements.js';
import { CliHarness, expectBadArguments, expectOk, UNKNOWN_ID } from './support.js';

interface ListedKey {
  id: string;
  name: string;
  access: string;
  businessIds: string[] | null;
  expiresOn: string | null;
  revokedAt: string | null;
}

describe('daybook key', () => {
  let cli: CliHarness;
  let accountId: string;
  beforeEach(async () => {
    cli = new CliHarness();
    accountId = await cli.createAccount();
  });
  afterEach(() => cli.cleanup());

  describe('key create', () => {
    it('prints the key once on its own line, with a warning and the key id', async () => {
      const result = await cli.run(['key', 'create', '--account', accountId, '--name', 'bookkeeping app', '--access', 'read-write']);
      expectOk(result);
      const lines = result.stdout.trimEnd().split('\n');
      const key = lines.find((line) => /^dbk_[0-9A-Za-z]{49}$/.test(line));
      const id = /^id: (\S+)$/m.exec(result.stdout)?.[1];
      expect(key, 'a line holding only the key').to.be.a('string');
      expect(result.stdout).to.match(/shown once and cannot be recovered/);
      expect(result.stderr).to.equal('');
      const row = cli.withDb((db) => one<Record<string, unknown>>(db, 'SELECT * FROM api_keys WHERE id = ?', id));
      expect(row).to.include({ tenant_id: accountId, name: 'bookkeeping app', access: 'read_write', fingerprint: fingerprintKey(key!) });
      expect(JSON.stringify(row)).not.to.contain(key!);
      expect(cli.withDb((db) => authenticateKey(db, cli.clock, key!)?.keyId)).to.equal(id);
    });

    it('limits a key to the given businesses and prints {id, key, ...} with --json', async () => {
      const first = await cli.createBusiness(accountId);
      const second = await cli.createBusiness(accountId);
      const created = await cli.json<ListedKey & { key: string; alreadyExpired: boolean }>([
        'key', 'create', '--account', accountId, '--name', 'reports', '--access', 'read',
        '--business', first, '--business', second, '--expires', '2026-12-31',
      ]);
      expect(created).to.include({ name: 'reports', access: 'read', expiresOn: '2026-12-31', revokedAt: null, alreadyExpired: false });
      expect(created.key).to.match(/^dbk_/);
      expect(created.businessIds).to.have.members([first, second]);
      const granted = cli.withDb((db) => all<{ business_id: string }>(db, 'SELECT business_id FROM api_key_businesses WHERE api_key_id = ?', created.id));
      expect(granted.map((row) => row.business_id)).to.have.members([first, second]);
    });

    it('creates a key with a past --expires but says on stderr that it is already expired', async () => {
      const result = await cli.run(['key', 'create', '--account', accountId, '--name', 'old', '--access', 'read', '--expires', '2026-03-14']);
      expectOk(result);
      expect(result.stderr).to.match(/^daybook: warning: the key is already expired \(it worked through 2026-03-14; today is 2026-03-15\)/);
      expect(result.stderr.trimEnd().split('\n')).to.have.length(1);
      const key = result.stdout.split('\n').find((line) => line.startsWith('dbk_'))!;
      expect(cli.withDb((db) => authenticateKey(db, cli.clock, key))).to.equal(null);
    });

    it('keeps stdout to one JSON object when the key is already expired', async () => {
      const result = await cli.run(['--json', 'key', 'create', '--account', accountId, '--name', 'old', '--access', 'read', '--expires', '2020-01-01']);
      expectOk(result);
      expect(JSON.parse(result.stdout)).to.include({ alreadyExpired: true, expiresOn: '2020-01-01' });
      expect(result.stderr).to.match(/^daybook: warning: [^\n]+\n$/);
    });

    it('refuses a key beyond the plan (small: 2 active keys) with exit 2, and writes nothing', async () => {
      await cli.createKey(accountId);
      await cli.createKey(accountId);
      expectBadArguments(await cli.run(['key', 'create', '--account', accountId, '--name', 'third', '--access', 'read']), /small plan allows 2/);
      expect(cli.withDb((db) => one<{ n: bigint }>(db, 'SELECT count(*) AS n FROM api_keys')?.n)).to.equal(2n);
    });

    it('allows a new key once one is revoked', async () => {
      const first = await cli.createKey(accountId);
      await cli.createKey(accountId);
      expectOk(await cli.run(['key', 'revoke', '--id', first.id]));
      expectOk(await cli.run(['key', 'create', '--account', accountId, '--name', 'third', '--access', 'read']));
    });

    it('refuses a business of another account (exit 2)', async () => {
      const otherAccount = await cli.createAccount();
      const otherBusiness = await cli.createBusiness(otherAccount);
      expectBadArguments(
        await cli.run(['key', 'create', '--account', accountId, '--name', 'x', '--access', 'read', '--business', otherBusiness]),
        /is not a business of account/,
      );
    });

    it('refuses bad arguments (exit 2)', async () => {
      const base = ['key', 'create', '--account', accountId, '--name', 'x'];
      expectBadArguments(await cli.run(base), /--access/);
      expectBadArguments(await cli.run([...base, '--access', 'write']), /read, read-write/);
      expectBadArguments(await cli.run([...base, '--access', 'read', '--expires', '2026-02-30']), /--expires/);
      expectBadArguments(await cli.run([...base, '--access', 'read', '--expires', 'tomorrow']), /YYYY-MM-DD/);
      expectBadArguments(await cli.run([...base, '--access', 'read', '--business', 'nope']), /--business/);
      expectBadArguments(await cli.run(['key', 'create', '--account', UNKNOWN_ID, '--name', 'x', '--access', 'read']), /no such account/i);
    });
  });

  describe('key list', () => {
    it('prints a table of keys without any key value', async () => {
      const created = await cli.createKey(accountId, ['--expires', '2026-06-30']);
      const result = await cli.run(['key', 'list', '--account', accountId]);
      expectOk(result);
      const [header, row] = result.stdout.trimEnd().split('\n');
      expect(header).to.match(/^ID\s+NAME\s+ACCESS\s+BUSINESSES\s+EXPIRES\s+REVOKED$/);
      expect(row).to.contain(created.id).and.contain('test key').and.contain('all').and.contain('2026-06-30');
      expect(result.stdout).not.to.contain(created.key);
    });

    it('shows revokedAt after key revoke, with --json as {keys: [...]}', async () => {
      const created = await cli.createKey(accountId);
      cli.clock.advanceDays(1);
      const revoked = await cli.run(['key', 'revoke', '--id', created.id]);
      expectOk(revoked);
      expect(revoked.stdout).to.contain('revoked at 2026-03-16T12:00:00.000Z');
      const { keys } = await cli.json<{ keys: ListedKey[] }>(['key', 'list', '--account', accountId]);
      expect(keys).to.have.length(1);
      expect(keys[0]).to.include({ id: created.id, revokedAt: '2026-03-16T12:00:00.000Z', access: 'read' });
      expect(JSON.stringify(keys)).not.to.contain(created.key);
    });

    it('says so when an account has no keys, and refuses an unknown account (exit 2)', async () => {
      expect((await cli.run(['key', 'list', '--account', accountId])).stdout).to.equal('No keys.\n');
      expectBadArguments(await cli.run(['key', 'list', '--account', UNKNOWN_ID]), /no such account/i);
    });
  });

  describe('key revoke', () => {
    it('stops the key from authenticating and is harmless to repeat', async () => {
      const created = await cli.createKey(accountId);
      expectOk(await cli.run(['key', 'revoke', '--id', created.id]));
      expect(cli.withDb((db) => authenticateKey(db, cli.clock, created.key))).to.equal(null);
      const again = await cli.json(['key', 'revoke', '--id', created.id]);
      expect(again).to.include({ id: created.id, alreadyRevoked: true });
    });

    it('refuses an unknown or missing id (exit 2)', async () => {
      expectBadArguments(await cli.run(['key', 'revoke', '--id', UNKNOWN_ID]), /no such key/i);
      expectBadArguments(await cli.run(['key', 'revoke']), /--id/);
    });
  });
});
