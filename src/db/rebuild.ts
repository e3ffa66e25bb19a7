import type { Knex } from 'knex';
import type { Db } from './connection.js';

/**
 * Changes a table in a way ALTER TABLE cannot (widen a CHECK list, drop a constraint) by the
 * procedure SQLite documents in "Making Other Kinds Of Table Schema Changes"
 * (https://www.sqlite.org/lang_altertable.html): foreign keys off outside the transaction;
 * in one transaction create new_X, copy, drop X, rename new_X to X, recreate X's indexes and
 * triggers, PRAGMA foreign_key_check; commit; foreign keys back on.
 *
 * Why not the obvious way: with foreign keys on, DROP TABLE X deletes X's rows first and
 * fails ("FOREIGN KEY constraint failed") when other tables reference them, and
 * PRAGMA foreign_keys is a no-op inside a transaction, so it cannot be switched off from
 * within knex's migration transaction. So the helper runs outside knex's transaction and
 * opens its own.
 *
 * Which connection: a migration exports `config = { transaction: false }` and calls
 * `rebuildTableInMigration(knex, rebuild)`. knex's SQLite pool holds exactly one
 * better-sqlite3 connection, so acquiring it from the pool gives the very handle knex runs
 * the migration on (pragmas already applied); the rebuild then runs synchronously on it,
 * with better-sqlite3's own transaction, and hands the connection back. Going through
 * knex.raw instead would work too (one connection), but would need hand-written
 * BEGIN/ROLLBACK around awaits; a synchronous better-sqlite3 transaction cannot be left
 * half-open.
 *
 * The trap the procedure meets here: with legacy_alter_table OFF (the default), the
 * ALTER TABLE new_X RENAME TO X step re-parses every trigger and view in the schema, and a
 * trigger of another table that mentions the dropped X fails it ("error in trigger
 * journal_lines_closed_entry: no such table: main.journal_entries"). Rather than switch to
 * the legacy rename, the helper drops those triggers and views before dropping X and
 * recreates them, unchanged, after the rename.
 *
 * knex records a migration run outside its transaction only after it returns, so a crash in
 * between reruns the rebuild at next start: a rebuild must give the same table when run on
 * its own result.
 */

export interface TableRebuild {
  /** The table to rebuild. */
  table: string;
  /** The CREATE TABLE statement of the new shape under the name given (new_<table>). */
  create: (name: string) => string;
  /**
   * The statement that fills the new table from the old. By default every column the two
   * tables share is copied, and the row counts must match.
   */
  copy?: (from: string, to: string) => string;
  /** Columns of the old table the new one leaves out on purpose; any other loss is refused. */
  droppedColumns?: readonly string[];
}

interface SchemaObject {
  type: string;
  name: string;
  sql: string;
}

/** Runs `rebuild` on the single connection of a knex SQLite pool (see the comment above). */
export async function rebuildTableInMigration(knex: Knex, rebuild: TableRebuild): Promise<void> {
  if (knex.isTransaction) {
    // The pool's only connection is held by that transaction: acquiring it would wait forever.
    throw new Error(`rebuilding ${rebuild.table} must run outside knex's transaction: export config = { transaction: false } from the migration`);
  }
  const db = (await knex.client.acquireConnection()) as Db;
  try {
    rebuildTable(db, rebuild);
  } finally {
    await knex.client.releaseConnection(db);
  }
}

/** Rebuilds a table on a better-sqlite3 connection that is not inside a transaction. */
export function rebuildTable(db: Db, rebuild: TableRebuild): void {
  if (db.inTransaction) {
    throw new Error(`rebuilding ${rebuild.table} must run outside a transaction: PRAGMA foreign_keys cannot change inside one`);
  }
  const foreignKeysWereOn = Number(db.pragma('foreign_keys', { simple: true })) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => rebuildInTransaction(db, rebuild)).immediate();
  } finally {
    if (foreignKeysWereOn) db.pragma('foreign_keys = ON');
  }
}

function rebuildInTransaction(db: Db, rebuild: TableRebuild): void {
  const { table } = rebuild;
  const scratch = `new_${table}`;
  if (!tableExists(db, table)) throw new Error(`cannot rebuild ${table}: no such table`);
  if (tableExists(db, scratch)) throw new Error(`cannot rebuild ${table}: ${scratch} already exists`);

  const ownObjects = indexesAndTriggersOf(db, table);
  const dependents = triggersAndViewsMentioning(db, table);
  for (const object of dependents) db.exec(`DROP ${object.type.toUpperCase()} "${object.name}"`);

  db.exec(rebuild.create(scratch));
  if (!tableExists(db, scratch)) throw new Error(`rebuild of ${table}: create() did not create ${scratch}`);
  assertNoColumnLost(db, table, scratch, rebuild.droppedColumns ?? []);
  copyRows(db, table, scratch, rebuild.copy);

  db.exec(`DROP TABLE "${table}"`);
  db.exec(`ALTER TABLE "${scratch}" RENAME TO "${table}"`);
  for (const object of [...ownObjects, ...dependents]) db.exec(object.sql);

  assertForeignKeysHold(db, table);
}

function tableExists(db: Db, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** Indexes and triggers dropped with the table. Automatic indexes (sql NULL) come back with it. */
function indexesAndTriggersOf(db: Db, table: string): SchemaObject[] {
  return db
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index','trigger') AND sql IS NOT NULL ORDER BY rowid")
    .all(table) as SchemaObject[];
}

/**
 * Triggers of other tables, and views, whose text names the table. Matching the text may
 * catch one that merely mentions the name; dropping and recreating it unchanged is harmless.
 * Every other trigger of a table that has such a trigger comes too, all in the order they were
 * created: SQLite fires a table's triggers by their order in the schema, so recreating only
 * some of them would change which refusal a write meets first.
 */
function triggersAndViewsMentioning(db: Db, table: string): SchemaObject[] {
  const mentions = new RegExp(`\\b${table}\\b`, 'i');
  const candidates = db
    .prepare("SELECT type, name, tbl_name AS owner, sql FROM sqlite_master WHERE type IN ('trigger','view') AND tbl_name <> ? AND sql IS NOT NULL ORDER BY rowid")
    .all(table) as (SchemaObject & { owner: string })[];
  const owners = new Set(candidates.filter((object) => object.type === 'trigger' && mentions.test(object.sql)).map((object) => object.owner));
  return candidates
    .filter((object) => mentions.test(object.sql) || (object.type === 'trigger' && owners.has(object.owner)))
    .map(({ type, name, sql }) => ({ type, name, sql }));
}

function columnsOf(db: Db, table: string): string[] {
  return (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((column) => column.name);
}

function assertNoColumnLost(db: Db, table: string, scratch: string, dropped: readonly string[]): void {
  const kept = new Set(columnsOf(db, scratch));
  const lost = columnsOf(db, table).filter((column) => !kept.has(column) && !dropped.includes(column));
  if (lost.length > 0) throw new Error(`rebuild of ${table} would lose columns ${lost.join(', ')}; list them in droppedColumns if that is meant`);
}

function copyRows(db: Db, table: string, scratch: string, copy: TableRebuild['copy']): void {
  if (copy) {
    db.exec(copy(table, scratch));
    return;
  }
  const kept = new Set(columnsOf(db, scratch));
  const shared = columnsOf(db, table)
    .filter((column) => kept.has(column))
    .map((column) => `"${column}"`)
    .join(', ');
  db.exec(`INSERT INTO "${scratch}" (${shared}) SELECT ${shared} FROM "${table}"`);
  const before = rowCount(db, table);
  const after = rowCount(db, scratch);
  if (before !== after) throw new Error(`rebuild of ${table} copied ${after} of ${before} rows`);
}

function rowCount(db: Db, table: string): number {
  return Number((db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number | bigint }).n);
}

/** Foreign keys were off while the table was replaced, so every reference is checked before commit. */
function assertForeignKeysHold(db: Db, table: string): void {
  const broken = db.prepare('PRAGMA foreign_key_check').all() as { table: string; rowid: number | bigint | null; parent: string }[];
  if (broken.length === 0) return;
  const sample = broken
    .slice(0, 5)
    .map((row) => `${row.table} row ${String(row.rowid)} -> ${row.parent}`)
    .join('; ');
  throw new Error(`rebuild of ${table} would break ${broken.length} foreign key reference(s): ${sample}`);
}
