import { setRateCommand } from '../../door/commands/installation.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

interface SetOptions {
  currency: string;
  date: string;
  usdPerUnit: string;
}

export async function set(options: SetOptions, context: CommandContext): Promise<void> {
  const rate = await withBooks(
    context,
    (db) => writeAsCli(db, context, setRateCommand, { currency: options.currency, date: options.date, usdPerUnit: options.usdPerUnit }),
    'create',
  );
  context.out.result({ ...rate }, [`Rate set: 1 ${rate.currency} = ${rate.usdPerUnit} USD on ${rate.date} (${rate.source})`]);
}

