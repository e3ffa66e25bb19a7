import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { assertName, nameKey, trimName } from '../names.js';
import { flag, int, one, run } from '../db/statements.js';
import { notFound } from '../errors.js';
import type { Currency } from '../money.js';
import { type NameListFilters, type Page, type PageRequest, pageByName } from '../store/paging.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { newId } from '../ids.js';

export interface NewCustomer {
  name: string;
  email?: string;
  phone?: string;
  addressLine1?: string;
  addressLine2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  currency?: Currency;
  paymentTermsDays?: number;
  remindersEnabled?: boolean;
}

/**
 * Creates a customer, or returns the existing non-archived one of the same name unchanged,
 * ignoring every other field sent. Names are the same when they read the same (nameKey: case,
 * compatibility forms, white space and invisible characters aside), so a look-alike finds the
 * customer it copies. A new customer's name is stored as sent, less the white space and
 * invisible characters at its ends. Either way the request is audited under the actor. The
 * caller holds the transaction.
 */
export function findOrCreateCustomer(db: Db, clock: Clock, actor: Actor, tenantId: string, input: NewCustomer): { id: string; created: boolean } {
  assertInTransaction(db, 'findOrCreateCustomer');
  assertName('name', input.name);
  const name = trimName(input.name);
  const key = nameKey(name);
  const existing = one<{ id: string }>(
    db,
    // The exact name first: two customers whose names key alike (kept apart before names were
    // keyed as fully as now) each stay reachable by their own name.
    'SELECT id FROM customers WHERE tenant_id = ? AND name_key = ? AND archived = 0 ORDER BY name = ? DESC, created_at, id LIMIT 1',
    tenantId,
    key,
    name,
  );
  if (existing) {
    // Nothing changed, but the request is still on record: every write call is audited.
    recordAudit(db, clock, actor, { tenantId, action: 'customer.match', subjectType: 'customer', subjectId: existing.id, detail: { name: input.name } });
    return { id: existing.id, created: false };
  }
  const id = newId();
  run(
    db,
    `INSERT INTO customers (id, tenant_id, name, name_key, email, phone, address_line1, address_line2, city, state, postal_code,
       currency, payment_terms_days, reminders_enabled, archived, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
    id,
    tenantId,
    name,
    key,
    input.email ?? null,
    input.phone ?? null,
    input.addressLine1 ?? null,
    input.addressLine2 ?? null,
    input.city ?? null,
    input.state ?? null,
    input.postalCode ?? null,
    input.currency ?? 'USD',
    input.paymentTermsDays ?? null,
    input.remindersEnabled ? 1 : 0,
    nowIso(clock),
  );
  recordAudit(db, clock, actor, { tenantId, action: 'customer.create', subjectType: 'customer', subjectId: id, detail: { name } });
  return { id, created: true };
}

/** A customer as the API lists it. */
export interface CustomerSummary {
  id: string;
  name: string;
  email: string | null;
  currency: Currency;
  paymentTermsDays: number | null;
}

interface CustomerRow {
  id: string;
  name: string;
  name_key: string;
  email: string | null;
  currency: Currency;
  payment_terms_days: bigint | null;
}

export const CUSTOMER_LIST = { list: 'customers', table: 'customers', columns: 'id, name, name_key, email, currency, payment_terms_days' } as const;

/** A tenant's customers by name (name_key), then id; archived ones only when asked. */
export function listCustomers(db: Db, tenantId: string, filters: NameListFilters, request: PageRequest): Page<CustomerSummary> {
  const page = pageByName<CustomerRow>(db, CUSTOMER_LIST, tenantId, filters, request);
  return { rows: page.rows.map(toCustomerSummary), nextCursor: page.nextCursor };
}

function toCustomerSummary(row: CustomerRow): CustomerSummary {
  return { id: row.id, name: row.name, email: row.email, currency: row.currency, paymentTermsDays: int(row.payment_terms_days) };
}

/**
 * The customer's postal address as lines to print: the street lines, then city, state and
 * postal code on one line ("Springfield, IL 62704"); empty when the customer has none.
 */
export function customerAddressLines(db: Db, customerId: string): string[] {
  const row = one<{ address_line1: string | null; address_line2: string | null; city: string | null; state: string | null; postal_code: string | null }>(
    db,
    'SELECT address_line1, address_line2, city, state, postal_code FROM customers WHERE id = ?',
    customerId,
  );
  if (!row) throw new Error(`customerAddressLines: no customer ${customerId}`);
  const present = (text: string | null): text is string => text !== null && text.trim() !== '';
  const region = [row.state, row.postal_code].filter(present).join(' ');
  const locality = [row.city, region].filter(present).join(', ');
  return [row.address_line1, row.address_line2, locality].filter(present);
}

/** A customer's archive state, as the admin command shows it. */
export interface CustomerArchiveState {
  id: string;
  tenantId: string;
  name: string;
  archived: boolean;
}

/**
 * Archives or unarchives a customer (`daybook customer archive|unarchive`), audited under the
 * actor even when it already was so, and returns its new state. An archived customer leaves
 * `GET /customers` (unless `includeArchived`) and is not matched by `POST /customers`; its
 * invoices are untouched. Found by id alone; an unknown id is a 404. The caller holds the
 * transaction.
 */
export function setCustomerArchived(db: Db, clock: Clock, actor: Actor, id: string, archived: boolean): CustomerArchiveState {
  assertInTransaction(db, 'setCustomerArchived');
  const before = one<{ tenant_id: string; name: string; archived: bigint }>(db, 'SELECT tenant_id, name, archived FROM customers WHERE id = ?', id);
  if (!before) throw notFound('customer');
  run(db, 'UPDATE customers SET archived = ? WHERE id = ?', archived ? 1 : 0, id);
  recordAudit(db, clock, actor, {
    tenantId: before.tenant_id,
    action: archived ? 'customer.archive' : 'customer.unarchive',
    subjectType: 'customer',
    subjectId: id,
    detail: { name: before.name, wasArchived: flag(before.archived) },
  });
  return { id, tenantId: before.tenant_id, name: before.name, archived };
}
