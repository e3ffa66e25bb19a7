import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { newId } from '../../src/ids.js';
import { reverseEntry } from '../../src/books/ledger.js';
import { lockPeriod, lockedThrough } from '../../src/books/periods.js';
import type { FixedClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';
import { type TempDb, freshDb } from '../support/db.js';
import { TEST_ACTOR, accountIdByName, accountIdByRole, buildBusiness, testClock, postDeposit } from '../support/factories.js';

/**
 * The database refuses every way left to change the past (migration 20261123_0003), even on a
 * connection that never ran our pragmas: the sqlite3 shell, a script, a backup tool.
 */

function refusal(work: () => unknown, what = 'the statement'): string {
  try {
    work();
  } catch (error) {
    expect(error).to.be.instanceOf(Error);
    expect((error as { code?: string }).code).to.equal('SQLITE_CONSTRAINT_TRIGGER');
    return (error as Error).message;
  }
  return expect.fail(`expected the database to refuse ${what}`);
}

function rows(db: Db, table: string): unknown[] {
  return db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all();
}

const idsNeverChange = 'ledger_accounts ids never change: journal lines and child accounts refer to an account by its id';

describe('ledger guards (migration 20261123_0003)', () => {
  let temp: TempDb;
  /** The books connection, opened through applyPragmas. */
  let db: Db;
  /** A connection as the sqlite3 shell opens one: recursive_triggers and foreign keys off. */
  let raw: Db;
  let clock: FixedClock;
  let business: Business;
  let entryId: string;

  /**
   * A business with one posted entry, bank against owner's equity. Each group of tests gets
   * its own, so a breach in one group (before the guards existed) cannot spill into the next.
   */
  function postedBusiness(): { business: Business; entryId: string } {
    const built = buildBusiness(db, clock);
    const entry = postDeposit(db, clock, built.id, '2026-03-10', 500n);
    return { business: built, entryId: entry.id };
  }

  before(async () => {
    temp = await freshDb();
    db = temp.db;
    clock = testClock();
    ({ business, entryId } = postedBusiness());
    raw = new Database(temp.path);
    // better-sqlite3 builds with foreign keys on; the sqlite3 shell and most drivers have them off.
    raw.pragma('foreign_keys = OFF');
  });

  after(() => {
    raw.close();
    temp.close();
  });

  it('uses a connection on which a REPLACE fires no DELETE trigger and no foreign key holds (the holes these guards close)', () => {
    expect(raw.pragma('recursive_triggers', { simple: true })).to.equal(0);
    expect(raw.pragma('foreign_keys', { simple: true })).to.equal(0);
  });

  describe('INSERT OR REPLACE over a posted row', () => {
    function postedLine(lineNo: number): Record<string, unknown> {
      return raw.prepare('SELECT * FROM journal_lines WHERE entry_id = ? AND line_no = ?').get(entryId, lineNo) as Record<string, unknown>;
    }

    const replaceLine = (id: unknown, line: Record<string, unknown>, amountCents: number) =>
      raw
        .prepare(
          `INSERT OR REPLACE INTO journal_lines (id, entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, line.entry_id, line.line_no, line.business_id, line.ledger_account_id, line.entry_date, line.direction, amountCents, line.basis);

    it('refuses INSERT OR REPLACE over a posted line on a connection without our pragmas', () => {
      const before = rows(db, 'journal_lines');
      const line = postedLine(1);
      expect(refusal(() => replaceLine(line.id, line, 999_999))).to.equal(
        'journal_lines rows are immutable: a line with this id, or this entry and line number, exists and cannot be replaced',
      );
      expect(rows(db, 'journal_lines')).to.deep.equal(before);
    });

    it('refuses INSERT OR REPLACE that reaches a posted line through its entry and line number (a fresh id)', () => {
      const before = rows(db, 'journal_lines');
      expect(refusal(() => replaceLine(null, postedLine(2), 1))).to.match(/^journal_lines rows are immutable/);
      expect(rows(db, 'journal_lines')).to.deep.equal(before);
    });

    it('refuses INSERT OR REPLACE over a posted entry on a connection without our pragmas', () => {
      const before = rows(db, 'journal_entries');
      const message = refusal(() =>
        raw
          .prepare(
            `INSERT OR REPLACE INTO journal_entries (id, business_id, entry_date, source_type, line_count, actor, created_at)
             VALUES (?, ?, '2026-03-11', 'manual', 2, 'forger', '2026-03-15T12:00:00.000Z')`,
          )
          .run(entryId, business.id),
      );
      expect(message).to.equal(
        'journal_entries rows are immutable: an entry with this id, or a reversal of the same entry, exists and cannot be replaced',
      );
      expect(rows(db, 'journal_entries')).to.deep.equal(before);
    });

    it('refuses INSERT OR REPLACE over an audit row on a connection without our pragmas', () => {
      const before = rows(db, 'audit_log');
      expect(before).to.not.have.lengthOf(0);
      const message = refusal(() =>
        raw
          .prepare(
            `INSERT OR REPLACE INTO audit_log (id, tenant_id, actor_type, actor_name, action, detail_json, at)
             VALUES ((SELECT min(id) FROM audit_log), ?, 'cli', 'forger', 'rewritten', '{}', '2026-03-15T12:00:00.000Z')`,
          )
          .run(business.tenantId),
      );
      expect(message).to.equal('audit_log rows are immutable: a row with this id exists and cannot be replaced');
      expect(rows(db, 'audit_log')).to.deep.equal(before);
    });

    it('still accepts ordinary inserts whose INTEGER PRIMARY KEY is auto-assigned (-1 inside the trigger)', () => {
      const linesBefore = rows(db, 'journal_lines').length;
      const auditBefore = rows(db, 'audit_log').length;
      postDeposit(db, clock, business.id, '2026-03-12', 700n);
      raw
        .prepare(`INSERT INTO audit_log (tenant_id, actor_type, actor_name, action, at) VALUES (?, 'cli', 'test', 'noted', '2026-03-15T12:00:00.000Z')`)
        .run(business.tenantId);
      expect(rows(db, 'journal_lines')).to.have.lengthOf(linesBefore + 2);
      expect(rows(db, 'audit_log').length).to.be.greaterThan(auditBefore);
    });
  });

  describe('INSERT OR REPLACE and UPDATE OR REPLACE of a posted ledger account', () => {
    let owner: Business;
    before(() => {
      ({ business: owner } = postedBusiness());
    });

    it('refuses INSERT OR REPLACE over a ledger account (it would re-insert the account with another type behind the journal)', () => {
      const before = rows(db, 'ledger_accounts');
      const bank = raw.prepare('SELECT * FROM ledger_accounts WHERE id = ?').get(accountIdByRole(db, owner.id, 'bank')) as Record<string, unknown>;
      const message = refusal(() =>
        raw
          .prepare(
            `INSERT OR REPLACE INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
             VALUES (?, ?, ?, ?, ?, 'expense', 0, 0, ?, ?)`,
          )
          .run(bank.id, bank.business_id, bank.parent_id, bank.code, bank.name, bank.system_role, bank.created_at),
      );
      expect(message).to.equal("ledger_accounts rows cannot be replaced: an account with this id, or this business's code or system role, exists");
      expect(rows(db, 'ledger_accounts')).to.deep.equal(before);
    });

    it('refuses INSERT OR REPLACE of a new account onto a posted account’s code or system role (it would delete the posted account)', () => {
      const before = rows(db, 'ledger_accounts');
      const bank = raw.prepare('SELECT * FROM ledger_accounts WHERE id = ?').get(accountIdByRole(db, owner.id, 'bank')) as Record<string, unknown>;
      const replaceWith = (code: string, role: string | null) =>
        raw
          .prepare(
            `INSERT OR REPLACE INTO ledger_accounts (id, business_id, parent_id, code, name, type, system_role, created_at)
             VALUES (?, ?, ?, ?, 'Impostor', 'expense', ?, '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), owner.id, bank.parent_id, code, role);
      expect(refusal(() => replaceWith(String(bank.code), null))).to.match(/^ledger_accounts rows cannot be replaced/);
      expect(refusal(() => replaceWith('9990', 'bank'))).to.match(/^ledger_accounts rows cannot be replaced/);
      expect(rows(db, 'ledger_accounts')).to.deep.equal(before);
    });

    it('refuses UPDATE OR REPLACE that gives another account a posted account’s code (it would delete the posted account)', () => {
      const before = rows(db, 'ledger_accounts');
      const bank = raw.prepare('SELECT code FROM ledger_accounts WHERE id = ?').get(accountIdByRole(db, owner.id, 'bank')) as { code: string };
      const meals = accountIdByName(db, owner.id, 'Meals');
      expect(refusal(() => raw.prepare('UPDATE OR REPLACE ledger_accounts SET code = ? WHERE id = ?').run(bank.code, meals))).to.equal(
        'ledger_accounts rows cannot be replaced: another account of this business has this code or system role',
      );
      expect(rows(db, 'ledger_accounts')).to.deep.equal(before);
    });
  });

  describe('a ledger account’s id', () => {
    // Each test gets its own business: before this guard, a breach deleted the bank account.
    let owner: Business;
    beforeEach(() => {
      ({ business: owner } = postedBusiness());
    });

    it('refuses UPDATE OR REPLACE that moves an account onto a posted account’s id (it would delete the posted account under its postings)', () => {
      const before = rows(db, 'ledger_accounts');
      const linesBefore = rows(db, 'journal_lines');
      const bank = accountIdByRole(db, owner.id, 'bank');
      // Meals has no postings, so no guard on posted accounts looks at it.
      const meals = accountIdByName(db, owner.id, 'Meals');
      expect(refusal(() => raw.prepare('UPDATE OR REPLACE ledger_accounts SET id = ? WHERE id = ?').run(bank, meals))).to.equal(idsNeverChange);
      expect(rows(db, 'ledger_accounts')).to.deep.equal(before);
      expect(rows(db, 'journal_lines')).to.deep.equal(linesBefore);
    });

    it('refuses any change of a ledger account’s id, posted or not (ids are never renamed)', () => {
      const before = rows(db, 'ledger_accounts');
      const accounts = {
        'Meals, which has no postings': accountIdByName(db, owner.id, 'Meals'),
        'the posted bank account': accountIdByRole(db, owner.id, 'bank'),
      };
      for (const [which, account] of Object.entries(accounts)) {
        const rename = () => raw.prepare('UPDATE ledger_accounts SET id = ? WHERE id = ?').run(newId(), account);
        expect(refusal(rename, `a new id for ${which}`), which).to.equal(idsNeverChange);
      }
      expect(rows(db, 'ledger_accounts')).to.deep.equal(before);
      // Only a change is refused: an UPDATE that writes every column back, id included, still runs.
      const meals = accountIdByName(db, owner.id, 'Meals');
      raw.prepare("UPDATE ledger_accounts SET id = id, name = 'Meals and entertainment' WHERE id = ?").run(meals);
      expect(db.prepare('SELECT name FROM ledger_accounts WHERE id = ?').get(meals)).to.deep.equal({ name: 'Meals and entertainment' });
    });
  });

  describe('INSERT OR REPLACE colliding on any one unique key of a guarded table', () => {
    /**
     * REPLACE deletes whichever row holds any unique key of the new one, so each guard must
     * look at every key: the primary key, each UNIQUE constraint, each unique index, partial
     * ones included. The keys are read from the schema rather than listed here, so an index
     * added later is tested the day it lands. For each table: which rows are posted (the ones
     * a forger would want gone), and a column the forgery changes, so that a replaced row
     * could not pass for the original.
     */
    const guarded: Record<string, { posted: string; forge: Record<string, unknown> }> = {
      journal_entries: { posted: 'TRUE', forge: { memo: 'forged' } },
      journal_lines: { posted: 'TRUE', forge: { amount_cents: 999_999 } },
      audit_log: { posted: 'TRUE', forge: { action: 'forged' } },
      ledger_accounts: { posted: 'id IN (SELECT ledger_account_id FROM journal_lines)', forge: { type: 'expense' } },
      period_locks: { posted: 'TRUE', forge: { locked_through: '2099-12-31' } },
    };

    interface Column {
      name: string;
      type: string;
      notnull: number;
      pk: number;
    }
    interface UniqueKey {
      name: string;
      columns: string[];
      /** A partial index's WHERE clause: only rows it admits can collide. */
      where: string | null;
      /** An INTEGER PRIMARY KEY: the rowid itself, with no entry in index_list. */
      rowid: boolean;
    }

    const columnsOf = (table: string) => raw.pragma(`table_info(${table})`) as Column[];

    function uniqueKeys(table: string): UniqueKey[] {
      const indexes = raw.pragma(`index_list(${table})`) as { name: string; unique: number; origin: string; partial: number }[];
      const keys = indexes
        .filter((index) => index.unique === 1)
        .map((index) => {
          const parts = (raw.pragma(`index_info(${index.name})`) as { seqno: number; name: string | null }[]).sort((a, b) => a.seqno - b.seqno);
          expect(
            parts.every((part) => part.name !== null),
            `${index.name} is on an expression: teach this test to collide on it`,
          ).to.equal(true);
          let where: string | null = null;
          if (index.partial === 1) {
            const { sql } = raw.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(index.name) as { sql: string };
            where = /\sWHERE\s([\s\S]+)$/i.exec(sql)?.[1] ?? expect.fail(`no WHERE clause in partial index ${index.name}`);
          }
          return { name: index.name, columns: parts.map((part) => part.name as string), where, rowid: false };
        });
      // Any primary key but an INTEGER one has an index (origin 'pk'); that one is the rowid.
      if (!indexes.some((index) => index.origin === 'pk')) {
        const pk = columnsOf(table)
          .filter((column) => column.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((column) => column.name);
        expect(pk, `${table} has no declared primary key; its hidden rowid needs a guard too`).to.not.have.lengthOf(0);
        keys.unshift({ name: `${table} primary key (the rowid)`, columns: pk, where: null, rowid: true });
      }
      return keys;
    }

    /** Whether inserting `row` would collide with a stored row on `key`. */
    function collides(table: string, key: UniqueKey, row: Record<string, unknown>): boolean {
      // NULLs are distinct in a unique index: a key with a NULL never collides.
      if (key.columns.some((column) => row[column] === null)) return false;
      const names = Object.keys(row);
      const candidate = `SELECT ${names.map((name) => `? AS "${name}"`).join(', ')}`;
      const values = names.map((name) => row[name]);
      if (key.where !== null && !raw.prepare(`SELECT 1 FROM (${candidate}) WHERE ${key.where}`).get(...values)) return false;
      const match = key.columns.map((column) => `"${column}" = ?`).join(' AND ');
      const stored = raw.prepare(`SELECT 1 FROM ${table} WHERE (${key.where ?? 'TRUE'}) AND ${match}`);
      return stored.get(...key.columns.map((column) => row[column])) !== undefined;
    }

    let forged = 0;
    /** A value that collides with nothing stored in this column. */
    function freshValue(table: string, column: Column, rowidKey: boolean): unknown {
      // NULL never collides; for the rowid it means "assign the next one".
      if (rowidKey || (column.notnull === 0 && column.pk === 0)) return null;
      if (/INT/i.test(column.type)) {
        const { top } = raw.prepare(`SELECT coalesce(max("${column.name}"), 0) AS top FROM ${table}`).get() as { top: number };
        return top + 1;
      }
      forged += 1;
      return `forged-${forged}`;
    }

    const snapshot = () => Object.fromEntries(Object.keys(guarded).map((table) => [table, rows(db, table)]));

    before(() => {
      // A posted entry, its posted reversal (the only rows in journal_entries_reversal) and a
      // lock, so every key of every guarded table has a posted row to collide with.
      const { business: owner, entryId: deposit } = postedBusiness();
      reverseEntry(db, clock, TEST_ACTOR, deposit, '2026-03-11');
      lockPeriod(db, clock, TEST_ACTOR, owner.id, '2026-01-31');
    });

    for (const [table, { posted, forge }] of Object.entries(guarded)) {
      it(`refuses INSERT OR REPLACE into ${table} that collides with a posted row on any one of its unique keys`, () => {
        const columns = columnsOf(table);
        const keys = uniqueKeys(table);
        for (const key of keys) {
          const present = key.columns.map((column) => `"${column}" IS NOT NULL`).join(' AND ');
          const victim = raw.prepare(`SELECT * FROM ${table} WHERE (${posted}) AND (${key.where ?? 'TRUE'}) AND ${present} ORDER BY rowid LIMIT 1`).get() as
            | Record<string, unknown>
            | undefined;
          expect(victim, `no posted row of ${table} to collide with on ${key.name}`).to.not.equal(undefined);
          // The victim's values on this key, fresh ones on every other key: a refusal then
          // comes from this key's clause in the guard and no other.
          const row: Record<string, unknown> = { ...victim, ...forge };
          for (const other of keys) {
            for (const name of other.columns) {
              if (other === key || key.columns.includes(name)) continue;
              const column = columns.find((candidate) => candidate.name === name) as Column;
              row[name] = freshValue(table, column, other.rowid);
            }
          }
          for (const other of keys) expect(collides(table, other, row), `${key.name}: the forged row collides on ${other.name}`).to.equal(other === key);

          const before = snapshot();
          const names = Object.keys(row);
          const message = refusal(() =>
            raw
              .prepare(`INSERT OR REPLACE INTO ${table} (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`)
              .run(...names.map((name) => row[name])),
            `INSERT OR REPLACE into ${table} colliding on ${key.name}`,
          );
          expect(message, key.name).to.match(new RegExp(`^${table} rows .*cannot be replaced`));
          expect(snapshot(), key.name).to.deep.equal(before);
        }
      });
    }
  });

  describe('period locks', () => {
    let locked: Business;
    const insertLock = (connection: Db, through: string, id: string = newId()) =>
      connection
        .prepare(`INSERT INTO period_locks (id, business_id, locked_through, created_at) VALUES (?, ?, ?, '2026-03-15T12:00:00.000Z')`)
        .run(id, locked.id, through);

    before(() => {
      locked = buildBusiness(db, clock);
      lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-01-31');
    });

    it('refuses DELETE FROM period_locks (a closed period is never reopened)', () => {
      const before = rows(db, 'period_locks');
      expect(refusal(() => raw.prepare('DELETE FROM period_locks WHERE business_id = ?').run(locked.id))).to.equal(
        'period_locks rows are permanent: a closed period is never reopened',
      );
      expect(rows(db, 'period_locks')).to.deep.equal(before);
      expect(lockedThrough(db, locked.id)).to.equal('2026-01-31');
    });

    it('refuses UPDATE of a period lock, backwards or forwards', () => {
      const before = rows(db, 'period_locks');
      for (const through of ['2025-12-31', '2026-02-28']) {
        expect(refusal(() => raw.prepare('UPDATE period_locks SET locked_through = ? WHERE business_id = ?').run(through, locked.id)), through).to.equal(
          'period_locks rows are permanent: a closed period is never reopened',
        );
      }
      expect(rows(db, 'period_locks')).to.deep.equal(before);
    });

    it('refuses a lock on or before the business’s latest lock', () => {
      const before = rows(db, 'period_locks');
      for (const through of ['2025-12-31', '2026-01-31']) {
        expect(refusal(() => insertLock(raw, through)), through).to.equal(
          "period lock must be after the business's latest lock: a closed period is never reopened",
        );
      }
      expect(rows(db, 'period_locks')).to.deep.equal(before);
    });

    it('refuses INSERT OR REPLACE over an existing lock, even one that moves forward', () => {
      const before = rows(db, 'period_locks');
      const { id } = raw.prepare('SELECT id FROM period_locks WHERE business_id = ?').get(locked.id) as { id: string };
      const message = refusal(() =>
        raw
          .prepare(`INSERT OR REPLACE INTO period_locks (id, business_id, locked_through, created_at) VALUES (?, ?, '2026-06-30', '2026-03-15T12:00:00.000Z')`)
          .run(id, locked.id),
      );
      expect(message).to.equal('period_locks rows are permanent: a lock with this id exists and cannot be replaced');
      expect(rows(db, 'period_locks')).to.deep.equal(before);
    });

    it('accepts a later lock, and the first lock of another business whatever its date', () => {
      insertLock(raw, '2026-02-28');
      expect(lockedThrough(db, locked.id)).to.equal('2026-02-28');
      const other = buildBusiness(db, clock);
      lockPeriod(db, clock, TEST_ACTOR, other.id, '2025-06-30');
      expect(lockedThrough(db, other.id)).to.equal('2025-06-30');
    });

    it('lockPeriod still answers conflict for a backwards lock, before the database would refuse it', () => {
      let thrown: unknown;
      try {
        lockPeriod(db, clock, TEST_ACTOR, locked.id, '2026-01-15');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).to.be.instanceOf(ApiError);
      expect((thrown as ApiError).code).to.equal('conflict');
      expect(lockedThrough(db, locked.id)).to.equal('2026-02-28');
    });
  });

  describe('ledger accounts that lines post to', () => {
    const refused = 'ledger account has postings: its business, type and heading flag cannot change';
    let owner: Business;
    let bankId: string;
    before(() => {
      ({ business: owner } = postedBusiness());
      bankId = accountIdByRole(db, owner.id, 'bank');
    });

    const changes: { what: string; sql: string; params: () => unknown[] }[] = [
      { what: 'type', sql: "UPDATE ledger_accounts SET type = 'expense' WHERE id = ?", params: () => [bankId] },
      { what: 'is_heading', sql: 'UPDATE ledger_accounts SET is_heading = 1 WHERE id = ?', params: () => [bankId] },
      {
        what: 'business_id',
        // A fresh code and no role, so no UNIQUE constraint stands in for the trigger.
        sql: "UPDATE ledger_accounts SET business_id = ?, code = '9999', system_role = NULL WHERE id = ?",
        params: () => [buildBusiness(db, clock, { tenantId: owner.tenantId }).id, bankId],
      },
    ];
    for (const { what, sql, params } of changes) {
      it(`refuses a change of ${what} of an account that journal lines reference`, () => {
        const values = params();
        const before = rows(db, 'ledger_accounts');
        expect(refusal(() => raw.prepare(sql).run(...values))).to.equal(refused);
        expect(rows(db, 'ledger_accounts')).to.deep.equal(before);
      });
    }

    it('still renames, recodes and archives an account with postings', () => {
      raw.prepare("UPDATE ledger_accounts SET name = 'Main checking', code = '1111' WHERE id = ?").run(bankId);
      raw.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(bankId);
      raw.prepare('UPDATE ledger_accounts SET archived = 0 WHERE id = ?').run(bankId);
      const account = db.prepare('SELECT name, code, archived, type FROM ledger_accounts WHERE id = ?').get(bankId);
      expect(account).to.deep.equal({ name: 'Main checking', code: '1111', archived: 0n, type: 'asset' });
    });

    it('still lets an account nothing posts to change its type', () => {
      const meals = accountIdByName(db, owner.id, 'Meals');
      raw.prepare("UPDATE ledger_accounts SET type = 'asset' WHERE id = ?").run(meals);
      expect(db.prepare('SELECT type FROM ledger_accounts WHERE id = ?').get(meals)).to.deep.equal({ type: 'asset' });
    });
  });
});
