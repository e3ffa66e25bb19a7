import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../../src/db/connection.js';
import { projectRoot } from '../../src/paths.js';
import { freshDb, type TempDb } from '../support/db.js';

const SNAPSHOT = join(projectRoot, 'src', 'db', 'schema.sql');

function dumpSchema(temp: TempDb): string {
  const rows = temp.db
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'knex_%' AND name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all() as { type: string; name: string; sql: string }[];
  return `${rows.map((row) => `${row.sql.replace(/[ \t]+$/gm, '')};`).join('\n\n')}\n`;
}

/**
 * src/db/schema.sql is the readable schema every migration produces, and was itself made from
 * the migrations: comparing the two only detects a change. This test fails whenever they
 * differ, so a schema change cannot land without its migration and a reviewed snapshot; it
 * says nothing about whether either is right. Regenerate with UPDATE_SCHEMA_SNAPSHOT=1 npm test.
 */
describe('schema snapshot (src/db/schema.sql): detects a schema change, proves nothing about it', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it('is what the migrations produce today', () => {
    const actual = dumpSchema(temp);
    if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') writeFileSync(SNAPSHOT, actual);
    expect(existsSync(SNAPSHOT), 'src/db/schema.sql is missing: run UPDATE_SCHEMA_SNAPSHOT=1 npm test').to.equal(true);
    expect(actual).to.equal(readFileSync(SNAPSHOT, 'utf8'), 'schema changed: add a migration and run UPDATE_SCHEMA_SNAPSHOT=1 npm test');
  });
});

/** knex's own record of the migrations it ran: created by knex, not by our migrations. */
const KNEX_TABLES = new Set(['knex_migrations', 'knex_migrations_lock']);

/** The one REAL column: a score, not money (books/categorise: "Confidence is a score, not money"). */
const REAL_COLUMNS = new Set(['review_queue_items.confidence']);

/**
 * Parents whose child foreign key columns may go unindexed. SQLite scans every child table for
 * referencing rows when a parent row is deleted (or its key changed); a parent the books never
 * delete from costs nothing there. Each reason is checked below: no statement in src/ deletes
 * from these tables.
 */
const NEVER_DELETED: Record<string, string> = {
  journal_entries: 'append-only: a trigger refuses DELETE; a correction is a reversing entry',
  ledger_accounts: 'archived, never deleted; a trigger keeps its id fixed',
  tenants: 'a hosted firm is kept (billing past_due, API access off), never removed',
  businesses: 'a business is kept with its books',
  invoices: 'voided, never deleted',
  transactions: 'a bank line is settled or recorded, never removed',
  vendors: 'kept: expenses, bills and the register name them',
};

interface TableRow {
  name: string;
  strict: bigint;
}
interface ColumnRow {
  name: string;
  type: string;
  pk: bigint;
}
interface ForeignKeyRow {
  id: bigint;
  seq: bigint;
  table: string;
  from: string;
  to: string | null;
}
interface IndexRow {
  name: string;
  unique: bigint;
  partial: bigint;
}

/** The books' tables, from the migrated file (not from schema.sql). */
function tablesOf(db: Db): string[] {
  const rows = db.prepare("SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as TableRow[];
  return rows.map((row) => row.name).filter((name) => !KNEX_TABLES.has(name));
}

function columnsOf(db: Db, table: string): ColumnRow[] {
  return db.pragma(`table_info("${table}")`) as ColumnRow[];
}

function primaryKeyOf(db: Db, table: string): string[] {
  return columnsOf(db, table)
    .filter((column) => column.pk > 0n)
    .sort((a, b) => Number(a.pk - b.pk))
    .map((column) => column.name);
}

/** Each index's columns in order (expressions as null), the primary key first. */
function indexesOf(db: Db, table: string): { columns: (string | null)[]; unique: boolean; partial: boolean }[] {
  const indexes = (db.pragma(`index_list("${table}")`) as IndexRow[]).map((index) => ({
    columns: (db.pragma(`index_info("${index.name}")`) as { seqno: bigint; name: string | null }[])
      .sort((a, b) => Number(a.seqno - b.seqno))
      .map((part) => part.name),
    unique: index.unique === 1n,
    partial: index.partial === 1n,
  }));
  return [{ columns: primaryKeyOf(db, table), unique: true, partial: false }, ...indexes];
}

/** Foreign keys of a table, one entry per constraint (a composite key has several rows). */
function foreignKeysOf(db: Db, table: string): { parent: string; from: string[]; to: (string | null)[] }[] {
  const byId = new Map<bigint, ForeignKeyRow[]>();
  for (const row of db.pragma(`foreign_key_list("${table}")`) as ForeignKeyRow[]) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
  return [...byId.values()].map((rows) => {
    const ordered = rows.sort((a, b) => Number(a.seq - b.seq));
    return { parent: ordered[0]!.table, from: ordered.map((row) => row.from), to: ordered.map((row) => row.to) };
  });
}

/** Every table named in a `DELETE FROM` in src/ (the migrations included). */
function tablesDeletedFromInSource(): Set<string> {
  const found = new Set<string>();
  const files = readdirSync(join(projectRoot, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  for (const file of files) {
    const text = readFileSync(join(projectRoot, 'src', file), 'utf8');
    for (const match of text.matchAll(/DELETE\s+FROM\s+["`]?([\w${}]+)/gi)) found.add(match[1]!);
  }
  return found;
}

/** An unconditional `BEFORE <event> ON <table>` trigger whose whole body is RAISE(ABORT, ...). */
function refusesEvery(db: Db, table: string, event: 'UPDATE' | 'DELETE'): boolean {
  const triggers = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?").all(table) as { sql: string }[];
  const refusal = new RegExp(
    `^CREATE TRIGGER \\S+ BEFORE ${event} ON "?${table}"?\\s+(?:FOR EACH ROW\\s+)?BEGIN SELECT RAISE\\(ABORT, '(?:[^']|'')*'\\); END$`,
    'i',
  );
  return triggers.some((trigger) => refusal.test(trigger.sql.trim()));
}

/**
 * What the books rely on, read from the file the migrations build (PRAGMA table_list,
 * table_info, foreign_key_list, index_list and sqlite_master), independent of schema.sql.
 */
describe('the migrated schema keeps the properties the books rely on', () => {
  let temp: TempDb;
  let db: Db;
  let tables: string[];
  before(async () => {
    temp = await freshDb();
    db = temp.db;
    tables = tablesOf(db);
  });
  after(() => temp.close());

  it('finds the books\' tables (the checks below are not vacuous)', () => {
    expect(tables).to.include.members(['journal_entries', 'journal_lines', 'audit_log', 'invoices', 'ledger_accounts', 'transactions']);
  });

  it('makes every table STRICT, so no column stores a value of another type (knex\'s migration record aside)', () => {
    const rows = db.prepare("SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND type = 'table'").all() as TableRow[];
    const loose = rows.filter((row) => tables.includes(row.name) && row.strict !== 1n).map((row) => row.name);
    expect(loose).to.deep.equal([]);
  });

  it('keeps money in whole cents: every *_cents column is INTEGER, and no column but the categoriser\'s confidence is REAL', () => {
    const moneyColumns: string[] = [];
    const notInteger: string[] = [];
    const real: string[] = [];
    for (const table of tables) {
      for (const column of columnsOf(db, table)) {
        const name = `${table}.${column.name}`;
        if (column.name.endsWith('_cents')) {
          moneyColumns.push(name);
          if (column.type !== 'INTEGER') notInteger.push(`${name} ${column.type}`);
        }
        if (!['INTEGER', 'TEXT', 'BLOB', 'ANY'].includes(column.type)) real.push(`${name} ${column.type}`);
      }
    }
    expect(moneyColumns).to.include.members(['journal_lines.amount_cents', 'invoices.total_cents', 'invoice_payments.amount_cents', 'bills.amount_cents']);
    expect(notInteger).to.deep.equal([]);
    expect(real).to.deep.equal([...REAL_COLUMNS].map((name) => `${name} REAL`));
  });

  for (const table of ['journal_entries', 'journal_lines', 'audit_log']) {
    it(`makes ${table} append-only: unconditional triggers refuse every UPDATE and every DELETE`, () => {
      expect(refusesEvery(db, table, 'UPDATE'), `BEFORE UPDATE ON ${table}`).to.equal(true);
      expect(refusesEvery(db, table, 'DELETE'), `BEFORE DELETE ON ${table}`).to.equal(true);
    });
  }

  it('points every foreign key at its parent\'s primary key or a whole unique key, so SQLite can enforce it', () => {
    const broken: string[] = [];
    for (const table of tables) {
      for (const key of foreignKeysOf(db, table)) {
        const name = `${table}(${key.from.join(', ')}) -> ${key.parent}`;
        if (!tables.includes(key.parent)) {
          broken.push(`${name}: no such table`);
          continue;
        }
        const parentColumns = key.to.every((column) => column === null) ? primaryKeyOf(db, key.parent) : key.to;
        const enforceable = indexesOf(db, key.parent).some(
          (index) => index.unique && !index.partial && index.columns.length === parentColumns.length && parentColumns.every((column) => index.columns.includes(column)),
        );
        if (!enforceable) broken.push(`${name}(${parentColumns.join(', ')}): not a primary or unique key`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('indexes every foreign key column (as an index\'s first column), except into tables the books never delete from', () => {
    const unindexed: string[] = [];
    const excused = new Set<string>();
    for (const table of tables) {
      const indexes = indexesOf(db, table);
      for (const key of foreignKeysOf(db, table)) {
        const indexed = indexes.some((index) => key.from.every((column, i) => index.columns[i] === column));
        if (indexed) continue;
        if (key.parent in NEVER_DELETED) excused.add(key.parent);
        else unindexed.push(`${table}(${key.from.join(', ')}) -> ${key.parent}`);
      }
    }
    expect(unindexed, 'index these columns, or document their parent in NEVER_DELETED').to.deep.equal([]);
    // Every exception still excuses something: a stale one would hide a future unindexed key.
    expect([...excused].sort()).to.deep.equal(Object.keys(NEVER_DELETED).sort());
  });

  it('deletes from none of the tables whose foreign keys it leaves unindexed (the reason those are excused)', () => {
    const deleted = tablesDeletedFromInSource();
    // The scan finds what it should: the idempotency records are deleted when they expire.
    expect(deleted).to.include('idempotency_records');
    expect(Object.keys(NEVER_DELETED).filter((table) => deleted.has(table))).to.deep.equal([]);
    expect(refusesEvery(db, 'journal_entries', 'DELETE')).to.equal(true);
  });
});
