import { expect } from 'chai';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrations } from '../../src/db/migrations/index.js';
import { type Actor, type AuditRow, osUserName, recordAudit } from '../../src/store/audit.js';
import { getBusiness } from '../../src/books/businesses.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { sendInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice } from '../../src/books/invoices.js';
import { findOrCreateVendor } from '../../src/books/vendors.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { type Db, inTransaction, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { migrateThrough } from '../support/db.js';
import { accountIdByName, anyAccountIdByName, TEST_ACTOR } from '../support/factories.js';
import { ecbBody, type FakeProvider, startFakeProvider } from '../support/rate-provider.js';
import { CLI_TEST_ENV, CliHarness, expectBadArguments, expectOk, UNKNOWN_ID } from './support.js';

/**
 * The audit trail seen from the admin CLI: every write leaves its row(s) under the OS user and
 * the command (or the job), `daybook audit list` reads them back newest first, the
 * installation's rows (rates, restores, migrations) apart from any account's, and the table
 * stays append-only through the migration that rebuilt it.
 */

const ME = osUserName();
const MIGRATION_NAMES = migrations.map((migration) => migration.name);
const LATEST = MIGRATION_NAMES[MIGRATION_NAMES.length - 1]!;
const BEFORE_REBUILD = '20261127_0012_zero_usd_payments';
/** The migrations a books file stopped at BEFORE_REBUILD still needs: the rebuild and any after it. */
const SINCE_REBUILD = MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf(BEFORE_REBUILD) + 1);

/** One audit_log row as stored, detail parsed. */
interface Stored {
  tenant_id: string | null;
  business_id: string | null;
  actor_type: string;
  actor_id: string | null;
  actor_name: string;
  command: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  detail: Record<string, unknown>;
}

const byCli = (command: string) => ({ actor_type: 'cli', actor_id: null, actor_name: ME, command });
const INSTALLATION = { tenant_id: null, business_id: null };

function storedRows(db: Db, afterId = 0): Stored[] {
  return (
    db
      .prepare(
        `SELECT tenant_id, business_id, actor_type, actor_id, actor_name, command, action, subject_type, subject_id, detail_json
         FROM audit_log WHERE id > ? ORDER BY id`,
      )
      .all(afterId) as (Omit<Stored, 'detail'> & { detail_json: string })[]
  ).map(({ detail_json, ...row }) => ({ ...row, detail: JSON.parse(detail_json) as Record<string, unknown> }));
}

const lastIdIn = (db: Db) => Number(db.prepare('SELECT coalesce(max(id), 0) FROM audit_log').pluck().get());

/** The rows a command wrote: those after the last one before it ran. */
async function writesOf(cli: CliHarness, args: string[]): Promise<{ printed: Record<string, unknown>; rows: Stored[] }> {
  const before = existsSync(cli.dbPath) ? cli.withDb(lastIdIn) : 0;
  const printed = await cli.json(args);
  return { printed, rows: cli.withDb((db) => storedRows(db, before)) };
}

/** A sent invoice of 100.00 of Sales, issued 2026-03-01, due `dueDate`, written through the books functions. */
function sentInvoice(cli: CliHarness, businessId: string, dueDate: string): string {
  return cli.withDb((db) => {
    ensureServerSecrets(db, cli.clock);
    return inTransaction(db, () => {
      const business = getBusiness(db, businessId);
      const customer = findOrCreateCustomer(db, cli.clock, TEST_ACTOR, business.tenantId, { name: 'Harbor Cafe', email: 'ap@harbor.example' });
      const { invoiceId } = createInvoice(db, cli.clock, TEST_ACTOR, {
        business,
        customerId: customer.id,
        issueDate: '2026-03-01',
        dueDate,
        lines: [{ description: 'Work', quantity: '1', unitPriceCents: 10_000n, accountId: accountIdByName(db, business.id, 'Sales') }],
      });
      sendInvoice(db, cli.clock, TEST_ACTOR, invoiceId, { siteUrl: 'http://localhost:3000' });
      return invoiceId;
    });
  });
}

describe('daybook audit list: every writer leaves a row, who/what/when/which record/which business', () => {
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  describe('every CLI write leaves its rows under the OS user and the command', () => {
    let accountId: string;
    let businessId: string;
    const setUp = async () => {
      accountId = await cli.createAccount();
      businessId = await cli.createBusiness(accountId, ['--name', 'Lakeside Bakery']);
    };

    it('account create on new books: a books.migrate installation row naming every migration, then account.create', async () => {
      const { printed, rows } = await writesOf(cli, ['account', 'create', '--name', 'Harbor Firm']);
      const id = printed.id as string;
      expect(rows).to.deep.equal([
        { ...INSTALLATION, ...byCli('daybook account create'), action: 'books.migrate', subject_type: 'schema', subject_id: LATEST, detail: { applied: MIGRATION_NAMES } },
        { tenant_id: id, business_id: null, ...byCli('daybook account create'), action: 'account.create', subject_type: 'account', subject_id: id, detail: {} },
      ]);
      // Books already at the latest schema: the next command migrates nothing and records no migration.
      const set = await writesOf(cli, ['account', 'set', '--id', id, '--plan', 'large']);
      expect(set.rows).to.deep.equal([
        { tenant_id: id, business_id: null, ...byCli('daybook account set'), action: 'account.update', subject_type: 'account', subject_id: id, detail: { plan: 'large' } },
      ]);
    });

    it('daybook migrate: one books.migrate row on a new file, none when nothing was applied', async () => {
      const first = await writesOf(cli, ['migrate']);
      expect(first.printed).to.deep.equal({ db: cli.dbPath, applied: MIGRATION_NAMES });
      expect(first.rows).to.deep.equal([
        { ...INSTALLATION, ...byCli('daybook migrate'), action: 'books.migrate', subject_type: 'schema', subject_id: LATEST, detail: { applied: MIGRATION_NAMES } },
      ]);
      const again = await writesOf(cli, ['migrate']);
      expect(again.printed).to.deep.equal({ db: cli.dbPath, applied: [] });
      expect(again.rows).to.deep.equal([]);
    });

    it('business create, key create, key revoke and period lock: one row each', async () => {
      accountId = await cli.createAccount();
      const business = await writesOf(cli, ['business', 'create', '--account', accountId, '--name', 'Lakeside Bakery']);
      businessId = business.printed.id as string;
      expect(business.rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook business create'),
          action: 'business.create',
          subject_type: 'business',
          subject_id: businessId,
          detail: { name: 'Lakeside Bakery', basis: 'accrual' },
        },
      ]);

      const key = await writesOf(cli, ['key', 'create', '--account', accountId, '--name', 'Bookkeeping app', '--access', 'read-write']);
      const keyId = key.printed.id as string;
      expect(key.rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: null,
          ...byCli('daybook key create'),
          action: 'api_key.create',
          subject_type: 'api_key',
          subject_id: keyId,
          detail: { name: 'Bookkeeping app', access: 'read_write', businessIds: [], expiresOn: null },
        },
      ]);
      expect((await writesOf(cli, ['key', 'revoke', '--id', keyId])).rows).to.deep.equal([
        { tenant_id: accountId, business_id: null, ...byCli('daybook key revoke'), action: 'api_key.revoke', subject_type: 'api_key', subject_id: keyId, detail: {} },
      ]);

      expect((await writesOf(cli, ['period', 'lock', '--business', businessId, '--through', '2026-01-31'])).rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook period lock'),
          action: 'period.lock',
          subject_type: 'business',
          subject_id: businessId,
          detail: { through: '2026-01-31', previous: null },
        },
      ]);
    });

    it('rate set: an installation row (no account, no business), naming the rate it replaced', async () => {
      const set = (rate: string) => writesOf(cli, ['rate', 'set', '--currency', 'EUR', '--date', '2026-03-01', '--usd-per-unit', rate]);
      const rate = { currency: 'EUR', date: '2026-03-01', source: 'manual' };
      const first = await set('1.0850');
      expect(first.rows.slice(-1)).to.deep.equal([
        { ...INSTALLATION, ...byCli('daybook rate set'), action: 'rate.set', subject_type: 'exchange_rate', subject_id: 'EUR 2026-03-01', detail: { ...rate, usdPerUnit: '1.085' } },
      ]);
      // The first command on new books also migrated them.
      expect(first.rows.map((row) => row.action)).to.deep.equal(['books.migrate', 'rate.set']);
      expect((await set('1.09')).rows).to.deep.equal([
        {
          ...INSTALLATION,
          ...byCli('daybook rate set'),
          action: 'rate.set',
          subject_type: 'exchange_rate',
          subject_id: 'EUR 2026-03-01',
          detail: { ...rate, usdPerUnit: '1.09', replaced: '1.085' },
        },
      ]);
    });

    it('bill create (with its new vendor) and bill pay', async () => {
      await setUp();
      const officeSupplies = cli.withDb((db) => accountIdByName(db, businessId, 'Office Supplies'));
      const created = await writesOf(cli, [
        'bill', 'create', '--business', businessId, '--vendor', 'Miller & Sons', '--number', 'A-1001',
        '--issue-date', '2026-03-02', '--due-date', '2026-04-01', '--amount-cents', '125000', '--account', officeSupplies,
      ]);
      const billId = created.printed.id as string;
      const vendorId = cli.withDb((db) => db.prepare("SELECT id FROM vendors WHERE name = 'Miller & Sons'").pluck().get()) as string;
      expect(created.rows).to.deep.equal([
        { tenant_id: accountId, business_id: null, ...byCli('daybook bill create'), action: 'vendor.create', subject_type: 'vendor', subject_id: vendorId, detail: { name: 'Miller & Sons' } },
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook bill create'),
          action: 'bill.create',
          subject_type: 'bill',
          subject_id: billId,
          detail: { vendorId, number: 'A-1001', issueDate: '2026-03-02', dueDate: '2026-04-01', amountCents: '125000', accountId: officeSupplies },
        },
      ]);
      const paid = await writesOf(cli, ['bill', 'pay', '--id', billId, '--amount-cents', '25000', '--date', '2026-03-10']);
      expect(paid.rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook bill pay'),
          action: 'bill.payment',
          subject_type: 'bill_payment',
          subject_id: paid.printed.paymentId,
          detail: { billId, amountCents: '25000', date: '2026-03-10' },
        },
      ]);
    });

    it('import bank: one bank.import row for the whole statement, after the vendor it met', async () => {
      await setUp();
      const file = join(cli.dir, 'march.csv');
      writeFileSync(file, 'date,description,amount,vendor\n2026-03-01,Morning coffee,-4.50,Blue Bottle\n2026-03-02,Card sales payout,1250.00,\n');
      const { rows } = await writesOf(cli, ['import', 'bank', '--business', businessId, '--file', file]);
      const vendorId = cli.withDb((db) => db.prepare("SELECT id FROM vendors WHERE name = 'Blue Bottle'").pluck().get());
      expect(rows).to.deep.equal([
        { tenant_id: accountId, business_id: null, ...byCli('daybook import bank'), action: 'vendor.create', subject_type: 'vendor', subject_id: vendorId, detail: { name: 'Blue Bottle' } },
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook import bank'),
          action: 'bank.import',
          subject_type: 'business',
          subject_id: businessId,
          detail: { file: 'march.csv', rows: 2, imported: 2, duplicates: 0, alreadyRecorded: 0, queued: 1 },
        },
      ]);
    });

    it('vendor set --1099, and vendor, customer and ledger-account archive', async () => {
      await setUp();
      const vendorId = cli.withDb((db) => inTransaction(db, () => findOrCreateVendor(db, cli.clock, TEST_ACTOR, accountId, 'Bayside Oven Repair').vendor.id));
      const customerId = cli.withDb((db) => inTransaction(db, () => findOrCreateCustomer(db, cli.clock, TEST_ACTOR, accountId, { name: 'Harbor Cafe' }).id));
      const ledgerAccountId = cli.withDb((db) => anyAccountIdByName(db, businessId, 'Office Supplies'));

      expect((await writesOf(cli, ['vendor', 'set', '--id', vendorId, '--1099', 'yes'])).rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: null,
          ...byCli('daybook vendor set'),
          action: 'vendor.set_1099',
          subject_type: 'vendor',
          subject_id: vendorId,
          detail: { name: 'Bayside Oven Repair', from: false, to: true },
        },
      ]);
      expect((await writesOf(cli, ['vendor', 'archive', '--id', vendorId])).rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: null,
          ...byCli('daybook vendor archive'),
          action: 'vendor.archive',
          subject_type: 'vendor',
          subject_id: vendorId,
          detail: { name: 'Bayside Oven Repair', wasArchived: false },
        },
      ]);
      expect((await writesOf(cli, ['customer', 'archive', '--id', customerId])).rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: null,
          ...byCli('daybook customer archive'),
          action: 'customer.archive',
          subject_type: 'customer',
          subject_id: customerId,
          detail: { name: 'Harbor Cafe', wasArchived: false },
        },
      ]);
      const ledger = await writesOf(cli, ['ledger-account', 'archive', '--id', ledgerAccountId]);
      expect(ledger.rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook ledger-account archive'),
          action: 'ledger_account.archive',
          subject_type: 'ledger_account',
          subject_id: ledgerAccountId,
          detail: { code: ledger.printed.code, name: 'Office Supplies', wasArchived: false },
        },
      ]);
    });

    it('invoice void', async () => {
      await setUp();
      const invoiceId = sentInvoice(cli, businessId, '2026-03-31');
      expect((await writesOf(cli, ['invoice', 'void', '--id', invoiceId])).rows).to.deep.equal([
        {
          tenant_id: accountId,
          business_id: businessId,
          ...byCli('daybook invoice void'),
          action: 'invoice.void',
          subject_type: 'invoice',
          subject_id: invoiceId,
          detail: { number: 'INV-0001', previousStatus: 'sent', reversed: true },
        },
      ]);
    });

    it('restore: a books.restore installation row in the restored books (after a books.migrate row when the backup was older)', async () => {
      await setUp();
      const backup = join(cli.dir, 'backup.sqlite');
      expectOk(await cli.run(['backup', '--to', backup]));
      const backupLastId = cli.withDb(lastIdIn);
      const restored = join(cli.dir, 'restored.sqlite');
      const restoredRows = (path: string, after = 0) => {
        const db = openDb(path);
        try {
          return storedRows(db, after);
        } finally {
          db.close();
        }
      };
      expectOk(await cli.run(['--db', restored, 'restore', '--from', backup], { withoutDb: true }));
      expect(restoredRows(restored, backupLastId)).to.deep.equal([
        {
          ...INSTALLATION,
          ...byCli('daybook restore'),
          action: 'books.restore',
          subject_type: 'backup',
          subject_id: backup,
          detail: { from: backup, bytes: statSync(backup).size, replaced: false, schema: LATEST, migrated: [] },
        },
      ]);

      // A backup made before the audit-trail rebuild: migrated on restore, and both recorded.
      const older = join(cli.dir, 'older.sqlite');
      await migrateThrough(older, BEFORE_REBUILD);
      const intoOlder = join(cli.dir, 'restored-older.sqlite');
      expectOk(await cli.run(['--db', intoOlder, 'restore', '--from', older], { withoutDb: true }));
      expect(restoredRows(intoOlder)).to.deep.equal([
        { ...INSTALLATION, ...byCli('daybook restore'), action: 'books.migrate', subject_type: 'schema', subject_id: LATEST, detail: { applied: SINCE_REBUILD } },
        {
          ...INSTALLATION,
          ...byCli('daybook restore'),
          action: 'books.restore',
          subject_type: 'backup',
          subject_id: older,
          detail: { from: older, bytes: statSync(older).size, replaced: false, schema: BEFORE_REBUILD, migrated: SINCE_REBUILD },
        },
      ]);
    });
  });

  describe('audit list --account', () => {
    let accountId: string;
    let businessId: string;
    let otherAccountId: string;
    let otherBusinessId: string;
    let keyId: string;
    let invoiceId: string;
    const KEY_NAME = 'Bookkeeping app';

    /** An API key's write, recorded as the API records one (the books function, the key as actor). */
    const keyWrite = (tenantId: string, business: string, key: Actor, subjectId: string) =>
      cli.withDb((db) =>
        inTransaction(db, () => recordAudit(db, cli.clock, key, { tenantId, businessId: business, action: 'invoice.send', subjectType: 'invoice', subjectId, detail: { number: 'INV-0001' } })),
      );

    /**
     * Account A: created 2026-03-14 12:00, its business "Lakeside Bakery" at 23:59:59.999, a
     * lock at 2026-03-15 00:00 sharp, a key at 08:00 and that key's write at 09:00. Account B
     * (created between them) has a business and a key of the same name, which wrote too.
     */
    beforeEach(async () => {
      cli.clock.set('2026-03-14T12:00:00.000Z');
      accountId = await cli.createAccount(['--name', 'Harbor Firm']);
      otherAccountId = await cli.createAccount(['--name', 'Other Firm']);
      otherBusinessId = await cli.createBusiness(otherAccountId, ['--name', 'Other Shop']);
      cli.clock.set('2026-03-14T23:59:59.999Z');
      businessId = await cli.createBusiness(accountId, ['--name', 'Lakeside Bakery']);
      cli.clock.set('2026-03-15T00:00:00.000Z');
      expectOk(await cli.run(['period', 'lock', '--business', businessId, '--through', '2026-02-28']));
      cli.clock.set('2026-03-15T08:00:00.000Z');
      keyId = (await cli.createKey(accountId, ['--name', KEY_NAME])).id;
      const otherKeyId = (await cli.createKey(otherAccountId, ['--name', KEY_NAME])).id;
      cli.clock.set('2026-03-15T09:00:00.000Z');
      invoiceId = '5b0e1c9d-64a2-4d1e-9a43-1f7c8e2d0b6a';
      keyWrite(accountId, businessId, { type: 'api_key', id: keyId, name: KEY_NAME }, invoiceId);
      keyWrite(otherAccountId, otherBusinessId, { type: 'api_key', id: otherKeyId, name: KEY_NAME }, 'c0ffee00-0000-4000-8000-000000000000');
    });

    const list = (extra: string[] = [], account = accountId) => cli.json<{ rows: AuditRow[]; more: boolean }>(['audit', 'list', '--account', account, ...extra]);
    const cliActorOf = (command: string) => ({ type: 'cli', id: null, name: ME, command });
    /** [when, action, record] of each row, as compact as the assertions need. */
    const summary = (rows: AuditRow[]) => rows.map((row) => [row.at, row.action, row.subjectId]);

    it('lists the account\'s rows newest first, in the JSON row shape, and none of another account\'s', async () => {
      const { rows, more } = await list();
      expect(more).to.equal(false);
      expect(rows.map((row) => Object.keys(row))).to.deep.equal(rows.map(() => ['id', 'at', 'accountId', 'businessId', 'actor', 'action', 'subjectType', 'subjectId', 'detail']));
      expect(rows.map((row) => row.id)).to.deep.equal([...rows.map((row) => row.id)].sort((a, b) => b - a));
      const [keyRow, keyCreate, lock, business, account] = rows;
      expect(rows).to.have.length(5);
      expect(keyRow).to.deep.equal({
        id: keyRow!.id,
        at: '2026-03-15T09:00:00.000Z',
        accountId,
        businessId,
        actor: { type: 'api_key', id: keyId, name: KEY_NAME },
        action: 'invoice.send',
        subjectType: 'invoice',
        subjectId: invoiceId,
        detail: { number: 'INV-0001' },
      });
      expect(keyCreate).to.deep.include({ at: '2026-03-15T08:00:00.000Z', accountId, businessId: null, actor: cliActorOf('daybook key create'), action: 'api_key.create', subjectId: keyId });
      expect(lock).to.deep.equal({
        id: lock!.id,
        at: '2026-03-15T00:00:00.000Z',
        accountId,
        businessId,
        actor: cliActorOf('daybook period lock'),
        action: 'period.lock',
        subjectType: 'business',
        subjectId: businessId,
        detail: { through: '2026-02-28', previous: null },
      });
      expect(business).to.deep.include({ at: '2026-03-14T23:59:59.999Z', actor: cliActorOf('daybook business create'), action: 'business.create', subjectId: businessId });
      expect(account).to.deep.include({ at: '2026-03-14T12:00:00.000Z', accountId, businessId: null, actor: cliActorOf('daybook account create'), action: 'account.create' });

      const other = await list([], otherAccountId);
      expect(other.rows.map((row) => row.accountId)).to.deep.equal([otherAccountId, otherAccountId, otherAccountId, otherAccountId]);
      expect(other.rows.map((row) => row.action)).to.deep.equal(['invoice.send', 'api_key.create', 'business.create', 'account.create']);
    });

    it('prints a table: WHEN WHO WHAT RECORD BUSINESS, the writer as a phrase and the business by name', async () => {
      const result = await cli.run(['audit', 'list', '--account', accountId]);
      expectOk(result);
      expect(result.stderr).to.equal('');
      const lines = result.stdout.split('\n');
      expect(lines.pop()).to.equal('');
      const header = lines[0]!;
      expect(header).to.match(/^WHEN {22}WHO {2,}WHAT {2,}RECORD {2,}BUSINESS$/);
      const starts = ['WHEN', 'WHO', 'WHAT', 'RECORD', 'BUSINESS'].map((title) => header.indexOf(title));
      const cells = (line: string) => starts.map((start, column) => line.slice(start, starts[column + 1]).trimEnd());
      // Columns line up under their titles (a row whose last cells are empty ends early).
      for (const line of lines) for (const start of starts.slice(1)) if (line.length > start) expect(line.slice(start - 2, start), line).to.equal('  ');
      expect(lines.slice(1).map(cells)).to.deep.equal([
        ['2026-03-15T09:00:00.000Z', `key "${KEY_NAME}"`, 'invoice.send', `invoice ${invoiceId}`, 'Lakeside Bakery'],
        ['2026-03-15T08:00:00.000Z', `${ME} (daybook key create)`, 'api_key.create', `api_key ${keyId}`, ''],
        ['2026-03-15T00:00:00.000Z', `${ME} (daybook period lock)`, 'period.lock', `business ${businessId}`, 'Lakeside Bakery'],
        ['2026-03-14T23:59:59.999Z', `${ME} (daybook business create)`, 'business.create', `business ${businessId}`, 'Lakeside Bakery'],
        ['2026-03-14T12:00:00.000Z', `${ME} (daybook account create)`, 'account.create', `account ${accountId}`, ''],
      ]);
    });

    it('--limit N: the newest N rows; `more` and a note on stderr when older ones remain', async () => {
      const limited = await cli.run(['--json', 'audit', 'list', '--account', accountId, '--limit', '2']);
      expectOk(limited);
      const printed = JSON.parse(limited.stdout) as { rows: AuditRow[]; more: boolean };
      expect(printed.more).to.equal(true);
      expect(summary(printed.rows)).to.deep.equal([
        ['2026-03-15T09:00:00.000Z', 'invoice.send', invoiceId],
        ['2026-03-15T08:00:00.000Z', 'api_key.create', keyId],
      ]);
      expect(limited.stderr).to.equal('daybook: showing the newest 2 rows; older ones remain (raise --limit, or narrow with --since)\n');

      const exact = await cli.run(['--json', 'audit', 'list', '--account', accountId, '--limit', '5']);
      expectOk(exact);
      expect((JSON.parse(exact.stdout) as { more: boolean }).more).to.equal(false);
      expect(exact.stderr).to.equal('');
      const text = await cli.run(['audit', 'list', '--account', accountId, '--limit', '1']);
      expect(text.stdout.split('\n')).to.have.length(3);
      expect(text.stderr).to.equal('daybook: showing the newest 1 rows; older ones remain (raise --limit, or narrow with --since)\n');
    });

    it('--business keeps the rows about that business', async () => {
      expect(summary((await list(['--business', businessId])).rows)).to.deep.equal([
        ['2026-03-15T09:00:00.000Z', 'invoice.send', invoiceId],
        ['2026-03-15T00:00:00.000Z', 'period.lock', businessId],
        ['2026-03-14T23:59:59.999Z', 'business.create', businessId],
      ]);
    });

    it('--since D keeps rows written at or after the start of that day (UTC)', async () => {
      expect(summary((await list(['--since', '2026-03-15'])).rows)).to.deep.equal([
        ['2026-03-15T09:00:00.000Z', 'invoice.send', invoiceId],
        ['2026-03-15T08:00:00.000Z', 'api_key.create', keyId],
        ['2026-03-15T00:00:00.000Z', 'period.lock', businessId],
      ]);
      expect((await list(['--since', '2026-03-16'])).rows).to.deep.equal([]);
      expect((await cli.run(['audit', 'list', '--account', accountId, '--since', '2026-03-16'])).stdout).to.equal('No audit rows.\n');
    });

    it('--key NAME keeps the writes of this account\'s keys of that name, not the CLI\'s nor another account\'s', async () => {
      const { rows } = await list(['--key', KEY_NAME]);
      expect(rows.map((row) => [row.accountId, row.actor, row.action])).to.deep.equal([[accountId, { type: 'api_key', id: keyId, name: KEY_NAME }, 'invoice.send']]);
      expect((await list(['--key', 'Some other app'])).rows).to.deep.equal([]);
    });

    it('--installation lists only rows of no account: migrations and rates, never an account\'s', async () => {
      cli.clock.set('2026-03-15T10:00:00.000Z');
      expectOk(await cli.run(['rate', 'set', '--currency', 'GBP', '--date', '2026-03-13', '--usd-per-unit', '1.27']));
      const { rows, more } = await cli.json<{ rows: AuditRow[]; more: boolean }>(['audit', 'list', '--installation']);
      expect(more).to.equal(false);
      expect(rows.map((row) => [row.at, row.accountId, row.businessId, row.actor, row.action, row.subjectType, row.subjectId])).to.deep.equal([
        ['2026-03-15T10:00:00.000Z', null, null, cliActorOf('daybook rate set'), 'rate.set', 'exchange_rate', 'GBP 2026-03-13'],
        ['2026-03-14T12:00:00.000Z', null, null, cliActorOf('daybook account create'), 'books.migrate', 'schema', LATEST],
      ]);
      expect((await list()).rows.map((row) => row.action)).not.to.include.members(['rate.set', 'books.migrate']);
      const since = await cli.json<{ rows: AuditRow[] }>(['audit', 'list', '--installation', '--since', '2026-03-15', '--limit', '1']);
      expect(since.rows.map((row) => row.action)).to.deep.equal(['rate.set']);
      const text = await cli.run(['audit', 'list', '--installation']);
      expect(text.stdout.split('\n')[1]).to.match(new RegExp(`^2026-03-15T10:00:00\\.000Z  ${escape(`${ME} (daybook rate set)`)} +rate\\.set +exchange_rate GBP 2026-03-13$`));
    });

    it('refuses, exit 2 with one line: no scope, both scopes, an unknown account, another account\'s business, --business/--key with --installation, a bad --since, --limit 0', async () => {
      const before = cli.withDb(lastIdIn);
      const refused = async (args: string[], pattern: RegExp) => expectBadArguments(await cli.run(['audit', 'list', ...args]), pattern);
      await refused([], /^daybook: say whose trail: --account ID, or --installation/);
      await refused(['--account', accountId, '--installation'], /^daybook: give --account ID or --installation, not both\n$/);
      await refused(['--account', UNKNOWN_ID], /^daybook: No such account\.\n$/);
      await refused(['--account', accountId, '--business', otherBusinessId], new RegExp(`^daybook: business ${otherBusinessId} is not one of account ${accountId}'s businesses\n$`));
      await refused(['--account', accountId, '--business', UNKNOWN_ID], /is not one of account/);
      await refused(['--installation', '--business', businessId], /--business and --key need --account/);
      await refused(['--installation', '--key', KEY_NAME], /--business and --key need --account/);
      await refused(['--account', accountId, '--since', '2026-02-30'], /--since/);
      await refused(['--account', accountId, '--since', '15/03/2026'], /YYYY-MM-DD/);
      await refused(['--account', accountId, '--limit', '0'], /--limit.*Must be a whole number from 1 to 100000/);
      expect(cli.withDb(lastIdIn), 'a refused listing writes nothing').to.equal(before);
    });
  });

  describe('jobs', () => {
    it('the overdue sweep writes invoice.overdue rows as job "overdue", no command', async () => {
      const accountId = await cli.createAccount();
      const businessId = await cli.createBusiness(accountId, ['--name', 'Lakeside Bakery']);
      const late = sentInvoice(cli, businessId, '2026-03-10');
      const later = sentInvoice(cli, businessId, '2026-03-14');
      sentInvoice(cli, businessId, '2026-03-15');
      const before = cli.withDb(lastIdIn);
      expect((await cli.json<{ result: unknown }>(['jobs', 'run', 'overdue'])).result).to.deep.equal({ markedOverdue: 2 });
      const job = { actor_type: 'job', actor_id: null, actor_name: 'overdue', command: null };
      const overdue = (invoiceId: string, number: string) => ({
        tenant_id: accountId,
        business_id: businessId,
        ...job,
        action: 'invoice.overdue',
        subject_type: 'invoice',
        subject_id: invoiceId,
        detail: { number, asOf: '2026-03-15' },
      });
      const rows = cli.withDb((db) => storedRows(db, before));
      expect(rows).to.have.deep.members([overdue(late, 'INV-0001'), overdue(later, 'INV-0002')]);
      expect(rows).to.have.length(2);
      const listed = await cli.run(['audit', 'list', '--account', accountId, '--limit', '1']);
      expect(listed.stdout.split('\n')[1]).to.match(/^2026-03-15T12:00:00\.000Z  job overdue +invoice\.overdue +invoice [0-9a-f-]{36}  Lakeside Bakery$/);
    });

    describe('the rates job', () => {
      let provider: FakeProvider;
      before(async () => (provider = await startFakeProvider()));
      after(() => provider.close());

      it('stores each rate with a rate.set installation row as job "rates"', async () => {
        provider.reply = { body: ecbBody('2026-03-13', { USD: '1.0850', CAD: '1.4756', GBP: '0.8402', MXN: '21.70' }), contentType: 'text/xml' };
        expectOk(await cli.run(['migrate']));
        const before = cli.withDb(lastIdIn);
        const env = { ...CLI_TEST_ENV, DAYBOOK_FX_PROVIDER: 'ecb', DAYBOOK_FX_PROVIDER_URL: provider.url };
        const ran = await cli.run(['--json', 'jobs', 'run', 'rates'], { env });
        expectOk(ran);
        const rows = cli.withDb((db) => storedRows(db, before));
        expect(rows.map((row) => [row.tenant_id, row.business_id, row.actor_type, row.actor_id, row.actor_name, row.command, row.action, row.subject_id])).to.deep.equal(
          ['CAD', 'EUR', 'GBP', 'MXN'].map((currency) => [null, null, 'job', null, 'rates', null, 'rate.set', `${currency} 2026-03-13`]),
        );
      });
    });
  });

  describe('append-only after the rebuild', () => {
    let businessId: string;
    beforeEach(async () => {
      businessId = await cli.createBusiness(await cli.createAccount());
    });

    it('refuses UPDATE, DELETE and INSERT OR REPLACE of a row: the triggers came back with the table', () => {
      cli.withDb((db) => {
        const rows = storedRows(db);
        expect(() => db.prepare("UPDATE audit_log SET actor_name = 'someone else' WHERE id = 1").run()).to.throw(/audit_log rows are immutable/);
        expect(() => db.prepare('DELETE FROM audit_log WHERE id = 1').run()).to.throw(/audit_log rows are immutable/);
        expect(() =>
          db.prepare("INSERT OR REPLACE INTO audit_log (id, actor_type, actor_name, action, at) VALUES (1, 'job', 'x', 'forged', '2026-03-15T12:00:00.000Z')").run(),
        ).to.throw(/audit_log rows are immutable: a row with this id exists/);
        expect(storedRows(db)).to.deep.equal(rows);
      });
    });

    it('refuses an installation row naming a business, and a command on a writer that is not the CLI (CHECK)', () => {
      const insert = (tenantId: string | null, business: string | null, actorType: string, command: string | null) =>
        cli.withDb((db) =>
          db
            .prepare("INSERT INTO audit_log (tenant_id, business_id, actor_type, actor_name, command, action, at) VALUES (?, ?, ?, 'x', ?, 'forged', '2026-03-15T12:00:00.000Z')")
            .run(tenantId, business, actorType, command),
        );
      expect(() => insert(null, businessId, 'cli', null)).to.throw(/CHECK constraint failed/);
      expect(() => insert(null, null, 'job', 'daybook key create')).to.throw(/CHECK constraint failed/);
      expect(() => insert(null, null, 'system', null)).to.throw(/CHECK constraint failed/);
      expect(() => cli.withDb((db) => inTransaction(db, () => recordAudit(db, cli.clock, TEST_ACTOR, { tenantId: null, businessId, action: 'forged' })))).to.throw(
        /an installation-wide row names no business/,
      );
      // The same row with no business is an installation row, and is accepted.
      insert(null, null, 'cli', 'daybook rate set');
    });
  });

  describe('the migration that rebuilt audit_log', () => {
    it("keeps every old row under its id, maps 'system' to job overdue and pay_page, and leaves command NULL", async () => {
      const path = join(cli.dir, 'old.sqlite');
      await migrateThrough(path, BEFORE_REBUILD);
      const tenantId = '195360fe-4e83-4f5c-bd97-abcea63e4f45';
      const businessId = '69f03a43-daf9-4889-9e2e-d5fb2eaaaf47';
      const old = openDb(path);
      try {
        old.prepare("INSERT INTO tenants (id, name, plan, created_at) VALUES (?, 'Harbor Firm', 'small', '2026-03-01T00:00:00.000Z')").run(tenantId);
        old.prepare("INSERT INTO businesses (id, tenant_id, name, created_at) VALUES (?, ?, 'Lakeside Bakery', '2026-03-01T00:00:00.000Z')").run(businessId, tenantId);
        const insert = old.prepare(
          'INSERT INTO audit_log (id, tenant_id, business_id, actor_type, actor_id, actor_name, action, subject_type, subject_id, detail_json, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        );
        insert.run(3, tenantId, null, 'cli', null, 'daybook cli', 'account.create', 'account', tenantId, '{}', '2026-03-01T09:00:00.000Z');
        insert.run(7, tenantId, businessId, 'api_key', 'key-1', 'Bookkeeping app', 'invoice.send', 'invoice', 'inv-1', '{"number":"INV-0001"}', '2026-03-02T09:00:00.000Z');
        insert.run(8, tenantId, businessId, 'system', null, 'pay page', 'invoice.view', 'invoice', 'inv-1', '{}', '2026-03-03T09:00:00.000Z');
        insert.run(12, tenantId, businessId, 'system', null, 'overdue sweep', 'invoice.overdue', 'invoice', 'inv-1', '{"asOf":"2026-03-20"}', '2026-03-20T00:05:00.000Z');
      } finally {
        old.close();
      }

      expect((await migrateLatest(path)).applied).to.deep.equal(SINCE_REBUILD);
      const db = openDb(path);
      try {
        expect(db.prepare('SELECT id, tenant_id, business_id, actor_type, actor_id, actor_name, command, action, subject_id, detail_json, at FROM audit_log ORDER BY id').all()).to.deep.equal([
          { id: 3n, tenant_id: tenantId, business_id: null, actor_type: 'cli', actor_id: null, actor_name: 'daybook cli', command: null, action: 'account.create', subject_id: tenantId, detail_json: '{}', at: '2026-03-01T09:00:00.000Z' },
          { id: 7n, tenant_id: tenantId, business_id: businessId, actor_type: 'api_key', actor_id: 'key-1', actor_name: 'Bookkeeping app', command: null, action: 'invoice.send', subject_id: 'inv-1', detail_json: '{"number":"INV-0001"}', at: '2026-03-02T09:00:00.000Z' },
          { id: 8n, tenant_id: tenantId, business_id: businessId, actor_type: 'pay_page', actor_id: null, actor_name: 'pay page', command: null, action: 'invoice.view', subject_id: 'inv-1', detail_json: '{}', at: '2026-03-03T09:00:00.000Z' },
          { id: 12n, tenant_id: tenantId, business_id: businessId, actor_type: 'job', actor_id: null, actor_name: 'overdue', command: null, action: 'invoice.overdue', subject_id: 'inv-1', detail_json: '{"asOf":"2026-03-20"}', at: '2026-03-20T00:05:00.000Z' },
        ]);
        expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log' ORDER BY name").pluck().all()).to.deep.equal([
          'audit_log_no_delete',
          'audit_log_no_replace',
          'audit_log_no_update',
        ]);
        expect(() => db.prepare('DELETE FROM audit_log WHERE id = 12').run()).to.throw(/audit_log rows are immutable/);
        // A new row after the old ones: ids go on from the highest kept.
        inTransaction(db, () => recordAudit(db, cli.clock, { type: 'cli', id: null, name: ME, command: 'daybook period lock' }, { tenantId, businessId, action: 'period.lock' }));
        expect(db.prepare('SELECT max(id) FROM audit_log').pluck().get()).to.equal(13n);
      } finally {
        db.close();
      }

      // The CLI reads the old rows back: the old CLI writer has no command, the sweep is a job.
      const listed = await cli.run(['--db', path, 'audit', 'list', '--account', tenantId], { withoutDb: true });
      expectOk(listed);
      expect(listed.stdout.trimEnd().split('\n').map((line) => line.split(/ {2,}/).slice(1, 3))).to.deep.equal([
        ['WHO', 'WHAT'],
        [`${ME} (daybook period lock)`, 'period.lock'],
        ['job overdue', 'invoice.overdue'],
        ['pay page (customer)', 'invoice.view'],
        ['key "Bookkeeping app"', 'invoice.send'],
        ['daybook cli (admin CLI)', 'account.create'],
      ]);
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
