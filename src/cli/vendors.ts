import type { Command } from 'commander';
import { choiceOption, id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/vendors.js'));

export function registerVendorCommands(program: Command, io: CliIo): void {
  const group = program.command('vendor').description("vendors (the API creates them with expenses and bills; these flags are the operator's)");
  group
    .command('set')
    .description('mark a vendor 1099-eligible or not (GET /vendors shows it as is1099Eligible)')
    .requiredOption('--id <id>', 'vendor id', id)
    .addOption(choiceOption('--1099 <yes|no>', 'whether the vendor is 1099-eligible', ['yes', 'no']).makeOptionMandatory())
    .action(action(io, run('set')));
  group
    .command('archive')
    .description('archive a vendor: GET /vendors then lists it only with includeArchived=true')
    .requiredOption('--id <id>', 'vendor id', id)
    .action(action(io, run('archive')));
  group
    .command('unarchive')
    .description('bring an archived vendor back into GET /vendors')
    .requiredOption('--id <id>', 'vendor id', id)
    .action(action(io, run('unarchive')));
}
