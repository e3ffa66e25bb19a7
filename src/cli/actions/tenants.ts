import { createAccount, updateAccount } from '../../door/commands/accounts.js';
import { type Tenant, type RateLimitSetting, type UpdateTenantInput } from '../../books/tenants.js';
import { PLANS, type Plan } from '../../books/plans.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';
import { UsageError } from '../errors.js';

export function describeRateLimit(setting: RateLimitSetting): string {
  switch (setting.mode) {
    case 'plan':
      return 'plan budgets';
    case 'off':
      return 'off';
    case 'custom':
      return `${setting.readsPerWindow} reads / ${setting.writesPerWindow} writes per 10 minutes`;
  }
}

function describeTenant(tenant: Tenant): string {
  return [
    `plan ${tenant.plan} (up to ${PLANS[tenant.plan].activeKeys} active keys)`,
    `billing ${tenant.billingState}`,
    `API access ${tenant.apiAccess ? 'on' : 'off'}`,
    `rate limit ${describeRateLimit(tenant.rateLimit)}`,
  ].join(', ');
}

function printTenant(context: CommandContext, verb: string, tenant: Tenant): void {
  context.out.result({ ...tenant }, [`Account ${verb}: ${tenant.name}`, `id: ${tenant.id}`, describeTenant(tenant)]);
}

interface CreateOptions {
  name: string;
  plan?: Plan;
}

export async function create(options: CreateOptions, context: CommandContext): Promise<void> {
  const tenant = await withBooks(
    context,
    (db) => writeAsCli(db, context, createAccount, { name: options.name, plan: options.plan ?? 'small' }),
    'create',
  );
  printTenant(context, 'created', tenant);
}

interface SetOptions {
  id: string;
  billing?: 'active' | 'past_due';
  apiAccess?: 'on' | 'off';
  plan?: Plan;
  rateLimit?: RateLimitSetting;
}

function changesFrom(options: SetOptions): UpdateTenantInput {
  const changes: UpdateTenantInput = {};
  if (options.billing !== undefined) changes.billingState = options.billing;
  if (options.apiAccess !== undefined) changes.apiAccess = options.apiAccess === 'on';
  if (options.plan !== undefined) changes.plan = options.plan;
  if (options.rateLimit !== undefined) changes.rateLimit = options.rateLimit;
  return changes;
}

export async function set(options: SetOptions, context: CommandContext): Promise<void> {
  const changes = changesFrom(options);
  if (Object.keys(changes).length === 0) {
    throw new UsageError('account set: nothing to change; give --billing, --api-access, --plan or --rate-limit');
  }
  const tenant = await withBooks(context, (db) => writeAsCli(db, context, updateAccount, { id: options.id, changes }));
  printTenant(context, 'updated', tenant);
}

