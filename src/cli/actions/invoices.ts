import { relinkInvoiceCommand, voidInvoiceCommand } from '../../door/commands/invoices.js';
import { payToken, payUrl } from '../../books/pay-links.js';
import { loadConfig } from '../../config.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';

export async function voidCommand(options: { id: string }, context: CommandContext): Promise<void> {
  const { before, after } = await withBooks(context, (db) =>
    writeAsCli(db, context, voidInvoiceCommand, { invoiceId: options.id }),
  );
  const how = before === 'draft' ? 'a draft: nothing had been posted' : 'its entry reversed today';
  context.out.result({ id: after.id, number: after.number, status: after.status, previousStatus: before ?? null }, [
    `Invoice ${after.number} is void (${how}).`,
  ]);
}

export async function relinkCommand(options: { id: string }, context: CommandContext): Promise<void> {
  const { siteUrl } = loadConfig(context.io.env);
  const relinked = await withBooks(context, (db) =>
    {
      const invoice = writeAsCli(db, context, relinkInvoiceCommand, { invoiceId: options.id });
      return { id: invoice.id, number: invoice.number, payUrl: payUrl(siteUrl, payToken(db, invoice.id)) };
    },
  );
  context.out.result(relinked, [
    `Invoice ${relinked.number} has a new pay link; the old one now leads nowhere. Send the customer the new one:`,
    relinked.payUrl,
  ]);
}

