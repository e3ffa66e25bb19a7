import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { assertName } from '../names.js';
import { one, run } from '../db/statements.js';
import type { Currency } from '../money.js';
import { type Actor, recordAudit } from './audit.js';
import { newId } from './ids.js';

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

/** Names match case-insensitively (Unicode-aware), so the comparison key is stored beside the name. */
export function customerNameKey(name: string): string {
  return name.normalize('NFC').toLocaleLowerCase('en-US');
}

/**
 * Creates a customer, or returns the existing non-archived one of the same name (compared
 * case-insensitively) unchanged, ignoring every other field sent. Either way the request is
 * audited under the actor. The caller holds the transaction.
 */
export function findOrCreateCustomer(db: Db, clock: Clock, actor: Actor, tenantId: string, input: NewCustomer): { id: string; created: boolean } {
  assertInTransaction(db, 'findOrCreateCustomer');
  assertName('name', input.name);
  const nameKey = customerNameKey(input.name);
  const existing = one<{ id: string }>(
    db,
    'SELECT id FROM customers WHERE tenant_id = ? AND name_key = ? AND archived = 0 ORDER BY created_at, id LIMIT 1',
    tenantId,
    nameKey,
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
    input.name,
    nameKey,
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
  recordAudit(db, clock, actor, { tenantId, action: 'customer.create', subjectType: 'customer', subjectId: id, detail: { name: input.name } });
  return { id, created: true };
}
