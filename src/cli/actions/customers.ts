import { archiveCustomer } from '../../door/commands/parties.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

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

export const archive = archiveCommand(true);
export const unarchive = archiveCommand(false);
