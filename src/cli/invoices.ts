import type { Command } from 'commander';
import { id } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

const run = handlersIn(() => import('./actions/invoices.js'));

export function registerInvoiceCommands(program: Command, io: CliIo): void {
  const group = program.command('invoice').description('invoices (the API drafts, sends and records payments)');
  group
    .command('void')
    .description(
      'void an invoice: a draft by its status, a sent one by a reversing entry; refused once paid in part or whole. The way out for a draft dated in a closed period, which can never be sent',
    )
    .requiredOption('--id <id>', 'invoice id', id)
    .action(action(io, run('voidCommand')));
  group
    .command('relink')
    .description("give an invoice a new pay link (the old one then answers 404), e.g. when the link reached the wrong person")
    .requiredOption('--id <id>', 'invoice id', id)
    .action(action(io, run('relinkCommand')));
}
