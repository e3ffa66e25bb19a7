import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { Knex } from 'knex';
import type { MigrationEntry } from '../../src/db/migrations/index.js';
import type { Business } from '../../src/books/businesses.js';
import { newId } from '../../src/ids.js';
import { SOURCE_TYPES, postEntry, reverseEntry } from '../../src/books/ledger.js';
import type { FixedClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { type TableRebuild, rebuildTable, rebuildTableInMigration } from '../../src/db/rebuild.js';
import { type TempDb, freshDb } from '../support/db.js';
import { TEST_ACTOR, accountIdByRole, buildBusiness, testClock } from '../support/factories.js';

/**
 * The table-rebuild procedure on a books file with real postings: journal_entries is the
 * hardest table to rebuild (other tables reference it, it references itself, it has triggers,
 * and triggers of journal_lines name it).
 */

const WIDENED_SOURCE_TYPES = [...SOURCE_TYPES, 'payroll'];

/** journal_entries as a real migration would write it out, with a wider source_type list. */
function journalEntriesTable(name: string): string {
  const sourceTypes = WIDENED_SOURCE_TYPES.map((type) => `'${type}'`).join(',');
  return `CREATE TABLE ${name} (
    id TEXT PRIMARY KEY,
    business_id TEXT NOT NULL REFERENCES businesses(id),
    entry_date TEXT NOT NULL CHECK (entry_date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    memo TEXT CHECK (length(memo) <= 2000),
    source_type TEXT NOT NULL CHECK (source_type IN (${sourceTypes})),
    source_id TEXT,
    reverses_entry_id TEXT REFERENCES journal_entries(id),
    line_count INTEGER NOT NULL CHECK (line_count >= 2),
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT`;
}

const widenSourceTypes: TableRebuild = { table: 'journal_entries', create: journalEntriesTable };

function rebuildMigration(name: string, rebuild: TableRebuild): MigrationEntry {
  return {
    name,
    module: {
      config: { transaction: false },
      up: (knex: Knex) => rebuildTableInMigration(knex, rebuild),
      down: async () => {
        throw new Error('not rolled back');
      },
    },
  };
}

function rows(db: Db, table: string): unknown[] {
  return db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all();
}

/** Every schema object but the named table itself: indexes, triggers and the other tables. */
function schemaBesides(db: Db, table: string): unknown[] {
  return db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE NOT (type = 'table' AND name = ?) ORDER BY type, name").all(table);
}

function fullSchema(db: Db): unknown[] {
  return db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all();
}

async function rejectionOf(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (error) {
    expect(error).to.be.instanceOf(Error);
    return error as Error;
  }
  return expect.fail('expected the migration to fail');
}

function errorOf(work: () => unknown): Error {
  try {
    work();
  } catch (error) {
    expect(error).to.be.instanceOf(Error);
    return error as Error;
  }
  return expect.fail('expected the statement to fail');
}

/** A migrated books file holding posted entries, one of them reversed. */
async function booksWithPostings(): Promise<{ temp: TempDb; business: Business; clock: FixedClock }> {
  const temp = await freshDb();
  const clock = testClock();
  const business = buildBusiness(temp.db, clock);
  const bank = accountIdByRole(temp.db, business.id, 'bank');
  const equity = accountIdByRole(temp.db, business.id, 'owner_equity');
  const entryIds = ['2026-03-01', '2026-03-02', '2026-03-03'].map(
    (date, index) =>
      postEntry(temp.db, clock, TEST_ACTOR, {
        businessId: business.id,
        date,
        sourceType: 'manual',
        lines: [
          { accountId: bank, direction: 'debit', amountCents: BigInt(100 * (index + 1)) },
          { accountId: equity, direction: 'credit', amountCents: BigInt(100 * (index + 1)) },
        ],
      }).id,
  );
  reverseEntry(temp.db, clock, TEST_ACTOR, entryIds[1]!, '2026-03-04');
  return { temp, business, clock };
}

describe('rebuildTable (src/db/rebuild.ts)', () => {
  describe('a migration that rebuilds journal_entries with a wider source_type list', () => {
    const name = '20991231_0001_test_widen_source_types';
    let temp: TempDb;
    let db: Db;
    let business: Business;
    let entriesBefore: unknown[];
    let linesBefore: unknown[];
    let schemaBefore: unknown[];
    let applied: string[];

    before(async () => {
      ({ temp, business } = await booksWithPostings());
      db = temp.db;
      entriesBefore = rows(db, 'journal_entries');
      linesBefore = rows(db, 'journal_lines');
      schemaBefore = schemaBesides(db, 'journal_entries');
      ({ applied } = await migrateLatest(temp.path, [rebuildMigration(name, widenSourceTypes)]));
    });

    after(() => temp.close());

    it('runs and is recorded like any migration', () => {
      expect(applied).to.deep.equal([name]);
      const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'journal_entries'").get() as { sql: string }).sql;
      expect(sql).to.include("'payroll'");
    });

    it('keeps every entry and every line exactly as posted', () => {
      expect(entriesBefore).to.have.lengthOf(4);
      expect(rows(db, 'journal_entries')).to.deep.equal(entriesBefore);
      expect(rows(db, 'journal_lines')).to.deep.equal(linesBefore);
    });

    it('keeps every foreign key: foreign_key_check is empty and a reference to a missing entry is still refused', () => {
      expect(db.prepare('PRAGMA foreign_key_check').all()).to.deep.equal([]);
      expect(db.pragma('foreign_keys', { simple: true })).to.equal(1n);
      const missing = newId();
      const fromTransaction = errorOf(() =>
        db
          .prepare(
            `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, status, source, journal_entry_id, created_at)
             VALUES (?, ?, '2026-03-10', 100, 'out', 'pending', 'manual', ?, '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), business.id, missing),
      );
      expect(fromTransaction.message).to.equal('FOREIGN KEY constraint failed');
      const reversalOfNothing = errorOf(() =>
        db
          .prepare(
            `INSERT INTO journal_entries (id, business_id, entry_date, source_type, reverses_entry_id, line_count, actor, created_at)
             VALUES (?, ?, '2026-03-10', 'reversal', ?, 2, 'test', '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), business.id, missing),
      );
      expect(reversalOfNothing.message).to.equal('FOREIGN KEY constraint failed');
    });

    it('recreates the indexes and triggers of journal_entries and the triggers of other tables that name it, unchanged', () => {
      expect(schemaBesides(db, 'journal_entries')).to.deep.equal(schemaBefore);
    });

    it('still refuses UPDATE, DELETE and INSERT OR REPLACE of a posted entry', () => {
      const [first] = rows(db, 'journal_entries') as { id: string }[];
      expect(errorOf(() => db.prepare("UPDATE journal_entries SET memo = 'edited' WHERE id = ?").run(first!.id)).message).to.equal(
        'journal_entries rows are immutable; post a reversing entry instead',
      );
      expect(errorOf(() => db.prepare('DELETE FROM journal_entries WHERE id = ?').run(first!.id)).message).to.equal(
        'journal_entries rows are immutable; post a reversing entry instead',
      );
      const replace = errorOf(() =>
        db
          .prepare(
            `INSERT OR REPLACE INTO journal_entries (id, business_id, entry_date, source_type, line_count, actor, created_at)
             VALUES (?, ?, '2026-03-01', 'manual', 2, 'forger', '2026-03-15T12:00:00.000Z')`,
          )
          .run(first!.id, business.id),
      );
      expect(replace.message).to.match(/^journal_entries rows are immutable/);
      expect(rows(db, 'journal_entries')).to.deep.equal(entriesBefore);
    });

    it('still refuses a line added to a posted entry (a journal_lines trigger that reads journal_entries)', () => {
      const [first] = rows(db, 'journal_entries') as { id: string }[];
      const error = errorOf(() =>
        db
          .prepare(
            `INSERT INTO journal_lines (entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
             VALUES (?, 3, ?, ?, '2026-03-01', 'debit', 100, 'both')`,
          )
          .run(first!.id, business.id, accountIdByRole(db, business.id, 'bank')),
      );
      expect(error.message).to.equal('journal entry is closed: it already has all its lines');
    });

    it('accepts the new source type and still refuses one outside the list', () => {
      const insertEntry = (sourceType: string) =>
        db
          .prepare(
            `INSERT INTO journal_entries (id, business_id, entry_date, source_type, line_count, actor, created_at)
             VALUES (?, ?, '2026-03-10', ?, 2, 'test', '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), business.id, sourceType);
      expect(insertEntry('payroll').changes).to.equal(1);
      expect(errorOf(() => insertEntry('gift')).message).to.match(/^CHECK constraint failed: source_type IN/);
    });
  });

  describe('a rebuild that would leave a dangling reference', () => {
    const name = '20991231_0002_test_copy_one_entry';
    let temp: TempDb;
    let db: Db;
    before(async () => {
      ({ temp } = await booksWithPostings());
      db = temp.db;
    });
    after(() => temp.close());

    it('fails on PRAGMA foreign_key_check and rolls back completely: the old table, its rows and triggers intact', async () => {
      const entriesBefore = rows(db, 'journal_entries');
      const schemaBefore = fullSchema(db);
      const copyOneEntry = (from: string, to: string) => `INSERT INTO ${to} SELECT * FROM ${from} ORDER BY entry_date LIMIT 1`;
      const error = await rejectionOf(migrateLatest(temp.path, [rebuildMigration(name, { ...widenSourceTypes, copy: copyOneEntry })]));
      expect(error.message).to.match(/^rebuild of journal_entries would break \d+ foreign key reference\(s\): journal_lines row/);
      expect(rows(db, 'journal_entries')).to.deep.equal(entriesBefore);
      expect(fullSchema(db)).to.deep.equal(schemaBefore);
      expect(db.prepare('SELECT name FROM knex_migrations WHERE name = ?').all(name)).to.deep.equal([]);
      expect(db.prepare('PRAGMA foreign_key_check').all()).to.deep.equal([]);
    });

    it('leaves foreign keys on for the connection after the failure', () => {
      const connection = new Database(temp.path);
      try {
        connection.pragma('foreign_keys = ON');
        const copyNothing = (from: string, to: string) => `INSERT INTO ${to} SELECT * FROM ${from} WHERE 0`;
        expect(errorOf(() => rebuildTable(connection, { ...widenSourceTypes, copy: copyNothing })).message).to.match(/would break/);
        expect(connection.pragma('foreign_keys', { simple: true })).to.equal(1);
      } finally {
        connection.close();
      }
    });

    it('refuses a rebuild that would silently lose a column', () => {
      const withoutMemo = (tableName: string) => journalEntriesTable(tableName).replace(/^\s*memo TEXT[^\n]*\n/m, '');
      const schemaBefore = fullSchema(db);
      expect(errorOf(() => rebuildTable(db, { table: 'journal_entries', create: withoutMemo })).message).to.equal(
        'rebuild of journal_entries would lose columns memo; list them in droppedColumns if that is meant',
      );
      expect(fullSchema(db)).to.deep.equal(schemaBefore);
    });

    it('refuses to run inside a transaction, where PRAGMA foreign_keys cannot change', () => {
      const error = errorOf(() => db.transaction(() => rebuildTable(db, widenSourceTypes))());
      expect(error.message).to.match(/must run outside a transaction/);
    });

    it('fails fast, naming the fix, when the migration forgets config = { transaction: false }', async () => {
      const inKnexTransaction: MigrationEntry = {
        name: '20991231_0003_test_rebuild_in_transaction',
        module: { up: (knex: Knex) => rebuildTableInMigration(knex, widenSourceTypes), down: async () => undefined },
      };
      const error = await rejectionOf(migrateLatest(temp.path, [inKnexTransaction]));
      expect(error.message).to.match(/export config = \{ transaction: false \}/);
    });
  });

  describe('why the procedure is needed (what SQLite does without it)', () => {
    let temp: TempDb;
    before(async () => {
      ({ temp } = await booksWithPostings());
    });
    after(() => temp.close());

    it('a rebuild inside knex’s transaction fails: DROP TABLE checks the foreign keys that still point at the rows', async () => {
      const naive: MigrationEntry = {
        name: '20991231_0004_test_naive_rebuild',
        module: {
          up: async (knex: Knex) => {
            await knex.raw('PRAGMA foreign_keys = OFF'); // a no-op inside the transaction
            await knex.raw(journalEntriesTable('new_journal_entries'));
            await knex.raw('INSERT INTO new_journal_entries SELECT * FROM journal_entries');
            await knex.raw('DROP TABLE journal_entries');
          },
          down: async () => undefined,
        },
      };
      const error = await rejectionOf(migrateLatest(temp.path, [naive]));
      expect(error.message).to.match(/FOREIGN KEY constraint failed/);
    });

    it('renaming new_X to X fails while a trigger of another table names the dropped X (legacy_alter_table off)', () => {
      const connection = new Database(temp.path);
      try {
        connection.pragma('foreign_keys = OFF');
        const attempt = connection.transaction(() => {
          connection.exec(journalEntriesTable('new_journal_entries'));
          connection.exec('INSERT INTO new_journal_entries SELECT * FROM journal_entries');
          connection.exec('DROP TABLE journal_entries');
          connection.exec('ALTER TABLE new_journal_entries RENAME TO journal_entries');
        });
        expect(errorOf(() => attempt()).message).to.match(/^error in trigger journal_lines_\w+: no such table: main\.journal_entries$/);
        expect(connection.prepare("SELECT name FROM sqlite_master WHERE name = 'new_journal_entries'").all()).to.deep.equal([]);
      } finally {
        connection.close();
      }
    });
  });
});
