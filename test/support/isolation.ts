import type { CreatedKey } from '../../src/books/keys.js';
import type { Db } from '../../src/db/connection.js';
import type { TestApp, TestResponse } from './app.js';
import { UUID } from './register.js';

/**
 * Helpers for test/api/tenant-isolation.test.ts: what the books hold (table by table, and who
 * owns each id), and the audit rows a request left.
 */

/** Every table of the books file (sqlite_master), by name. */
export function tableNames(db: Db): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
    (row) => row.name,
  );
}

/** A JSON text of any stored value: the books connection hands back bigints, and a BLOB is a Buffer. */
function storedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export interface TableState {
  rows: number;
  /** Every row, in a fixed order, as one text: equal texts mean equal contents. */
  contents: string;
}

/** Each table's row count and contents. */
export function booksSnapshot(db: Db): Record<string, TableState> {
  const snapshot: Record<string, TableState> = {};
  for (const table of tableNames(db)) {
    const rows = db.prepare(`SELECT * FROM "${table}"`).all().map(storedJson).sort();
    snapshot[table] = { rows: rows.length, contents: rows.join('\n') };
  }
  return snapshot;
}

/** Each table's row count alone (for messages that name the table that moved). */
export function rowCounts(snapshot: Record<string, TableState>): Record<string, number> {
  return Object.fromEntries(Object.entries(snapshot).map(([table, state]) => [table, state.rows]));
}

/** Where a stored value sits: table, column and the row's position in `SELECT *`. */
export interface StoredPlace {
  table: string;
  column: string;
  row: number;
}

/** Every stored value (each column of each row of each table, read as text) that contains `needle`. */
export function storedPlacesContaining(db: Db, needle: string): StoredPlace[] {
  const places: StoredPlace[] = [];
  for (const table of tableNames(db)) {
    const rows = db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[];
    rows.forEach((row, index) => {
      for (const [column, value] of Object.entries(row)) {
        if (value === null || value === undefined) continue;
        const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
        if (text.includes(needle)) places.push({ table, column, row: index });
      }
    });
  }
  return places;
}

/** Who owns a stored id: its account, and its business when the row belongs to one. */
export interface Owner {
  table: string;
  tenantId: string;
  businessId: string | null;
}

/**
 * Every id the books hold in a table with an `id` column and a tenant_id or business_id column
 * (and the tenants and businesses themselves), with its owner.
 */
export function idOwners(db: Db): Map<string, Owner> {
  const tenantOfBusiness = new Map(
    (db.prepare('SELECT id, tenant_id FROM businesses').all() as { id: string; tenant_id: string }[]).map((row) => [row.id, row.tenant_id]),
  );
  const owners = new Map<string, Owner>();
  for (const { id } of db.prepare('SELECT id FROM tenants').all() as { id: string }[]) owners.set(id, { table: 'tenants', tenantId: id, businessId: null });
  for (const [id, tenantId] of tenantOfBusiness) owners.set(id, { table: 'businesses', tenantId, businessId: id });
  for (const table of tableNames(db)) {
    if (table === 'tenants' || table === 'businesses') continue;
    const columns = (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((column) => column.name);
    if (!columns.includes('id')) continue;
    if (columns.includes('business_id')) {
      for (const row of db.prepare(`SELECT id, business_id FROM "${table}" WHERE business_id IS NOT NULL`).all() as { id: string; business_id: string }[]) {
        owners.set(String(row.id), { table, tenantId: tenantOfBusiness.get(row.business_id) ?? '(no such business)', businessId: row.business_id });
      }
    } else if (columns.includes('tenant_id')) {
      for (const row of db.prepare(`SELECT id, tenant_id FROM "${table}"`).all() as { id: string; tenant_id: string }[]) {
        owners.set(String(row.id), { table, tenantId: row.tenant_id, businessId: null });
      }
    } else if (columns.includes('invoice_id')) {
      // Payments belong to their invoice's business.
      const rows = db.prepare(`SELECT t.id, i.business_id FROM "${table}" t JOIN invoices i ON i.id = t.invoice_id`).all() as { id: string; business_id: string }[];
      for (const row of rows) owners.set(String(row.id), { table, tenantId: tenantOfBusiness.get(row.business_id)!, businessId: row.business_id });
    }
  }
  return owners;
}

/** A value the other side must never see, and what it is (for the failure message). */
export interface Secret {
  value: string;
  what: string;
}

/** The secrets that occur in `text`: UUIDs compared case-insensitively, every other value exactly. */
export function secretsIn(text: string, secrets: readonly Secret[]): Secret[] {
  const lower = text.toLowerCase();
  return secrets.filter((secret) => (UUID.test(secret.value.toLowerCase()) ? lower.includes(secret.value.toLowerCase()) : text.includes(secret.value)));
}

/** One audit row as the write door appends it. */
export interface AuditRow {
  tenant_id: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string;
  action: string;
  subject_id: string | null;
}

export function lastAuditId(db: Db): number {
  const row = db.prepare('SELECT max(id) AS id FROM audit_log').get() as { id: bigint | number | null };
  return Number(row.id ?? 0);
}

export function auditRowsAfter(db: Db, mark: number): AuditRow[] {
  return db
    .prepare('SELECT tenant_id, actor_type, actor_id, actor_name, action, subject_id FROM audit_log WHERE id > ? ORDER BY id')
    .all(mark) as AuditRow[];
}

/** A write a legitimate key made, with the audit rows it left behind. */
export interface AuditedWrite {
  what: string;
  key: CreatedKey;
  operationId: string;
  status: number;
  /** The action and subject the row must carry. */
  expected: { action: string; subjectId: string };
  rows: AuditRow[];
}

/**
 * Sends one write with `key` and records the audit rows it appended (the requests of a set-up
 * run one at a time, so every row after the mark is this write's). `subjectOf` names the row's
 * subject from the answer.
 */
export async function auditedWrite(
  app: TestApp,
  log: AuditedWrite[],
  write: {
    what: string;
    key: CreatedKey;
    operationId: string;
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
    action: string;
    subjectOf: (res: TestResponse) => string;
  },
): Promise<TestResponse> {
  const mark = lastAuditId(app.db);
  const res = await app.request('POST', write.path, {
    key: write.key.key,
    ...(write.body === undefined ? {} : { body: write.body }),
    ...(write.headers ? { headers: write.headers } : {}),
  });
  if (res.status < 200 || res.status > 299) throw new Error(`set-up write "${write.what}" answered ${res.status}: ${res.text.slice(0, 300)}`);
  log.push({
    what: write.what,
    key: write.key,
    operationId: write.operationId,
    status: res.status,
    expected: { action: write.action, subjectId: write.subjectOf(res) },
    rows: auditRowsAfter(app.db, mark),
  });
  return res;
}
