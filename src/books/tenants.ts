import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { flag, int, one, run } from '../db/statements.js';
import { ApiError, notFound } from '../errors.js';
import { assertName } from '../names.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { newId } from '../ids.js';
import { PLANS, type Plan } from './plans.js';

/**
 * A tenant is one firm hosted by the installation; it holds businesses and keys. The spec and
 * the CLI call it an "account"; in code "account" always means a ledger account.
 */
export interface Tenant {
  id: string;
  name: string;
  plan: Plan;
  apiAccess: boolean;
  billingState: 'active' | 'past_due';
  paymentTermsDays: number;
  rateLimit: RateLimitSetting;
  createdAt: string;
}

/** The operator's budget override: the plan's budgets, custom budgets, or no limit at all. */
export type RateLimitSetting =
  | { mode: 'plan' }
  | { mode: 'custom'; readsPerWindow: number; writesPerWindow: number }
  | { mode: 'off' };

interface TenantRow {
  id: string;
  name: string;
  plan: Plan;
  api_access: bigint;
  billing_state: 'active' | 'past_due';
  payment_terms_days: bigint;
  rate_limit_mode: 'plan' | 'custom' | 'off';
  rate_limit_reads: bigint | null;
  rate_limit_writes: bigint | null;
  created_at: string;
}

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    apiAccess: flag(row.api_access),
    billingState: row.billing_state,
    paymentTermsDays: int(row.payment_terms_days) ?? 30,
    rateLimit:
      row.rate_limit_mode === 'custom'
        ? { mode: 'custom', readsPerWindow: int(row.rate_limit_reads)!, writesPerWindow: int(row.rate_limit_writes)! }
        : { mode: row.rate_limit_mode },
    createdAt: row.created_at,
  };
}

export function findTenant(db: Db, id: string): Tenant | undefined {
  const row = one<TenantRow>(db, 'SELECT * FROM tenants WHERE id = ?', id);
  return row && toTenant(row);
}

export function getTenant(db: Db, id: string): Tenant {
  const tenant = findTenant(db, id);
  if (!tenant) throw notFound('account');
  return tenant;
}

export interface CreateTenantInput {
  name: string;
  plan?: Plan;
  apiAccess?: boolean;
  billingState?: 'active' | 'past_due';
  paymentTermsDays?: number;
}

export function createTenant(db: Db, clock: Clock, actor: Actor, input: CreateTenantInput): Tenant {
  assertName('name', input.name);
  const id = newId();
  return inTransaction(db, () => {
    run(
      db,
      `INSERT INTO tenants (id, name, plan, api_access, billing_state, payment_terms_days, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      id,
      input.name,
      input.plan ?? 'small',
      input.apiAccess === false ? 0 : 1,
      input.billingState ?? 'active',
      input.paymentTermsDays ?? 30,
      nowIso(clock),
    );
    recordAudit(db, clock, actor, { tenantId: id, action: 'account.create', subjectType: 'account', subjectId: id });
    return getTenant(db, id);
  });
}

export interface UpdateTenantInput {
  billingState?: 'active' | 'past_due';
  apiAccess?: boolean;
  plan?: Plan;
  rateLimit?: RateLimitSetting;
}

export function updateTenant(db: Db, clock: Clock, actor: Actor, id: string, input: UpdateTenantInput): Tenant {
  return inTransaction(db, () => {
    const before = getTenant(db, id);
    if (input.plan && input.plan !== before.plan) assertKeysFitPlan(db, id, input.plan);
    const rate = input.rateLimit ?? before.rateLimit;
    run(
      db,
      `UPDATE tenants SET billing_state = ?, api_access = ?, plan = ?, rate_limit_mode = ?, rate_limit_reads = ?, rate_limit_writes = ?
       WHERE id = ?`,
      input.billingState ?? before.billingState,
      (input.apiAccess ?? before.apiAccess) ? 1 : 0,
      input.plan ?? before.plan,
      rate.mode,
      rate.mode === 'custom' ? rate.readsPerWindow : null,
      rate.mode === 'custom' ? rate.writesPerWindow : null,
      id,
    );
    recordAudit(db, clock, actor, { tenantId: id, action: 'account.update', subjectType: 'account', subjectId: id, detail: { ...input } });
    return getTenant(db, id);
  });
}

export function countActiveKeys(db: Db, tenantId: string): number {
  const row = one<{ n: bigint }>(db, 'SELECT count(*) AS n FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL', tenantId);
  return int(row?.n ?? 0n) ?? 0;
}

/** A plan change may not leave more active keys than the new plan allows. */
function assertKeysFitPlan(db: Db, tenantId: string, plan: Plan): void {
  const active = countActiveKeys(db, tenantId);
  if (active > PLANS[plan].activeKeys) {
    throw new ApiError(
      'conflict',
      `the account has ${active} active keys and the ${plan} plan allows ${PLANS[plan].activeKeys}; revoke keys first`,
    );
  }
}

/** The per-key budgets in force for a tenant, or null when the operator turned limits off. */
export function rateBudgets(tenant: Tenant): { readsPerWindow: number; writesPerWindow: number } | null {
  switch (tenant.rateLimit.mode) {
    case 'off':
      return null;
    case 'custom':
      return { readsPerWindow: tenant.rateLimit.readsPerWindow, writesPerWindow: tenant.rateLimit.writesPerWindow };
    case 'plan':
      return { readsPerWindow: PLANS[tenant.plan].readsPerWindow, writesPerWindow: PLANS[tenant.plan].writesPerWindow };
  }
}
