import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { flag, one, run } from '../db/statements.js';
import { assertVendorName, nameKey } from '../names.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { notFound } from '../errors.js';
import { newId } from '../ids.js';
import { type NameListFilters, type Page, type PageRequest, pageByName } from '../store/paging.js';

/** Who money goes to. Vendors belong to the tenant, shared by its businesses; the name is the canonical one. */
export interface Vendor {
  id: string;
  name: string;
  is1099Eligible: boolean;
  archived: boolean;
}

interface VendorRow {
  id: string;
  name: string;
  name_key: string;
  is_1099_eligible: bigint;
  archived: bigint;
}

function toVendor(row: VendorRow): Vendor {
  return { id: row.id, name: row.name, is1099Eligible: flag(row.is_1099_eligible), archived: flag(row.archived) };
}

/** The tenant's vendor with this id (archived or not), or undefined. */
export function findVendor(db: Db, tenantId: string, id: string): Vendor | undefined {
  const row = one<VendorRow>(db, 'SELECT id, name, name_key, is_1099_eligible, archived FROM vendors WHERE tenant_id = ? AND id = ?', tenantId, id);
  return row && toVendor(row);
}

/**
 * The tenant's vendor named exactly `name` (case-sensitive, archived ones included: the name
 * is unique per tenant), else a new one, audited under the actor. Since the match is exact, a
 * name holding invisible characters is refused, never matched or created: it would be a
 * second vendor that reads as the first. The caller holds the transaction, so a refused write
 * leaves no vendor behind.
 */
export function findOrCreateVendor(db: Db, clock: Clock, actor: Actor, tenantId: string, name: string): { vendor: Vendor; created: boolean } {
  assertInTransaction(db, 'findOrCreateVendor');
  assertVendorName('vendorName', name);
  const existing = one<VendorRow>(db, 'SELECT id, name, name_key, is_1099_eligible, archived FROM vendors WHERE tenant_id = ? AND name = ?', tenantId, name);
  if (existing) return { vendor: toVendor(existing), created: false };
  const id = newId();
  run(db, 'INSERT INTO vendors (id, tenant_id, name, name_key, created_at) VALUES (?, ?, ?, ?, ?)', id, tenantId, name, nameKey(name), nowIso(clock));
  recordAudit(db, clock, actor, { tenantId, action: 'vendor.create', subjectType: 'vendor', subjectId: id, detail: { name } });
  return { vendor: { id, name, is1099Eligible: false, archived: false }, created: true };
}

export const VENDOR_LIST = { list: 'vendors', table: 'vendors', columns: 'id, name, name_key, is_1099_eligible, archived' } as const;

/** A tenant's vendors by canonical name (name_key), then id; archived ones only when asked. */
export function listVendors(db: Db, tenantId: string, filters: NameListFilters, request: PageRequest): Page<Vendor> {
  const page = pageByName<VendorRow>(db, VENDOR_LIST, tenantId, filters, request);
  return { rows: page.rows.map(toVendor), nextCursor: page.nextCursor };
}

/** A vendor with the tenant it belongs to, as the admin command shows it. */
export interface VendorRecord extends Vendor {
  tenantId: string;
}

/**
 * Sets what the admin command may change on a vendor (`daybook vendor set --1099`, `vendor
 * archive|unarchive`), audited under the actor even when nothing changed, and returns the
 * vendor as it now is. Found by id alone, across tenants; an unknown id is a 404. The caller
 * holds the transaction.
 */
export function setVendorFlags(db: Db, clock: Clock, actor: Actor, id: string, change: { is1099Eligible?: boolean; archived?: boolean }): VendorRecord {
  assertInTransaction(db, 'setVendorFlags');
  const before = one<VendorRow & { tenant_id: string }>(db, 'SELECT id, tenant_id, name, name_key, is_1099_eligible, archived FROM vendors WHERE id = ?', id);
  if (!before) throw notFound('vendor');
  const previous = toVendor(before);
  if (change.is1099Eligible !== undefined) {
    run(db, 'UPDATE vendors SET is_1099_eligible = ? WHERE id = ?', change.is1099Eligible ? 1 : 0, id);
    recordAudit(db, clock, actor, {
      tenantId: before.tenant_id,
      action: 'vendor.set_1099',
      subjectType: 'vendor',
      subjectId: id,
      detail: { name: previous.name, from: previous.is1099Eligible, to: change.is1099Eligible },
    });
  }
  if (change.archived !== undefined) {
    run(db, 'UPDATE vendors SET archived = ? WHERE id = ?', change.archived ? 1 : 0, id);
    recordAudit(db, clock, actor, {
      tenantId: before.tenant_id,
      action: change.archived ? 'vendor.archive' : 'vendor.unarchive',
      subjectType: 'vendor',
      subjectId: id,
      detail: { name: previous.name, wasArchived: previous.archived },
    });
  }
  const after = one<VendorRow>(db, 'SELECT id, name, name_key, is_1099_eligible, archived FROM vendors WHERE id = ?', id)!;
  return { ...toVendor(after), tenantId: before.tenant_id };
}
