import { archiveLedgerAccount } from '../../door/commands/parties.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

function archiveCommand(archived: boolean) {
  return async (options: { id: string }, context: CommandContext): Promise<void> => {
    const account = await withBooks(context, (db) => writeAsCli(db, context, archiveLedgerAccount, { id: options.id, archived }));
    context.out.result({ ...account }, [
      archived
        ? `Ledger account ${account.code} ${account.name} is archived: GET /accounts no longer lists it and nothing new posts to it; its history stays in every report.`
        : `Ledger account ${account.code} ${account.name} is no longer archived: GET /accounts lists it again.`,
    ]);
  };
}

export const archive = archiveCommand(true);
export const unarchive = archiveCommand(false);
