import Database from 'better-sqlite3';
import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, closeSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { migrations } from '../../src/db/migrations/index.js';
import type { Business } from '../../src/books/businesses.js';
import { trialBalance } from '../../src/books/reports/statements.js';
import { type FixedClock } from '../../src/clock.js';
import { backupBooks } from '../../src/db/backup.js';
import { checkBackupFile } from '../../src/db/backup-check.js';
import { BackupRefused } from '../../src/db/backup-refusal.js';
import { restoreBooks } from '../../src/db/restore.js';
import { runScheduledBackup } from '../../src/db/scheduled-backup.js';
import { type Db, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { createLogger } from '../../src/log.js';
import { projectRoot } from '../../src/paths.js';
import { freshDb, migrateThrough, type TempDb } from '../support/db.js';
import { buildBusiness, postDeposit, testClock } from '../support/factories.js';
import { captureLog } from '../support/log-capture.js';

/**
 * Backups and restores of a books file (src/db/backup.ts, backup-check.ts, restore.ts,
 * scheduled-backup.ts): the online backup and its checks, the daily job's names and retention,
 * and every refusal of a restore.
 */

const LATEST = migrations.map((migration) => migration.name);

/** The journal as plain rows, to compare two books files line by line. */
function journalRows(db: Pick<Db, 'prepare'>): unknown[] {
  return db
    .prepare(
      `SELECT e.id, e.business_id, e.entry_date, e.source_type, l.line_no, l.ledger_account_id, l.direction, CAST(l.amount_cents AS TEXT) AS amount
         FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id ORDER BY e.rowid, l.line_no`,
    )
    .safeIntegers(false)
    .all();
}

function readJournal(path: string): unknown[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return journalRows(db);
  } finally {
    db.close();
  }
}

/** The refusal `work` throws: a BackupRefused, whose code and message the test checks. */
function refusal(work: () => unknown): BackupRefused {
  try {
    work();
  } catch (error) {
    if (error instanceof BackupRefused) return error;
    throw error;
  }
  throw new Error('expected a BackupRefused, and nothing was thrown');
}

async function refusalOf(work: () => Promise<unknown>): Promise<BackupRefused> {
  try {
    await work();
  } catch (error) {
    if (error instanceof BackupRefused) return error;
    throw error;
  }
  throw new Error('expected a BackupRefused, and nothing was thrown');
}

/** Log lines as objects, from a logger writing into memory. */
/**
 * Overwrites bytes of one page (numbered from 1): its start (the b-tree page header, which SQLite
 * cannot read past) or its last 100 bytes (where a table page keeps its first rows).
 */
function damagePage(path: string, page: number, where: 'start' | 'end'): void {
  const pageSize = readFileSync(path).readUInt16BE(16);
  const fd = openSync(path, 'r+');
  try {
    const length = where === 'start' ? 64 : 40;
    writeSync(fd, Buffer.alloc(length, 0xa5), 0, length, (page - 1) * pageSize + (where === 'start' ? 0 : pageSize - 100));
  } finally {
    closeSync(fd);
  }
}

describe('backups of the books (src/db/backup.ts)', () => {
  let temp: TempDb;
  let clock: FixedClock;
  let business: Business;
  let out: string;

  before(async () => {
    temp = await freshDb();
    clock = testClock('2026-03-15T02:15:00.000Z');
    business = buildBusiness(temp.db, clock, { name: 'Harbor Coffee' });
    postDeposit(temp.db, clock, business.id, '2026-01-02', 1_000_000n);
    postDeposit(temp.db, clock, business.id, '2026-02-03', 250_075n);
    postDeposit(temp.db, clock, business.id, '2026-03-14', 99n);
  });
  after(() => temp.close());
  beforeEach(() => {
    out = mkdtempSync(join(tmpdir(), 'daybook-backup-'));
  });
  afterEach(() => rmSync(out, { recursive: true, force: true }));

  describe('backupBooks', () => {
    it('writes one self-contained file that passes integrity_check and holds the same journal and trial balance', async () => {
      const to = join(out, 'books-backup.sqlite');
      const result = await backupBooks(temp.db, to);
      expect(Object.keys(result).sort()).to.deep.equal(['bytes', 'durationMs', 'integrity', 'pages', 'path']);
      expect(result.path).to.equal(to);
      expect(result.integrity).to.equal('ok');
      expect(result.bytes).to.equal(statSync(to).size);
      expect(result.bytes).to.equal(result.pages * readFileSync(to).readUInt16BE(16));
      expect(result.durationMs).to.be.a('number').and.at.least(0);
      // Nothing beside it: no temporary file left, no log the copy depends on.
      expect(readdirSync(out)).to.deep.equal(['books-backup.sqlite']);
      const backup = new Database(to, { readonly: true });
      try {
        expect(backup.pragma('integrity_check', { simple: true })).to.equal('ok');
        expect(backup.pragma('journal_mode', { simple: true })).to.equal('delete');
      } finally {
        backup.close();
      }
      expect(readdirSync(out)).to.deep.equal(['books-backup.sqlite']);
      expect(readJournal(to)).to.deep.equal(journalRows(temp.db)).and.to.have.length(6);

      const copy = join(out, 'opened.sqlite');
      copyFileSync(to, copy);
      const restored = openDb(copy);
      try {
        const balance = trialBalance(restored, business, '2026-03-15');
        expect(balance).to.deep.equal(trialBalance(temp.db, business, '2026-03-15'));
        expect([balance.totals.debitCents, balance.totals.creditCents]).to.deep.equal([1_250_174n, 1_250_174n]);
      } finally {
        restored.close();
      }
    });

    it('replaces a file already at the destination, whole', async () => {
      const to = join(out, 'books-backup.sqlite');
      writeFileSync(to, 'an older backup');
      await backupBooks(temp.db, to);
      expect(checkBackupFile(to).journalEntries).to.equal(3);
    });

    it('refuses to write over the books file or a file SQLite keeps beside it, and leaves them alone', async () => {
      const before = statSync(temp.path).size;
      for (const target of [temp.path, `${temp.path}-wal`, `${temp.path}-shm`, `${temp.path}.lock`]) {
        const refused = await refusalOf(() => backupBooks(temp.db, target));
        expect(refused.code, target).to.equal('same_as_books');
      }
      expect(statSync(temp.path).size).to.equal(before);
      expect(readdirSync(temp.dir).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
    });

    it('carries writes made while it runs, through its own connection and through another, into a whole copy', async function () {
      this.timeout(60_000);
      const busy = await freshDb();
      const other = openDb(busy.path);
      try {
        const shop = buildBusiness(busy.db, clock, { name: 'Busy Shop' });
        // About 12 MiB, so the copy takes several steps and writes land between them.
        busy.db.exec('CREATE TABLE test_padding (b BLOB NOT NULL)');
        const pad = busy.db.prepare('INSERT INTO test_padding VALUES (randomblob(65536))');
        busy.db.transaction(() => {
          for (let i = 0; i < 190; i += 1) pad.run();
        })();
        const to = join(out, 'busy.sqlite');
        let writes = 0;
        const result = await backupBooks(busy.db, to, {
          // Between every two steps of the copy a write: the server's own connection, then
          // another process's (a CLI command), which makes SQLite start the copy again.
          onProgress: () => {
            postDeposit(writes % 2 === 0 ? busy.db : other, clock, shop.id, '2026-03-10', BigInt(100 + writes));
            writes += 1;
          },
        });
        expect(writes, 'writes made while the backup ran').to.be.at.least(4);
        expect(result.integrity).to.equal('ok');
        const check = checkBackupFile(to);
        expect(check.journalEntries).to.equal(writes);
        expect(readJournal(to)).to.deep.equal(journalRows(busy.db));
      } finally {
        other.close();
        busy.close();
      }
    });

    it('leaves the destination as it was and no temporary file when the copy fails its check', async () => {
      // A books file whose foreign keys were broken with enforcement off: the copy inherits the fault.
      const broken = await freshDb();
      try {
        const shop = buildBusiness(broken.db, clock);
        broken.db.pragma('foreign_keys = OFF');
        broken.db.prepare("UPDATE ledger_accounts SET business_id = '00000000-0000-4000-8000-000000000000' WHERE business_id = ?").run(shop.id);
        const to = join(out, 'kept.sqlite');
        writeFileSync(to, 'the previous backup');
        const refused = await refusalOf(() => backupBooks(broken.db, to));
        expect(refused.code).to.equal('damaged');
        expect(refused.message).to.match(
          new RegExp(`^the backup of ${broken.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged: \\d+ rows point at rows that do not exist \\(foreign_key_check; the first in ledger_accounts, row \\d+, to businesses\\)$`),
        );
        expect(readFileSync(to, 'utf8')).to.equal('the previous backup');
        expect(readdirSync(out)).to.deep.equal(['kept.sqlite']);
      } finally {
        broken.close();
      }
    });
  });

  describe('runScheduledBackup (the daily job)', () => {
    const OTHERS = ['notes.txt', 'daybook-20260101-000000.sqlite.bak', 'daybook-latest.sqlite', 'daybook-2026-03-01.sqlite', 'my-daybook-20260101-000000.sqlite'];

    it('names each file by the UTC time, creates the folder, and keeps exactly the newest `keep`, never touching other files', async () => {
      const dir = join(out, 'backups', 'daily');
      const run = (log = createLogger('silent')) => runScheduledBackup({ db: temp.db, clock, dir, keep: 3, log });
      const first = await run();
      expect(first).to.deep.equal({ file: join(dir, 'daybook-20260315-021500.sqlite'), bytes: statSync(first.file).size, removed: [] });
      for (const name of OTHERS) writeFileSync(join(dir, name), 'not a scheduled backup');
      mkdirSync(join(dir, 'daybook-20260102-000000.sqlite.d'));

      const removedByRun: string[][] = [];
      for (let day = 1; day <= 4; day += 1) {
        clock.advanceDays(1);
        clock.advanceMs(1_000);
        removedByRun.push((await run()).removed);
      }
      expect(removedByRun).to.deep.equal([
        [],
        [],
        [join(dir, 'daybook-20260315-021500.sqlite')],
        [join(dir, 'daybook-20260316-021501.sqlite')],
      ]);
      expect(readdirSync(dir).sort()).to.deep.equal(
        [...OTHERS, 'daybook-20260102-000000.sqlite.d', 'daybook-20260317-021502.sqlite', 'daybook-20260318-021503.sqlite', 'daybook-20260319-021504.sqlite'].sort(),
      );
      for (const name of OTHERS) expect(readFileSync(join(dir, name), 'utf8')).to.equal('not a scheduled backup');
      expect(checkBackupFile(join(dir, 'daybook-20260319-021504.sqlite')).journalEntries).to.equal(3);

      const { lines, log } = captureLog('info');
      clock.advanceDays(1);
      const fifth = await run(log);
      expect(fifth.removed).to.deep.equal([join(dir, 'daybook-20260317-021502.sqlite')]);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.include({ msg: 'backup written and checked', file: join(dir, 'daybook-20260320-021504.sqlite'), bytes: fifth.bytes });
      expect(lines[0]!.removed).to.deep.equal(fifth.removed);
      clock.set('2026-03-15T02:15:00.000Z');
    });

    it('always keeps the file it has just written, even beside files named for a later time', async () => {
      const dir = join(out, 'backups');
      mkdirSync(dir);
      writeFileSync(join(dir, 'daybook-20990101-000000.sqlite'), 'named for the future');
      const result = await runScheduledBackup({ db: temp.db, clock, dir, keep: 1, log: createLogger('silent') });
      expect(result.removed).to.deep.equal([join(dir, 'daybook-20990101-000000.sqlite')]);
      expect(readdirSync(dir)).to.deep.equal(['daybook-20260315-021500.sqlite']);
    });

    it('removes nothing when the backup fails', async () => {
      const dir = join(out, 'backups');
      mkdirSync(dir);
      const old = ['daybook-20260101-000000.sqlite', 'daybook-20260102-000000.sqlite'];
      for (const name of old) writeFileSync(join(dir, name), 'an old backup');
      const closed = openDb(temp.path);
      closed.close();
      let failed: unknown;
      try {
        await runScheduledBackup({ db: closed, clock, dir, keep: 1, log: createLogger('silent') });
      } catch (error) {
        failed = error;
      }
      expect(failed).to.be.instanceOf(Error);
      expect(readdirSync(dir).sort()).to.deep.equal(old);
    });

    it('refuses a retention count outside 1 to 1000', async () => {
      for (const keep of [0, 1001, 2.5]) {
        let failed: unknown;
        try {
          await runScheduledBackup({ db: temp.db, clock, dir: out, keep, log: createLogger('silent') });
        } catch (error) {
          failed = error;
        }
        expect((failed as Error).message).to.equal(`runScheduledBackup: keep must be 1 to 1000, not ${keep}`);
      }
      expect(readdirSync(out)).to.deep.equal([]);
    });
  });

  describe('checkBackupFile', () => {
    let good: string;
    beforeEach(async () => {
      good = join(out, 'good.sqlite');
      await backupBooks(temp.db, good);
    });

    it('says what a good backup holds', () => {
      expect(checkBackupFile(good)).to.deep.equal({
        path: good,
        bytes: statSync(good).size,
        migrations: LATEST,
        pendingMigrations: [],
        tenants: 1,
        businesses: 1,
        journalEntries: 3,
        lastEntryDate: '2026-03-14',
      });
    });

    it('reads an older schema, and lists the migrations a server applies to it at start', async () => {
      const older = join(out, 'older.sqlite');
      await migrateThrough(older, '20261123_0003_ledger_guards');
      const check = checkBackupFile(older);
      expect(check.migrations).to.deep.equal(LATEST.slice(0, 3));
      expect(check.pendingMigrations).to.deep.equal(LATEST.slice(3));
      expect([check.tenants, check.businesses, check.journalEntries, check.lastEntryDate]).to.deep.equal([0, 0, 0, null]);
    });

    it('opens the file read-only and leaves nothing beside it, even a books file in WAL mode', async () => {
      const books = join(out, 'stopped-books.sqlite');
      await migrateLatest(books);
      openDb(books).close();
      const bytes = readFileSync(books);
      expect(bytes.readUInt8(18), 'WAL mode').to.equal(2);
      expect(checkBackupFile(books).migrations).to.deep.equal(LATEST);
      expect(readdirSync(out).sort()).to.deep.equal(['good.sqlite', 'stopped-books.sqlite']);
      expect(readFileSync(books).equals(bytes)).to.equal(true);
    });

    it('refuses a file that is not there, or a folder', () => {
      const missing = refusal(() => checkBackupFile(join(out, 'nothing.sqlite')));
      expect([missing.code, missing.message]).to.deep.equal(['missing', `no file at ${join(out, 'nothing.sqlite')}`]);
      const folder = refusal(() => checkBackupFile(out));
      expect([folder.code, folder.message]).to.deep.equal(['missing', `${out} is a folder, not a backup file`]);
    });

    it('refuses a file that is not SQLite, or empty', () => {
      for (const [name, content] of [
        ['notes.sqlite', 'Dear operator, this is not a database.\n'.repeat(100)],
        ['empty.sqlite', ''],
        ['short.sqlite', 'SQLite format'],
      ] as const) {
        const path = join(out, name);
        writeFileSync(path, content);
        const refused = refusal(() => checkBackupFile(path));
        expect([refused.code, refused.message]).to.deep.equal(['not_sqlite', `${path} is not a SQLite database (it does not start with SQLite's header)`]);
      }
    });

    it('refuses a copy with bytes overwritten in the middle: integrity_check finds it', () => {
      const damaged = join(out, 'damaged.sqlite');
      copyFileSync(good, damaged);
      const db = new Database(good, { readonly: true });
      const rootPage = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'journal_lines'").pluck().get() as number;
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.close();
      expect(rootPage, 'a page in the middle of the file').to.be.above(1).and.below(pages);
      damagePage(damaged, rootPage, 'end');
      const refused = refusal(() => checkBackupFile(damaged));
      expect([refused.code, refused.message]).to.deep.equal([
        'damaged',
        `${damaged} is damaged: integrity_check found row 1 missing from index journal_lines_business_date and 1 more`,
      ]);

      const unreadable = join(out, 'unreadable.sqlite');
      copyFileSync(good, unreadable);
      damagePage(unreadable, rootPage, 'start');
      const alsoRefused = refusal(() => checkBackupFile(unreadable));
      expect([alsoRefused.code, alsoRefused.message]).to.deep.equal([
        'damaged',
        `${unreadable} is damaged: integrity_check stopped at a fault (database disk image is malformed)`,
      ]);
    });

    it("refuses a SQLite database that is not Daybook's books", () => {
      const notes = join(out, 'notes.sqlite');
      const db = new Database(notes);
      db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')");
      db.close();
      const refused = refusal(() => checkBackupFile(notes));
      expect([refused.code, refused.message]).to.deep.equal(['not_daybook', `${notes} is a SQLite database but not Daybook's books (it has no knex_migrations table)`]);

      const otherApp = join(out, 'other-app.sqlite');
      const other = new Database(otherApp);
      other.exec('CREATE TABLE knex_migrations (id INTEGER PRIMARY KEY, name TEXT, batch INTEGER, migration_time DATETIME)');
      other.close();
      const alsoRefused = refusal(() => checkBackupFile(otherApp));
      expect(alsoRefused.message).to.equal(`${otherApp} is a SQLite database but not Daybook's books (it has no journal_entries table)`);
    });

    it('refuses a backup written by a newer Daybook', () => {
      const newer = join(out, 'newer.sqlite');
      copyFileSync(good, newer);
      const db = new Database(newer);
      db.prepare("INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('20270101_0042_future_things', 9, 1)").run();
      db.close();
      const refused = refusal(() => checkBackupFile(newer));
      expect([refused.code, refused.message]).to.deep.equal([
        'newer_version',
        `${newer} was written by a newer version of Daybook (its schema has migration 20270101_0042_future_things, which this version does not know); upgrade Daybook, then restore it`,
      ]);
    });

    it('refuses a books file with writes still in its log beside it', async () => {
      const live = await freshDb();
      try {
        postDeposit(live.db, clock, buildBusiness(live.db, clock).id, '2026-03-14', 1n);
        expect(statSync(`${live.path}-wal`).size).to.be.above(0);
        const refused = refusal(() => checkBackupFile(live.path));
        expect([refused.code, refused.message]).to.deep.equal([
          'file_in_use',
          `${live.path}-wal lies beside ${live.path}: the file is open in a server, or was copied while one was; make a backup with daybook backup and restore that`,
        ]);
      } finally {
        live.close();
      }
    });
  });

  describe('restoreBooks', () => {
    let backup: string;
    let books: string;
    const children: ChildProcess[] = [];
    beforeEach(async () => {
      backup = join(out, 'backup.sqlite');
      await backupBooks(temp.db, backup);
      books = join(out, 'data', 'books.sqlite');
    });
    afterEach(() => {
      for (const child of children.splice(0)) child.kill('SIGKILL');
    });

    /** Old books of their own at `books`: one business, one deposit, closed. */
    async function oldBooks(): Promise<void> {
      await migrateLatest(books);
      const db = openDb(books);
      const shop = buildBusiness(db, clock, { name: 'Old Books' });
      postDeposit(db, clock, shop.id, '2025-06-01', 5_00n);
      db.close();
    }

    /** Another process holding the books file's server lock, as a running server does. */
    async function serverLockHeldElsewhere(): Promise<void> {
      const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/support/hold-lock.ts'), books], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      const said = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
      expect(said).to.equal('held');
    }

    const leftovers = () => readdirSync(join(out, 'data')).filter((name) => name.endsWith('.tmp') || name.includes('.tmp-'));

    it('restores into a fresh path: the same journal, nothing beside it but the lock file', () => {
      let shown: unknown;
      const result = restoreBooks(backup, books, { onChecked: (check) => (shown = check) });
      expect(result).to.deep.include({ path: books, from: backup, bytes: statSync(books).size, replaced: false });
      expect(result.check).to.deep.equal(shown);
      expect(result.check).to.deep.include({ path: backup, journalEntries: 3, lastEntryDate: '2026-03-14', pendingMigrations: [] });
      expect(readJournal(books)).to.deep.equal(readJournal(backup));
      expect(readdirSync(join(out, 'data')).sort()).to.deep.equal(['books.sqlite', 'books.sqlite.lock']);
    });

    it('refuses while a server holds the books, saying how it knows, and touches nothing', async () => {
      await oldBooks();
      const before = readFileSync(books);
      await serverLockHeldElsewhere();
      const refused = refusal(() => restoreBooks(backup, books, { replaceExisting: true }));
      expect([refused.code, refused.message]).to.deep.equal([
        'server_running',
        `cannot restore over ${books}: a daybook server is running on it (it holds the lock on ${books}.lock); stop the server first`,
      ]);
      expect(readFileSync(books).equals(before)).to.equal(true);
      expect(leftovers()).to.deep.equal([]);
    });

    it('refuses to replace existing books unless asked, after checking the file', async () => {
      await oldBooks();
      const before = readFileSync(books);
      const refused = refusal(() => restoreBooks(backup, books));
      expect([refused.code, refused.message]).to.deep.equal(['books_exist', `${books} holds books already; restoring ${backup} would replace them`]);
      expect(readFileSync(books).equals(before)).to.equal(true);
      expect(leftovers()).to.deep.equal([]);
    });

    it('refuses each bad file before touching the books', async () => {
      await oldBooks();
      const before = readFileSync(books);
      const notSqlite = join(out, 'notes.txt');
      writeFileSync(notSqlite, 'not a database');
      const newer = join(out, 'newer.sqlite');
      copyFileSync(backup, newer);
      const db = new Database(newer);
      db.prepare("INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('20270101_0042_future_things', 9, 1)").run();
      db.close();
      const damaged = join(out, 'damaged.sqlite');
      copyFileSync(backup, damaged);
      const pages = statSync(damaged).size / readFileSync(damaged).readUInt16BE(16);
      damagePage(damaged, Math.floor(pages / 2), 'start');
      const codes = [join(out, 'missing.sqlite'), notSqlite, newer, damaged].map((from) => {
        const refused = refusal(() => restoreBooks(from, books, { replaceExisting: true }));
        expect(refused.message, refused.message).to.include(from);
        return refused.code;
      });
      expect(codes).to.deep.equal(['missing', 'not_sqlite', 'newer_version', 'damaged']);
      expect(readFileSync(books).equals(before)).to.equal(true);
      expect(leftovers()).to.deep.equal([]);
    });

    it('refuses while another process has the books open', async () => {
      await oldBooks();
      // A daybook command elsewhere: a connection open on the books, idle between statements.
      const script = "const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.pragma('journal_mode = WAL'); db.prepare('SELECT count(*) FROM journal_entries').get(); console.log('open'); setInterval(() => {}, 60000);";
      const child = spawn(process.execPath, ['-e', script, books], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      expect(await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve))).to.equal('open');
      const refused = refusal(() => restoreBooks(backup, books, { replaceExisting: true }));
      expect([refused.code, refused.message]).to.deep.equal([
        'books_in_use',
        `another process has ${books} open (a daybook command still running?); let it finish, then restore`,
      ]);
      expect(readJournal(books)).to.have.length(2);
      expect(leftovers()).to.deep.equal([]);
    });

    it('replaces books whose crash left a log beside them, and never replays that log into the restored file', async () => {
      await oldBooks();
      // The old books' log, with a write in it, as a process killed mid-life leaves it.
      const db = openDb(books);
      postDeposit(db, clock, buildBusiness(db, clock).id, '2025-07-01', 7_00n);
      const logBytes = readFileSync(`${books}-wal`);
      const shmBytes = readFileSync(`${books}-shm`);
      db.close();
      writeFileSync(`${books}-wal`, logBytes);
      writeFileSync(`${books}-shm`, shmBytes);
      const result = restoreBooks(backup, books, { replaceExisting: true });
      expect(result.replaced).to.equal(true);
      expect(existsSync(`${books}-wal`)).to.equal(false);
      expect(existsSync(`${books}-shm`)).to.equal(false);
      expect(readJournal(books)).to.deep.equal(readJournal(backup));
    });

    it('replaces broken books (not a database) and removes the log left beside them', async () => {
      // A log from other books entirely: replayed into the restored file it would corrupt it.
      const stranger = join(out, 'stranger.sqlite');
      await migrateLatest(stranger);
      const db = openDb(stranger);
      postDeposit(db, clock, buildBusiness(db, clock).id, '2025-07-01', 7_00n);
      mkdirSync(join(out, 'data'));
      writeFileSync(`${books}-wal`, readFileSync(`${stranger}-wal`));
      db.close();
      writeFileSync(books, 'whatever this was, it is not a database any more');
      const result = restoreBooks(backup, books, { replaceExisting: true });
      expect(result.replaced).to.equal(true);
      expect(existsSync(`${books}-wal`)).to.equal(false);
      expect(readJournal(books)).to.deep.equal(readJournal(backup));
      const restored = new Database(books, { readonly: true });
      try {
        expect(restored.pragma('integrity_check', { simple: true })).to.equal('ok');
      } finally {
        restored.close();
      }
    });

    it('refuses to restore the books over themselves', async () => {
      await oldBooks();
      const refused = refusal(() => restoreBooks(books, books, { replaceExisting: true }));
      expect([refused.code, refused.message]).to.deep.equal(['same_as_books', `${books} is the books file itself`]);
    });
  });
});
