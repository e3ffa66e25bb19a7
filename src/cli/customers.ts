import type { Command } from 'commander';
import { id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/customers.js'));

export function registerCustomerCommands(program: Command, io: CliIo): void {
  const group = program.command('customer').description("customers (the API creates them; archiving is the operator's)");
  group
    .command('archive')
    .description('archive a customer: GET /customers then lists it only with includeArchived=true; its invoices are untouched')
    .requiredOption('--id <id>', 'customer id', id)
    .action(action(io, run('archive')));
  group
    .command('unarchive')
    .description('bring an archived customer back into GET /customers')
    .requiredOption('--id <id>', 'customer id', id)
    .action(action(io, run('unarchive')));
}
