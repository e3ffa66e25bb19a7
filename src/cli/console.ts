import type { Command } from 'commander';
import { SIGN_IN_DEFAULT_MINUTES, SIGN_IN_MAX_MINUTES } from '../store/sign-in-minutes.js';
import { id, integerIn } from './args.js';
import { action, type CliIo, handlersIn } from './context.js';

const run = handlersIn(() => import('./actions/console.js'));

export function registerConsoleCommands(program: Command, io: CliIo): void {
  const group = program.command('console').description("the owner's console: sign-in links and sessions");
  group
    .command('link')
    .description("print a one-time sign-in link to the account's console")
    .requiredOption('--account <id>', 'the account to sign in to', id)
    .option('--minutes <n>', `how long the link works, 1 to ${SIGN_IN_MAX_MINUTES} (default: ${SIGN_IN_DEFAULT_MINUTES})`, integerIn(1, SIGN_IN_MAX_MINUTES))
    .action(action(io, run('link')));
  group
    .command('sessions')
    .description('list the console sessions of an account, newest first')
    .requiredOption('--account <id>', 'account id', id)
    .action(action(io, run('sessions')));
  group
    .command('revoke')
    .description('end a console session (--session ID), or all of an account (--all --account ID)')
    .option('--session <id>', 'the session to end', id)
    .option('--all', 'every live session of the account')
    .option('--account <id>', 'the account (with --all)', id)
    .action(action(io, run('revoke')));
}
