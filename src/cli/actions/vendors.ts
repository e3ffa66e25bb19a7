import { setVendorFlagsCommand } from '../../door/commands/parties.js';
import { type VendorRecord } from '../../books/vendors.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

function show(vendor: VendorRecord, line: string, context: CommandContext): void {
  context.out.result({ id: vendor.id, tenantId: vendor.tenantId, name: vendor.name, is1099Eligible: vendor.is1099Eligible, archived: vendor.archived }, [line]);
}

export async function set(options: { id: string; '1099': 'yes' | 'no' }, context: CommandContext): Promise<void> {
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

export const archive = archiveCommand(true);
export const unarchive = archiveCommand(false);
