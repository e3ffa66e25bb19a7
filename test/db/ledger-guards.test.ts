import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { Business } from '../../src/books/businesses.js';
import { newId } from '../../src/books/ids.js';
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

function refusal(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(error).to.be.instanceOf(Error);
    expect((error as { code?: string }).code).to.equal('SQLITE_CONSTRAINT_TRIGGER');
    return (error as Error).message;
  }
  return expect.fail('expected the database to refuse the statement');
}

function rows(db: Db, table: string): unknown[] {
  return db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all();
}

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
      expect(message).to.equal('journal_entries rows are immutable: an entry with this id exists and cannot be replaced');
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
    const refused = 'ledger account has postings: its id, business, type and heading flag cannot change';
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
      { what: 'id', sql: 'UPDATE ledger_accounts SET id = ? WHERE id = ?', params: () => [newId(), bankId] },
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
