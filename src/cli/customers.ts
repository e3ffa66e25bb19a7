import type { Command } from 'commander';
import { archiveCustomer } from '../door/commands/parties.js';
import { id } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';

function archiveCommand(archived: boolean) {
  return async (options: { id: string }, context: CommandContext): Promise<void> => {
    const customer = await withBooks(context, (db) => writeAsCli(db, context, archiveCustomer, { id: options.id, archived }));
    context.out.result({ ...customer }, [
      archived
        ? `Customer ${customer.name} is archived: GET /customers lists it only with includeArchived=true, and POST /customers no longer matches it.`
        : `Customer ${customer.name} is no longer archived: GET /customers lists it again.`,
    ]);
  };
}

export function registerCustomerCommands(program: Command, io: CliIo): void {
  const group = program.command('customer').description("customers (the API creates them; archiving is the operator's)");
  group
    .command('archive')
    .description('archive a customer: GET /customers then lists it only with includeArchived=true; its invoices are untouched')
    .requiredOption('--id <id>', 'customer id', id)
    .action(action(io, archiveCommand(true)));
  group
    .command('unarchive')
    .description('bring an archived customer back into GET /customers')
    .requiredOption('--id <id>', 'customer id', id)
    .action(action(io, archiveCommand(false)));
}
