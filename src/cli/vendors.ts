import type { Command } from 'commander';
import { setVendorFlagsCommand } from '../door/commands/parties.js';
import { type VendorRecord } from '../books/vendors.js';
import { choiceOption, id } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';

function show(vendor: VendorRecord, line: string, context: CommandContext): void {
  context.out.result({ id: vendor.id, tenantId: vendor.tenantId, name: vendor.name, is1099Eligible: vendor.is1099Eligible, archived: vendor.archived }, [line]);
}

async function set(options: { id: string; '1099': 'yes' | 'no' }, context: CommandContext): Promise<void> {
  const vendor = await withBooks(context, (db) =>
    writeAsCli(db, context, setVendorFlagsCommand, { id: options.id, change: { is1099Eligible: options['1099'] === 'yes' } }),
  );
  show(vendor, `Vendor ${vendor.name} is ${vendor.is1099Eligible ? 'now' : 'no longer'} 1099-eligible.`, context);
}

function archiveCommand(archived: boolean) {
  return async (options: { id: string }, context: CommandContext): Promise<void> => {
    const vendor = await withBooks(context, (db) => writeAsCli(db, context, setVendorFlagsCommand, { id: options.id, change: { archived } }));
    show(
      vendor,
      archived
        ? `Vendor ${vendor.name} is archived: GET /vendors lists it only with includeArchived=true.`
        : `Vendor ${vendor.name} is no longer archived: GET /vendors lists it again.`,
      context,
    );
  };
}

export function registerVendorCommands(program: Command, io: CliIo): void {
  const group = program.command('vendor').description("vendors (the API creates them with expenses and bills; these flags are the operator's)");
  group
    .command('set')
    .description('mark a vendor 1099-eligible or not (GET /vendors shows it as is1099Eligible)')
    .requiredOption('--id <id>', 'vendor id', id)
    .addOption(choiceOption('--1099 <yes|no>', 'whether the vendor is 1099-eligible', ['yes', 'no']).makeOptionMandatory())
    .action(action(io, set));
  group
    .command('archive')
    .description('archive a vendor: GET /vendors then lists it only with includeArchived=true')
    .requiredOption('--id <id>', 'vendor id', id)
    .action(action(io, archiveCommand(true)));
  group
    .command('unarchive')
    .description('bring an archived vendor back into GET /vendors')
    .requiredOption('--id <id>', 'vendor id', id)
    .action(action(io, archiveCommand(false)));
}
