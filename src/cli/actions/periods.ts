import { lockPeriodCommand } from '../../door/commands/accounts.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

export async function lock(options: { business: string; through: string }, context: CommandContext): Promise<void> {
  const locked = await withBooks(context, (db) => writeAsCli(db, context, lockPeriodCommand, { businessId: options.business, through: options.through }));
  context.out.result({ ...locked }, [
    `Business ${locked.businessId}: periods locked through ${locked.lockedThrough}; postings dated on or before it are refused.`,
  ]);
}

