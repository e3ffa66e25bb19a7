import type { Command } from 'commander';
import { id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/verify.js'));

export function registerVerifyCommand(program: Command, io: CliIo): void {
  program
    .command('verify')
    .description("recompute a business's stored balances from its journal lines and compare (exit 3 when any differ)")
    .requiredOption('--business <id>', 'business id', id)
    .action(action(io, run('verify')));
}
