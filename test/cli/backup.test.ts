import Database from 'better-sqlite3';
import { expect } from 'chai';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrations } from '../../src/db/migrations/index.js';
import { osUserName } from '../../src/store/audit.js';
import { checkBackupFile } from '../../src/db/backup-check.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildApiTenant } from '../support/api.js';
import { migrateThrough } from '../support/db.js';
import { accountIdByName, postDeposit } from '../support/factories.js';
import { addBilledCustomer, createInvoice, payInvoice, sendInvoice } from '../support/invoicing.js';
import { CliHarness, type CliResult, expectBadArguments, expectOk, expectOneErrorLine, parseOneObject } from './support.js';

/**
 * `daybook backup` and `daybook restore`, and the proof that they keep the books: books with
 * real postings served by a real server, backed up while it serves, restored into a fresh
 * file, served by a fresh server that answers the trial balance exactly as before.
 */

const TODAY = '2026-03-15T12:00:00.000Z';
const LATEST = migrations.map((migration) => migration.name);

/** Every row of a table in a books file, in id order. */
function tableRows(path: string, table: string): Record<string, unknown>[] {
  const books = new Database(path, { readonly: true });
  try {
    return books.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[];
  } finally {
    books.close();
  }
}

describe('daybook backup and restore', () => {
  let harness: CliHarness;
  beforeEach(() => {
    harness = new CliHarness();
  });
  afterEach(() => harness.cleanup());

  /** `daybook --db BOOKS ...`, for books other than the harness's own. */
  const runOn = (books: string, args: string[]): Promise<CliResult> => harness.run(['--db', books, ...args], { withoutDb: true });

  /** Books with one account, one business and an owner's deposit, made through the CLI and the books functions. */
  async function someBooks(): Promise<void> {
    const accountId = await harness.createAccount();
    const businessId = await harness.createBusiness(accountId);
    harness.withDb((db) => postDeposit(db, harness.clock, businessId, '2026-03-01', 500_000n));
  }

  describe('daybook backup --to FILE', () => {
    it('writes a checked backup and says so in one line', async () => {
      await someBooks();
      const to = join(harness.dir, 'manual.sqlite');
      const result = await harness.run(['backup', '--to', to]);
      expectOk(result);
      const bytes = statSync(to).size;
      expect(result.stdout).to.equal(`Backed up ${harness.dbPath} to ${to}: ${bytes} bytes, integrity_check ok.\n`);
      expect(result.stderr).to.equal('');
      expect(checkBackupFile(to)).to.deep.include({ tenants: 1, businesses: 1, journalEntries: 1, lastEntryDate: '2026-03-01', pendingMigrations: [] });
    });

    it('--json prints {file, bytes, integrity}', async () => {
      await someBooks();
      const to = join(harness.dir, 'manual.sqlite');
      const printed = await harness.json(['backup', '--to', to]);
      expect(printed).to.deep.equal({ file: to, bytes: statSync(to).size, integrity: 'ok' });
    });

    it('refuses to overwrite an existing FILE unless --force', async () => {
      await someBooks();
      const to = join(harness.dir, 'manual.sqlite');
      writeFileSync(to, 'last week');
      expectBadArguments(await harness.run(['backup', '--to', to]), new RegExp(`^daybook: ${escape(to)} exists: add --force to replace it\n$`));
      expect(readFileSync(to, 'utf8')).to.equal('last week');
      expectOk(await harness.run(['backup', '--to', to, '--force']));
      expect(checkBackupFile(to).journalEntries).to.equal(1);
    });

    it('refuses a missing folder, a folder, the books file itself, and books that do not exist', async () => {
      const none = await harness.run(['backup', '--to', join(harness.dir, 'b.sqlite')]);
      expectBadArguments(none, new RegExp(`^daybook: no books at ${escape(harness.dbPath)}: check --db \\(or DAYBOOK_DB\\)\n$`));
      await someBooks();
      const missing = join(harness.dir, 'no', 'such', 'b.sqlite');
      expectBadArguments(await harness.run(['backup', '--to', missing]), new RegExp(`^daybook: cannot write ${escape(missing)}: no such folder\n$`));
      expectBadArguments(await harness.run(['backup', '--to', harness.dir, '--force']), new RegExp(`^daybook: cannot write ${escape(harness.dir)}: it is a folder\n$`));
      const before = readFileSync(harness.dbPath);
      expectBadArguments(
        await harness.run(['backup', '--to', harness.dbPath, '--force']),
        new RegExp(`^daybook: ${escape(harness.dbPath)} is the books file itself\n$`),
      );
      expect(readFileSync(harness.dbPath).equals(before)).to.equal(true);
      expect(readdirSync(harness.dir).sort()).to.deep.equal(['books.sqlite']);
    });

    it('exits 3 and writes nothing when the copy fails its integrity checks', async () => {
      await someBooks();
      harness.withDb((db) => {
        db.pragma('foreign_keys = OFF');
        // With enforcement off, as a tool other than Daybook could: one ledger account of no business.
        db.prepare("UPDATE ledger_accounts SET business_id = '00000000-0000-4000-8000-000000000000' WHERE rowid = 1").run();
      });
      const to = join(harness.dir, 'manual.sqlite');
      const result = await harness.run(['backup', '--to', to]);
      expect(result.code, result.stderr).to.equal(3);
      expect(result.stdout).to.equal('');
      expectOneErrorLine(result.stderr);
      expect(result.stderr).to.equal(
        `daybook: the backup of ${harness.dbPath} is damaged: 1 row points at rows that do not exist (foreign_key_check; the first in ledger_accounts, row 1, to businesses); nothing was written to ${to}\n`,
      );
      expect(existsSync(to)).to.equal(false);
      expect(readdirSync(harness.dir).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
    });
  });

  describe('daybook restore --from FILE', () => {
    let backup: string;
    let fresh: string;
    beforeEach(async () => {
      await someBooks();
      backup = join(harness.dir, 'backup.sqlite');
      expectOk(await harness.run(['backup', '--to', backup]));
      fresh = join(harness.dir, 'new-machine', 'books.sqlite');
    });

    it('restores into a fresh books path without --yes, saying what it restored', async () => {
      const result = await runOn(fresh, ['restore', '--from', backup]);
      expectOk(result);
      expect(result.stderr).to.equal(`daybook: ${backup} is whole: 1 account, 1 business, 1 journal entry, the last dated 2026-03-01; restoring it to ${fresh}\n`);
      expect(result.stdout).to.equal(
        `Restored ${backup} to ${fresh}: 1 account, 1 business, 1 journal entry, the last dated 2026-03-01.\nThe books are at the latest schema; start the server.\n`,
      );
      // The backup's rows, and one more: the restore's own installation-wide audit row.
      expect(tableRows(fresh, 'journal_lines')).to.deep.equal(tableRows(backup, 'journal_lines'));
      expect(tableRows(fresh, 'audit_log').slice(0, -1)).to.deep.equal(tableRows(backup, 'audit_log'));
      expect(tableRows(fresh, 'audit_log').at(-1)).to.deep.include({
        tenant_id: null,
        business_id: null,
        actor_type: 'cli',
        actor_name: osUserName(),
        command: 'daybook restore',
        action: 'books.restore',
        subject_type: 'backup',
        subject_id: backup,
        at: TODAY,
      });
    });

    it('--json prints the result as one object', async () => {
      const result = await runOn(fresh, ['--json', 'restore', '--from', backup]);
      expectOk(result);
      expect(parseOneObject(result.stdout)).to.deep.equal({
        file: backup,
        books: fresh,
        bytes: statSync(fresh).size,
        replaced: false,
        accounts: 1,
        businesses: 1,
        journalEntries: 1,
        lastEntryDate: '2026-03-01',
        schema: LATEST[LATEST.length - 1],
        migrated: [],
      });
    });

    it('refuses to replace existing books without --yes, and replaces them with it', async () => {
      const other = join(harness.dir, 'other.sqlite');
      const made = await runOn(other, ['account', 'create', '--name', 'Other Firm']);
      expectOk(made);
      const before = readFileSync(harness.dbPath);
      const refused = await runOn(harness.dbPath, ['restore', '--from', other]);
      expectBadArguments(refused);
      expect(refused.stderr).to.equal(`daybook: ${harness.dbPath} holds books already: add --yes to replace them with ${other}\n`);
      expect(readFileSync(harness.dbPath).equals(before)).to.equal(true);

      const replaced = await harness.run(['--json', 'restore', '--from', other, '--yes']);
      expectOk(replaced);
      expect(parseOneObject<Record<string, unknown>>(replaced.stdout)).to.deep.include({ replaced: true, accounts: 1, businesses: 0, journalEntries: 0, lastEntryDate: null });
      const listed = await harness.json<{ accounts?: unknown }>(['account', 'create', '--name', 'After Restore']);
      expect(listed).to.have.property('id');
      expect(harness.withDb((db) => db.prepare('SELECT name FROM tenants ORDER BY name').pluck().all())).to.deep.equal(['After Restore', 'Other Firm']);
    });

    it('refuses while a server serves the books, saying how it knows (exit 2, one line)', async () => {
      const app = await startTestApp(TODAY, { dbPath: harness.dbPath });
      try {
        const before = readFileSync(harness.dbPath);
        const result = await harness.run(['restore', '--from', backup, '--yes']);
        expectBadArguments(result);
        expect(result.stderr).to.equal(
          `daybook: cannot restore over ${harness.dbPath}: a daybook server is running on it (it holds the lock on ${harness.dbPath}.lock); stop the server first\n`,
        );
        expect(readFileSync(harness.dbPath).equals(before)).to.equal(true);
      } finally {
        await app.close();
      }
    });

    it('refuses a file that is not a backup of Daybook books (exit 2, one line saying what is wrong)', async () => {
      const notes = join(harness.dir, 'notes.txt');
      writeFileSync(notes, 'not a database at all');
      const otherApp = join(harness.dir, 'other-app.sqlite');
      const db = new Database(otherApp);
      db.exec('CREATE TABLE things (id INTEGER PRIMARY KEY)');
      db.close();
      const newer = join(harness.dir, 'newer.sqlite');
      copyFileSync(backup, newer);
      const future = new Database(newer);
      future.prepare("INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('20990101_0001_from_the_future', 9, 1)").run();
      future.close();
      const cases: [string, string][] = [
        [join(harness.dir, 'missing.sqlite'), `no file at ${join(harness.dir, 'missing.sqlite')}`],
        [notes, `${notes} is not a SQLite database (it does not start with SQLite's header)`],
        [otherApp, `${otherApp} is a SQLite database but not Daybook's books (it has no knex_migrations table)`],
        [
          newer,
          `${newer} was written by a newer version of Daybook (its schema has migration 20990101_0001_from_the_future, which this version does not know); upgrade Daybook, then restore it`,
        ],
      ];
      for (const [from, message] of cases) {
        const result = await runOn(fresh, ['restore', '--from', from]);
        expectBadArguments(result);
        expect(result.stderr).to.equal(`daybook: ${message}\n`);
      }
      expect(existsSync(fresh)).to.equal(false);
      expect(readdirSync(join(harness.dir, 'new-machine'))).to.deep.equal(['books.sqlite.lock']);
    });

    it('restores a backup of an older schema and brings it to the latest schema, recording both', async () => {
      const older = join(harness.dir, 'older.sqlite');
      await migrateThrough(older, '20261123_0005_invoicing');
      const result = await runOn(fresh, ['--json', 'restore', '--from', older]);
      expectOk(result);
      const pending = LATEST.slice(5);
      expect(parseOneObject<Record<string, unknown>>(result.stdout)).to.deep.include({ schema: '20261123_0005_invoicing', migrated: pending });
      const books = new Database(fresh, { readonly: true });
      try {
        expect(books.prepare('SELECT name FROM knex_migrations ORDER BY id').pluck().all()).to.deep.equal(LATEST);
        const trail = books.prepare('SELECT action, command, detail_json FROM audit_log WHERE tenant_id IS NULL ORDER BY id').all() as { action: string; command: string; detail_json: string }[];
        expect(trail.map((row) => [row.action, row.command])).to.deep.equal([
          ['books.migrate', 'daybook restore'],
          ['books.restore', 'daybook restore'],
        ]);
        expect(JSON.parse(trail[0]!.detail_json)).to.deep.equal({ applied: pending });
        expect(JSON.parse(trail[1]!.detail_json)).to.deep.include({ from: older, schema: '20261123_0005_invoicing', migrated: pending, replaced: false });
      } finally {
        books.close();
      }
      const text = await runOn(join(harness.dir, 'third', 'books.sqlite'), ['restore', '--from', older]);
      expect(text.stdout.split('\n')[1]).to.equal(`Brought the books to the latest schema (${pending.length} migrations applied); start the server.`);
    });
  });

  describe('a backup restored into a fresh process', () => {
    let apps: TestApp[] = [];
    afterEach(async () => {
      for (const app of apps) await app.close();
      apps = [];
    });

    it('serves the same trial balance, to the byte, as the server did when the backup was taken', async function () {
      this.timeout(60_000);
      const app = await startTestApp(TODAY);
      apps.push(app);
      const tenant = buildApiTenant(app, { plan: 'large' });
      const business = tenant.business;
      const account = (name: string) => accountIdByName(app.db, business.id, name);
      postDeposit(app.db, app.clock, business.id, '2026-01-02', 1_000_000n);
      const expense = await app.post('/api/v1/expenses', tenant.key, { entityId: business.id, date: '2026-01-10', amountCents: '150000', vendorName: 'Dock Street Rentals', accountId: account('Rent') });
      expect(expense.status, expense.text).to.equal(201);
      const customerId = addBilledCustomer(app, tenant.id, { name: 'Harbor Catering' });
      const invoice = await createInvoice(app, tenant.key, {
        entityId: business.id,
        customerId,
        issueDate: '2026-01-05',
        dueDate: '2026-02-04',
        taxRatePercent: '10',
        lines: [{ description: 'Consulting', quantity: '2', unitPriceCents: '100000', accountId: account('Service Revenue') }],
      });
      await sendInvoice(app, tenant.key, invoice.invoiceId);
      await payInvoice(app, tenant.key, invoice.invoiceId, '100000', '2026-02-10');

      const trialBalancePath = `/api/v1/reports/trial-balance?entityId=${business.id}&asOf=2026-03-15`;
      const served = await app.get(trialBalancePath, tenant.key);
      expect(served.status, served.text).to.equal(200);
      const rows = (body: { rows: { account: string; debit: { cents: string }; credit: { cents: string } }[] }) =>
        body.rows.map((row) => [row.account, row.debit.cents, row.credit.cents]);
      expect(rows(served.body)).to.deep.equal([
        ['Business Checking', '950000', '0'],
        ['Accounts Receivable', '120000', '0'],
        ['Sales Tax Payable', '0', '20000'],
        ["Owner's Equity", '0', '1000000'],
        ['Service Revenue', '0', '200000'],
        ['Rent', '150000', '0'],
      ]);
      expect([served.body.totals.debit.cents, served.body.totals.credit.cents]).to.deep.equal(['1220000', '1220000']);

      // The backup runs while the server keeps answering.
      const backup = join(harness.dir, 'backups', 'daybook-manual.sqlite');
      mkdirSync(join(harness.dir, 'backups'));
      const [backedUp, ...meanwhile] = await Promise.all([
        runOn(app.dbPath, ['--json', 'backup', '--to', backup]),
        ...Array.from({ length: 5 }, () => app.get(trialBalancePath, tenant.key)),
      ]);
      expectOk(backedUp);
      expect(parseOneObject(backedUp.stdout)).to.deep.equal({ file: backup, bytes: statSync(backup).size, integrity: 'ok' });
      for (const answer of meanwhile) expect(answer.text).to.equal(served.text);

      // A write after the backup: the live books move on, the backup does not.
      const later = await app.post('/api/v1/expenses', tenant.key, { entityId: business.id, date: '2026-03-14', amountCents: '2500', vendorName: 'Corner Hardware', accountId: account('Office Supplies') });
      expect(later.status, later.text).to.equal(201);
      const moved = await app.get(trialBalancePath, tenant.key);
      expect(rows(moved.body)).to.deep.include.members([
        ['Business Checking', '947500', '0'],
        ['Office Supplies', '2500', '0'],
      ]);
      await app.close();
      apps = [];

      const fresh = join(harness.dir, 'new-machine', 'daybook.sqlite');
      const restored = await runOn(fresh, ['restore', '--from', backup]);
      expectOk(restored);
      const second = await startTestApp(TODAY, { dbPath: fresh });
      apps.push(second);
      const answered = await second.get(trialBalancePath, tenant.key);
      expect(answered.status, answered.text).to.equal(200);
      expect(answered.text).to.equal(served.text);
      expect(answered.body).to.deep.equal(served.body);
      expect(answered.text).not.to.equal(moved.text);
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
