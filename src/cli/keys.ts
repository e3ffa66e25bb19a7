import type { Command } from 'commander';
import { ACCESS_FLAGS, choiceOption, collectIds, id, isoDate, name } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/keys.js'));

export function registerKeyCommands(program: Command, io: CliIo): void {
  const group = program.command('key').description('create, list and revoke API keys');
  group
    .command('create')
    .description('create an API key (the key is printed once)')
    .requiredOption('--account <id>', 'the account the key belongs to', id)
    .requiredOption('--name <name>', 'what uses the key (one key per piece of software)', name)
    .addOption(choiceOption('--access <access>', 'read only, or read and write', ACCESS_FLAGS).makeOptionMandatory())
    .option('--business <id>', 'limit the key to this business (repeat for several; default: all)', collectIds)
    .option('--expires <YYYY-MM-DD>', 'last day the key works (UTC); a past date makes an expired key', isoDate)
    .action(action(io, run('create')));
  group
    .command('list')
    .description('list the keys of an account (never the key values)')
    .requiredOption('--account <id>', 'account id', id)
    .action(action(io, run('list')));
  group
    .command('revoke')
    .description('revoke a key for every later request')
    .requiredOption('--id <id>', 'key id', id)
    .action(action(io, run('revoke')));
}
