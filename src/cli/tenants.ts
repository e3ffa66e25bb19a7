import type { Command } from 'commander';
import { createAccount, updateAccount } from '../door/commands/accounts.js';
import { type Tenant, type RateLimitSetting, type UpdateTenantInput } from '../books/tenants.js';
import { PLANS, type Plan } from '../books/plans.js';
import { choiceOption, id, name, planOption, rateLimit } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';
import { UsageError } from './errors.js';

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

async function create(options: CreateOptions, context: CommandContext): Promise<void> {
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

async function set(options: SetOptions, context: CommandContext): Promise<void> {
  const changes = changesFrom(options);
  if (Object.keys(changes).length === 0) {
    throw new UsageError('account set: nothing to change; give --billing, --api-access, --plan or --rate-limit');
  }
  const tenant = await withBooks(context, (db) => writeAsCli(db, context, updateAccount, { id: options.id, changes }));
  printTenant(context, 'updated', tenant);
}

export function registerTenantCommands(program: Command, io: CliIo): void {
  const group = program.command('account').description('create and change accounts (the firms hosted here)');
  group
    .command('create')
    .description('create an account')
    .requiredOption('--name <name>', 'account name', name)
    .addOption(planOption().default('small'))
    .action(action(io, create));
  group
    .command('set')
    .description('change an account (at least one change option)')
    .requiredOption('--id <id>', 'account id', id)
    .addOption(choiceOption('--billing <state>', 'billing state; past_due makes the books read only', ['active', 'past_due']))
    .addOption(choiceOption('--api-access <on|off>', 'whether the account\'s keys work at all', ['on', 'off']))
    .addOption(planOption())
    .option('--rate-limit <READS/WRITES|plan|off>', 'per-key budgets per 10-minute window, the plan\'s, or none', rateLimit)
    .action(action(io, set));
}
