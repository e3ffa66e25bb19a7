import type { Command } from 'commander';
import { lockPeriodCommand } from '../door/commands/accounts.js';
import { id, isoDate } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';

async function lock(options: { business: string; through: string }, context: CommandContext): Promise<void> {
  const locked = await withBooks(context, (db) => writeAsCli(db, context, lockPeriodCommand, { businessId: options.business, through: options.through }));
  context.out.result({ ...locked }, [
    `Business ${locked.businessId}: periods locked through ${locked.lockedThrough}; postings dated on or before it are refused.`,
  ]);
}

export function registerPeriodCommands(program: Command, io: CliIo): void {
  const group = program.command('period').description('close accounting periods');
  group
    .command('lock')
    .description('lock every period through a date (locks only move forward)')
    .requiredOption('--business <id>', 'business id', id)
    .requiredOption('--through <YYYY-MM-DD>', 'last locked date', isoDate)
    .action(action(io, lock));
}
