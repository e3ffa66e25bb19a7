import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { all, int, one, run } from '../db/statements.js';
import { notFound } from '../errors.js';
import { assertName } from '../names.js';
import { getTenant } from './tenants.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { createStandardChart } from './chart.js';
import { newId } from '../ids.js';

export type Basis = 'accrual' | 'cash';

export interface Business {
  id: string;
  tenantId: string;
  name: string;
  basis: Basis;
  paymentTermsDays: number | null;
  createdAt: string;
}

interface BusinessRow {
  id: string;
  tenant_id: string;
  name: string;
  basis: Basis;
  payment_terms_days: bigint | null;
  created_at: string;
}

function toBusiness(row: BusinessRow): Business {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    basis: row.basis,
    paymentTermsDays: int(row.payment_terms_days),
    createdAt: row.created_at,
  };
}

export function findBusiness(db: Db, id: string): Business | undefined {
  const row = one<BusinessRow>(db, 'SELECT * FROM businesses WHERE id = ?', id);
  return row && toBusiness(row);
}

export function getBusiness(db: Db, id: string): Business {
  const business = findBusiness(db, id);
  if (!business) throw notFound('business');
  return business;
}

export interface CreateBusinessInput {
  tenantId: string;
  name: string;
  basis?: Basis;
  paymentTermsDays?: number | null;
}

/** Creates a business with the standard chart of accounts, in one transaction. */
export function createBusiness(db: Db, clock: Clock, actor: Actor, input: CreateBusinessInput): Business {
  assertName('name', input.name);
  const id = newId();
  return inTransaction(db, () => {
    getTenant(db, input.tenantId);
    run(
      db,
      // Invoice numbers start at 1 (INV-0001); the column's older default was 1001.
      'INSERT INTO businesses (id, tenant_id, name, basis, payment_terms_days, next_invoice_number, created_at) VALUES (?, ?, ?, ?, ?, 1, ?)',
      id,
      input.tenantId,
      input.name,
      input.basis ?? 'accrual',
      input.paymentTermsDays ?? null,
      nowIso(clock),
    );
    createStandardChart(db, clock, id);
    recordAudit(db, clock, actor, {
      tenantId: input.tenantId,
      businessId: id,
      action: 'business.create',
      subjectType: 'business',
      subjectId: id,
      detail: { name: input.name, basis: input.basis ?? 'accrual' },
    });
    return getBusiness(db, id);
  });
}

/** The tenant's businesses, or only `grantedIds` when the caller is limited to some. */
export function listBusinesses(db: Db, tenantId: string, grantedIds: readonly string[] | null = null): Business[] {
  const rows = all<BusinessRow>(db, 'SELECT * FROM businesses WHERE tenant_id = ? ORDER BY name, id', tenantId);
  const granted = grantedIds && new Set(grantedIds);
  return rows.filter((row) => !granted || granted.has(row.id)).map(toBusiness);
}
