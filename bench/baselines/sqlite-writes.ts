/**
 * The write-path baseline: a bare better-sqlite3 loop committing, one transaction each, the
 * rows one POST /expenses writes (the journal entry and its two lines, the register row, the
 * expense, the audit row and the idempotency record), copied from a template expense that
 * Daybook recorded in the same books file, with fresh ids. Same file, same pragmas (the
 * synchronous setting is passed in), same schema and triggers; no HTTP, no validation, no
 * checks. Runs for SECONDS and prints {commits, seconds, commitsPerSecond} as one JSON line.
 *
 *   node --import tsx bench/baselines/sqlite-writes.ts FILE EXPENSE_ID IDEMPOTENCY_KEY SECONDS SYNCHRONOUS
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { openDb } from '../../src/db/connection.js';
import type { SqliteSynchronous } from '../../src/config.js';

const [dbPath, expenseId, idempotencyKey, secondsText, synchronous] = process.argv.slice(2);
if (!dbPath || !expenseId || !idempotencyKey || !secondsText || !synchronous) {
  throw new Error('usage: sqlite-writes.ts FILE EXPENSE_ID IDEMPOTENCY_KEY SECONDS SYNCHRONOUS');
}
const db = openDb(dbPath, { synchronous: synchronous as SqliteSynchronous });

type Row = Record<string, unknown>;
const expense = db.prepare('SELECT * FROM expenses WHERE id = ?').get(expenseId) as Row | undefined;
if (!expense) throw new Error(`no expense ${expenseId} in ${dbPath}`);
const entryId = expense.journal_entry_id as string;
const transactionId = expense.transaction_id as string;

/** The template's rows, table by table, in the order the write inserts them. */
const template: { table: string; rows: Row[] }[] = [
  { table: 'journal_entries', rows: db.prepare('SELECT * FROM journal_entries WHERE id = ?').all(entryId) as Row[] },
  { table: 'journal_lines', rows: db.prepare('SELECT * FROM journal_lines WHERE entry_id = ? ORDER BY line_no').all(entryId) as Row[] },
  { table: 'transactions', rows: db.prepare('SELECT * FROM transactions WHERE id = ?').all(transactionId) as Row[] },
  { table: 'expenses', rows: [expense] },
  { table: 'audit_log', rows: db.prepare('SELECT * FROM audit_log WHERE subject_id = ?').all(expenseId) as Row[] },
  { table: 'idempotency_records', rows: db.prepare('SELECT * FROM idempotency_records WHERE idempotency_key = ?').all(idempotencyKey) as Row[] },
];
for (const { table, rows } of template) if (rows.length === 0) throw new Error(`the template expense has no row in ${table}`);

/** A whole-number id is the rowid (journal lines, audit rows): SQLite gives each copy the next one. */
function withoutRowid(row: Row): Row {
  const { id, ...rest } = row;
  return typeof id === 'number' || typeof id === 'bigint' ? rest : row;
}

const inserts = template.map(({ table, rows: templateRows }) => {
  const rows = templateRows.map(withoutRowid);
  const columns = Object.keys(rows[0]!);
  return { rows, statement: db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`) };
});

/** The template's values with its ids (and the key) replaced by this copy's own, wherever they appear. */
function copyOf(row: Row, replacements: [string, string][]): unknown[] {
  return Object.values(row).map((value) => {
    if (typeof value !== 'string') return value;
    let copied = value;
    for (const [from, to] of replacements) copied = copied.replaceAll(from, to);
    return copied;
  });
}

const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const until = performance.now() + Number(secondsText) * 1000;
const started = performance.now();
let commits = 0;
while (performance.now() < until) {
  const replacements: [string, string][] = [
    [entryId, randomUUID()],
    [transactionId, randomUUID()],
    [expenseId, randomUUID()],
    [idempotencyKey, `baseline-${commits}-${randomUUID()}`],
  ];
  begin.run();
  for (const { rows, statement } of inserts) for (const row of rows) statement.run(...copyOf(row, replacements));
  commit.run();
  commits += 1;
}
const seconds = (performance.now() - started) / 1000;
db.close();
console.log(JSON.stringify({ commits, seconds, commitsPerSecond: commits / seconds }));
