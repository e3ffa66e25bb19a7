import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../../src/ids.js';
import type { Business } from '../../src/books/businesses.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { FixedClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { type TempDb, freshDb } from '../support/db.js';
import { accountIdByRole, buildBusiness, testClock, postDeposit } from '../support/factories.js';

function sqliteErrorOf(work: () => unknown): Error & { code?: string } {
  try {
    work();
  } catch (error) {
    expect(error).to.be.instanceOf(Error);
    return error as Error & { code?: string };
  }
  expect.fail('expected the database to refuse the statement');
}

function count(db: Db, table: string): bigint {
  return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: bigint }).n;
}

describe('schema (src/db/migrations)', () => {
  let temp: TempDb;
  let db: Db;
  let clock: FixedClock;
  let business: Business;
  let entryId: string;
  /** An entry row written directly with room for many lines, to exercise line triggers alone. */
  let openEntryId: string;

  before(async () => {
    temp = await freshDb();
    db = temp.db;
    clock = testClock();
    business = buildBusiness(db, clock);
    entryId = postDeposit(db, clock, business.id, '2026-03-10', 500n).id;
    openEntryId = newId();
    db.prepare(
      `INSERT INTO journal_entries (id, business_id, entry_date, source_type, line_count, actor, created_at)
       VALUES (?, ?, '2026-03-10', 'manual', 100, 'test', '2026-03-15T12:00:00.000Z')`,
    ).run(openEntryId, business.id);
  });

  after(() => temp.close());

  describe('append-only tables', () => {
    const cases: { table: string; update: string; remove: string }[] = [
      {
        table: 'journal_entries',
        update: "UPDATE journal_entries SET memo = 'edited'",
        remove: 'DELETE FROM journal_entries',
      },
      {
        table: 'journal_lines',
        update: 'UPDATE journal_lines SET amount_cents = amount_cents + 1',
        remove: 'DELETE FROM journal_lines',
      },
      {
        table: 'audit_log',
        update: "UPDATE audit_log SET action = 'edited'",
        remove: 'DELETE FROM audit_log',
      },
    ];

    for (const { table, update, remove } of cases) {
      it(`refuses UPDATE on ${table}`, () => {
        const before = db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all();
        expect(before).to.not.have.lengthOf(0);
        const error = sqliteErrorOf(() => db.prepare(update).run());
        expect(error.message).to.equal(`${table} rows are immutable; post a reversing entry instead`);
        expect(error.code).to.equal('SQLITE_CONSTRAINT_TRIGGER');
        expect(db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).to.deep.equal(before);
      });

      it(`refuses DELETE on ${table}`, () => {
        const before = count(db, table);
        const error = sqliteErrorOf(() => db.prepare(remove).run());
        expect(error.message).to.equal(`${table} rows are immutable; post a reversing entry instead`);
        expect(count(db, table)).to.equal(before);
      });
    }

    const replacements: { table: string; sql: (db: Db) => void }[] = [
      {
        table: 'journal_lines',
        sql: (db) => {
          const line = db.prepare('SELECT * FROM journal_lines WHERE entry_id = ? AND line_no = 1').get(entryId) as Record<string, unknown>;
          db.prepare(
            `INSERT OR REPLACE INTO journal_lines (id, entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
             VALUES (?, ?, 1, ?, ?, ?, ?, 999999, ?)`,
          ).run(line.id, entryId, line.business_id, line.ledger_account_id, line.entry_date, line.direction, line.basis);
        },
      },
      {
        table: 'journal_entries',
        sql: (db) =>
          db
            .prepare(
              `INSERT OR REPLACE INTO journal_entries (id, business_id, entry_date, source_type, line_count, actor, created_at)
               VALUES (?, ?, '2026-03-10', 'manual', 2, 'forger', '2026-03-15T12:00:00.000Z')`,
            )
            .run(entryId, business.id),
      },
      {
        table: 'audit_log',
        sql: (db) =>
          db
            .prepare(
              `INSERT OR REPLACE INTO audit_log (id, tenant_id, actor_type, actor_name, action, detail_json, at)
               VALUES ((SELECT min(id) FROM audit_log), ?, 'cli', 'forger', 'rewritten', '{}', '2026-03-15T12:00:00.000Z')`,
            )
            .run(business.tenantId),
      },
    ];
    for (const { table, sql } of replacements) {
      it(`refuses INSERT OR REPLACE over a row of ${table} (the BEFORE INSERT trigger fires before the REPLACE deletes)`, () => {
        const before = db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all();
        const error = sqliteErrorOf(() => sql(db));
        expect(error.message).to.match(new RegExp(`^${table} rows are immutable: .* cannot be replaced$`));
        expect(db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).to.deep.equal(before);
      });
    }

    it('refuses a line added to a posted entry (the entry is closed at its line_count)', () => {
      const before = count(db, 'journal_lines');
      const error = sqliteErrorOf(() =>
        db
          .prepare(
            `INSERT INTO journal_lines (entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
             VALUES (?, 3, ?, ?, '2026-03-10', 'debit', 12345, 'both')`,
          )
          .run(entryId, business.id, accountIdByRole(db, business.id, 'bank')),
      );
      expect(error.message).to.equal('journal entry is closed: it already has all its lines');
      expect(count(db, 'journal_lines')).to.equal(before);
    });

    it('refuses an UPDATE that changes nothing, too', () => {
      const error = sqliteErrorOf(() => db.prepare('UPDATE journal_entries SET memo = memo WHERE id = ?').run(entryId));
      expect(error.message).to.match(/journal_entries rows are immutable/);
    });
  });

  describe('the journal_lines_postable trigger', () => {
    const insertLine = (accountId: string, lineNo: number, overrides: { businessId?: string; date?: string; entry?: string } = {}) =>
      db
        .prepare(
          `INSERT INTO journal_lines (entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
           VALUES (?, ?, ?, ?, ?, 'debit', 100, 'both')`,
        )
        .run(overrides.entry ?? openEntryId, lineNo, overrides.businessId ?? business.id, accountId, overrides.date ?? '2026-03-10');
    const refusal = "journal line must post to a postable account of the entry's business";

    it('refuses a line on a heading account', () => {
      const heading = db.prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND name = 'Assets'").get(business.id) as { id: string };
      const before = count(db, 'journal_lines');
      expect(sqliteErrorOf(() => insertLine(heading.id, 10)).message).to.equal(refusal);
      expect(count(db, 'journal_lines')).to.equal(before);
    });

    it('refuses a line on another business’s account', () => {
      const other = buildBusiness(db, clock, { tenantId: business.tenantId });
      const before = count(db, 'journal_lines');
      expect(sqliteErrorOf(() => insertLine(accountIdByRole(db, other.id, 'bank'), 11)).message).to.equal(refusal);
      // Claiming the other business on the line does not help: the entry belongs to this one.
      expect(sqliteErrorOf(() => insertLine(accountIdByRole(db, other.id, 'bank'), 12, { businessId: other.id })).message).to.equal(refusal);
      expect(count(db, 'journal_lines')).to.equal(before);
    });

    it('refuses a line on an archived account, or dated off its entry', () => {
      const meals = db.prepare("SELECT id FROM ledger_accounts WHERE business_id = ? AND name = 'Meals'").get(business.id) as { id: string };
      db.prepare('UPDATE ledger_accounts SET archived = 1 WHERE id = ?').run(meals.id);
      expect(sqliteErrorOf(() => insertLine(meals.id, 13)).message).to.equal(refusal);
      expect(sqliteErrorOf(() => insertLine(accountIdByRole(db, business.id, 'bank'), 14, { date: '2026-03-11' })).message).to.equal(refusal);
    });

    it('accepts a direct line on a postable leaf of the entry’s business (the trigger is not the balance check)', () => {
      const before = count(db, 'journal_lines');
      insertLine(accountIdByRole(db, business.id, 'bank'), 1);
      expect(count(db, 'journal_lines')).to.equal(before + 1n);
    });
  });

  describe('CHECK constraints', () => {
    it('refuses a negative or zero amount_cents on a journal line', () => {
      for (const amount of [-100n, 0n, 10n ** 15n]) {
        const error = sqliteErrorOf(() =>
          db
            .prepare(
              `INSERT INTO journal_lines (entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
               VALUES (?, 20, ?, ?, '2026-03-10', 'credit', ?, 'both')`,
            )
            .run(openEntryId, business.id, accountIdByRole(db, business.id, 'bank'), amount),
        );
        expect(error.message, String(amount)).to.match(/^CHECK constraint failed: amount_cents > 0 AND amount_cents < 1000000000000000/);
      }
    });

    it('refuses a negative amount_cents on a transaction', () => {
      const error = sqliteErrorOf(() =>
        db
          .prepare(
            `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, status, source, created_at)
             VALUES (?, ?, '2026-03-10', -1, 'out', 'pending', 'manual', '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), business.id),
      );
      expect(error.message).to.equal('CHECK constraint failed: amount_cents >= 0');
    });

    const insertCustomer = (currency: string) =>
      db
        .prepare(`INSERT INTO customers (id, tenant_id, name, name_key, currency, created_at) VALUES (?, ?, 'Acme', 'acme', ?, '2026-03-15T12:00:00.000Z')`)
        .run(newId(), business.tenantId, currency);

    it('refuses an unknown currency on customers', () => {
      for (const currency of ['JPY', 'usd', '']) {
        expect(sqliteErrorOf(() => insertCustomer(currency)).message, currency).to.match(/^CHECK constraint failed: currency IN/);
      }
      expect(insertCustomer('MXN').changes).to.equal(1);
    });

    it('refuses an unknown invoice status', () => {
      const customerId = newId();
      db.prepare(`INSERT INTO customers (id, tenant_id, name, name_key, created_at) VALUES (?, ?, 'Invoiced Co', 'invoiced co', '2026-03-15T12:00:00.000Z')`).run(
        customerId,
        business.tenantId,
      );
      const insertInvoice = (status: string, number: string) =>
        db
          .prepare(
            `INSERT INTO invoices (id, business_id, customer_id, number, status, currency, issue_date, due_date, subtotal_cents, tax_cents,
                                   total_cents, pay_token, created_at)
             VALUES (?, ?, ?, ?, ?, 'USD', '2026-03-01', '2026-03-31', 1000, 0, 1000, ?, '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), business.id, customerId, number, status, newId());
      for (const status of ['lost', 'Draft', 'cancelled']) {
        expect(sqliteErrorOf(() => insertInvoice(status, `X-${status}`)).message, status).to.match(/^CHECK constraint failed: status IN/);
      }
      expect(insertInvoice('draft', 'INV-1').changes).to.equal(1);
    });

    it('refuses a fractional amount in a STRICT INTEGER column', () => {
      const error = sqliteErrorOf(() =>
        db
          .prepare(
            `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, status, source, created_at)
             VALUES (?, ?, '2026-03-10', 1.5, 'out', 'pending', 'manual', '2026-03-15T12:00:00.000Z')`,
          )
          .run(newId(), business.id),
      );
      expect(error.message).to.match(/cannot store REAL value in INTEGER column transactions\.amount_cents/);
    });
  });

  describe('migrateLatest', () => {
    it('is idempotent: a second run applies nothing', async () => {
      expect(await migrateLatest(temp.path)).to.deep.equal({ applied: [] });
      expect(await migrateLatest(temp.path)).to.deep.equal({ applied: [] });
      const recorded = db.prepare('SELECT name FROM knex_migrations ORDER BY id').all() as { name: string }[];
      expect(recorded.map((row) => row.name)).to.deep.equal(migrations.map((m) => m.name));
    });

    it('applies every listed migration to an empty file', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'daybook-schema-'));
      try {
        expect(await migrateLatest(join(dir, 'empty.sqlite'))).to.deep.equal({ applied: migrations.map((m) => m.name) });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses to run when the recorded history names a migration that is not in the list', async () => {
      const other = await freshDb();
      try {
        other.db.prepare("INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('20261201_0099_gone', 2, 0)").run();
        let rejection: unknown;
        try {
          await migrateLatest(other.path);
        } catch (error) {
          rejection = error;
        }
        expect(rejection).to.be.instanceOf(Error);
        expect((rejection as Error).message).to.match(/20261201_0099_gone/);
        expect((rejection as Error).message).to.match(/corrupt|missing/);
      } finally {
        other.close();
      }
    });
  });
});
