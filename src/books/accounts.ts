import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { flag, int, one, run } from '../db/statements.js';
import { ApiError, notFound } from '../errors.js';
import { type Actor, recordAudit } from './audit.js';
import { newId } from './ids.js';
import { PLANS, type Plan } from './plans.js';

/** An account is one customer of the installation (a firm); it holds businesses and keys. */
export interface Account {
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

interface AccountRow {
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

function toAccount(row: AccountRow): Account {
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

export function findAccount(db: Db, id: string): Account | undefined {
  const row = one<AccountRow>(db, 'SELECT * FROM accounts WHERE id = ?', id);
  return row && toAccount(row);
}

export function getAccount(db: Db, id: string): Account {
  const account = findAccount(db, id);
  if (!account) throw notFound('account');
  return account;
}

export interface CreateAccountInput {
  name: string;
  plan?: Plan;
  apiAccess?: boolean;
  billingState?: 'active' | 'past_due';
  paymentTermsDays?: number;
}

export function createAccount(db: Db, clock: Clock, actor: Actor, input: CreateAccountInput): Account {
  const id = newId();
  return inTransaction(db, () => {
    run(
      db,
      `INSERT INTO accounts (id, name, plan, api_access, billing_state, payment_terms_days, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      id,
      input.name,
      input.plan ?? 'small',
      input.apiAccess === false ? 0 : 1,
      input.billingState ?? 'active',
      input.paymentTermsDays ?? 30,
      nowIso(clock),
    );
    recordAudit(db, clock, actor, { accountId: id, action: 'account.create', subjectType: 'account', subjectId: id });
    return getAccount(db, id);
  });
}

export interface UpdateAccountInput {
  billingState?: 'active' | 'past_due';
  apiAccess?: boolean;
  plan?: Plan;
  rateLimit?: RateLimitSetting;
}

export function updateAccount(db: Db, clock: Clock, actor: Actor, id: string, input: UpdateAccountInput): Account {
  return inTransaction(db, () => {
    const before = getAccount(db, id);
    if (input.plan && input.plan !== before.plan) assertKeysFitPlan(db, id, input.plan);
    const rate = input.rateLimit ?? before.rateLimit;
    run(
      db,
      `UPDATE accounts SET billing_state = ?, api_access = ?, plan = ?, rate_limit_mode = ?, rate_limit_reads = ?, rate_limit_writes = ?
       WHERE id = ?`,
      input.billingState ?? before.billingState,
      (input.apiAccess ?? before.apiAccess) ? 1 : 0,
      input.plan ?? before.plan,
      rate.mode,
      rate.mode === 'custom' ? rate.readsPerWindow : null,
      rate.mode === 'custom' ? rate.writesPerWindow : null,
      id,
    );
    recordAudit(db, clock, actor, { accountId: id, action: 'account.update', subjectType: 'account', subjectId: id, detail: { ...input } });
    return getAccount(db, id);
  });
}

export function countActiveKeys(db: Db, accountId: string): number {
  const row = one<{ n: bigint }>(db, 'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL', accountId);
  return int(row?.n ?? 0n) ?? 0;
}

/** A plan change may not leave more active keys than the new plan allows. */
function assertKeysFitPlan(db: Db, accountId: string, plan: Plan): void {
  const active = countActiveKeys(db, accountId);
  if (active > PLANS[plan].activeKeys) {
    throw new ApiError(
      'conflict',
      `the account has ${active} active keys and the ${plan} plan allows ${PLANS[plan].activeKeys}; revoke keys first`,
    );
  }
}

/** The per-key budgets in force for an account, or null when the operator turned limits off. */
export function rateBudgets(account: Account): { readsPerWindow: number; writesPerWindow: number } | null {
  switch (account.rateLimit.mode) {
    case 'off':
      return null;
    case 'custom':
      return { readsPerWindow: account.rateLimit.readsPerWindow, writesPerWindow: account.rateLimit.writesPerWindow };
    case 'plan':
      return { readsPerWindow: PLANS[account.plan].readsPerWindow, writesPerWindow: PLANS[account.plan].writesPerWindow };
  }
}
