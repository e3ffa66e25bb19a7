import { expect } from 'chai';
import { one } from '../../src/db/statements.js';
import { CliHarness, expectBadArguments, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';

interface TenantRow {
  name: string;
  plan: string;
  api_access: bigint;
  billing_state: string;
  rate_limit_mode: string;
  rate_limit_reads: bigint | null;
  rate_limit_writes: bigint | null;
}

describe('daybook account', () => {
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  const tenantRow = (id: string) => cli.withDb((db) => one<TenantRow>(db, 'SELECT * FROM tenants WHERE id = ?', id));

  describe('account create', () => {
    it('creates a small-plan account on a fresh file and prints its id', async () => {
      const result = await cli.run(['account', 'create', '--name', 'Harbor & Pine']);
      expectOk(result);
      const id = /^id: (\S+)$/m.exec(result.stdout)?.[1];
      expect(result.stdout).to.contain('Account created: Harbor & Pine');
      expect(result.stderr).to.equal('');
      expect(tenantRow(id!)).to.include({ name: 'Harbor & Pine', plan: 'small', billing_state: 'active', rate_limit_mode: 'plan' });
    });

    it('prints {id, ...account} with --json', async () => {
      const tenant = await cli.json<Record<string, unknown>>(['account', 'create', '--name', 'Firm', '--plan', 'middle']);
      expect(tenant).to.include({ name: 'Firm', plan: 'middle', apiAccess: true, billingState: 'active', createdAt: '2026-03-15T12:00:00.000Z' });
      expect(tenant.id).to.be.a('string');
      expect(tenant.rateLimit).to.deep.equal({ mode: 'plan' });
      expect(tenantRow(tenant.id as string)?.plan).to.equal('middle');
    });

    it('refuses a missing --name, a blank or over-long name, and an unknown plan (exit 2)', async () => {
      expectBadArguments(await cli.run(['account', 'create']), /required option '--name <name>'/);
      expectBadArguments(await cli.run(['account', 'create', '--name', '  ']), /--name/);
      expectBadArguments(await cli.run(['account', 'create', '--name', 'x'.repeat(201)]), /1 to 200 characters/);
      expectBadArguments(await cli.run(['account', 'create', '--name', 'x', '--plan', 'huge']), /small, middle, large/);
    });

    it('refuses a name with control characters, as the API does, and echoes them escaped on one line (exit 2)', async () => {
      const result = await cli.run(['account', 'create', '--name', 'Bell\u0007 and\nnewline']);
      expectBadArguments(result, /must not be blank or contain control characters/);
      expect(result.stderr).to.contain('Bell\\u0007');
      expect(result.stderr).not.to.match(/[\u0000-\u0009\u000b-\u001f]/);
      const escape = await cli.run(['account', 'create', '--name', '\u001b[31mRed']);
      expectBadArguments(escape, /control characters/);
      expect(escape.stderr).not.to.contain('\u001b');
    });
  });

  describe('account set', () => {
    it('changes billing, API access and plan', async () => {
      const id = await cli.createAccount();
      const result = await cli.run(['account', 'set', '--id', id, '--billing', 'past_due', '--api-access', 'off', '--plan', 'large']);
      expectOk(result);
      expect(result.stdout).to.contain('Account updated');
      expect(tenantRow(id)).to.include({ billing_state: 'past_due', api_access: 0n, plan: 'large' });
    });

    it('sets custom rate budgets, then back to the plan, then off', async () => {
      const id = await cli.createAccount();
      const custom = await cli.json(['account', 'set', '--id', id, '--rate-limit', '100000/10000']);
      expect(custom.rateLimit).to.deep.equal({ mode: 'custom', readsPerWindow: 100000, writesPerWindow: 10000 });
      expect(tenantRow(id)).to.include({ rate_limit_mode: 'custom', rate_limit_reads: 100000n, rate_limit_writes: 10000n });

      expectOk(await cli.run(['account', 'set', '--id', id, '--rate-limit', 'plan']));
      expect(tenantRow(id)).to.include({ rate_limit_mode: 'plan', rate_limit_reads: null, rate_limit_writes: null });

      const off = await cli.run(['account', 'set', '--id', id, '--rate-limit', 'off']);
      expectOk(off);
      expect(off.stdout).to.contain('rate limit off');
      expect(tenantRow(id)).to.include({ rate_limit_mode: 'off', rate_limit_reads: null, rate_limit_writes: null });
    });

    it('refuses a call with no change option (exit 2)', async () => {
      const id = await cli.createAccount();
      expectBadArguments(await cli.run(['account', 'set', '--id', id]), /nothing to change/);
    });

    for (const bad of ['100000', '100000/', '/10', '0/10', '10/0', '1.5/10', 'ten/ten', '10/10/10', 'PLAN', '2000000000/1']) {
      it(`refuses --rate-limit ${bad} (exit 2)`, async () => {
        const id = await cli.createAccount();
        expectBadArguments(await cli.run(['account', 'set', '--id', id, '--rate-limit', bad]), /--rate-limit/);
        expect(tenantRow(id)?.rate_limit_mode).to.equal('plan');
      });
    }

    it('refuses bad enum values and an unknown or malformed id (exit 2)', async () => {
      const id = await cli.createAccount();
      expectBadArguments(await cli.run(['account', 'set', '--id', id, '--billing', 'late']), /active, past_due/);
      expectBadArguments(await cli.run(['account', 'set', '--id', id, '--api-access', 'yes']), /on, off/);
      expectBadArguments(await cli.run(['account', 'set', '--id', UNKNOWN_ID, '--plan', 'large']), /no such account/i);
      expectBadArguments(await cli.run(['account', 'set', '--id', 'nope', '--plan', 'large']), /--id/);
    });

    it('refuses a plan that cannot hold the active keys (exit 2) and changes nothing', async () => {
      const id = await cli.createAccount(['--plan', 'middle']);
      for (let n = 0; n < 3; n += 1) await cli.createKey(id);
      expectBadArguments(await cli.run(['account', 'set', '--id', id, '--plan', 'small']), /3 active keys/);
      expect(tenantRow(id)?.plan).to.equal('middle');
    });

    it('prints the updated account as one JSON object', async () => {
      const id = await cli.createAccount();
      const result = await cli.run(['account', 'set', '--json', '--id', id, '--billing', 'past_due']);
      expectOk(result);
      expect(parseOneObject<Record<string, unknown>>(result.stdout)).to.include({ id, billingState: 'past_due' });
    });
  });
});
