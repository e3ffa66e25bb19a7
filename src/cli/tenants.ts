import type { Command } from 'commander';
import { choiceOption, id, name, planOption, rateLimit } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/tenants.js'));

export function registerTenantCommands(program: Command, io: CliIo): void {
  const group = program.command('account').description('create and change accounts (the firms hosted here)');
  group
    .command('create')
    .description('create an account')
    .requiredOption('--name <name>', 'account name', name)
    .addOption(planOption().default('small'))
    .action(action(io, run('create')));
  group
    .command('set')
    .description('change an account (at least one change option)')
    .requiredOption('--id <id>', 'account id', id)
    .addOption(choiceOption('--billing <state>', 'billing state; past_due makes the books read only', ['active', 'past_due']))
    .addOption(choiceOption('--api-access <on|off>', 'whether the account\'s keys work at all', ['on', 'off']))
    .addOption(planOption())
    .option('--rate-limit <READS/WRITES|plan|off>', 'per-key budgets per 10-minute window, the plan\'s, or none', rateLimit)
    .action(action(io, run('set')));
}
