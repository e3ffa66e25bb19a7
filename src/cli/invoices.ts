import type { Command } from 'commander';
import { relinkInvoiceCommand, voidInvoiceCommand } from '../door/commands/invoices.js';
import { payToken, payUrl } from '../books/pay-links.js';
import { loadConfig } from '../config.js';
import { id } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';

async function voidCommand(options: { id: string }, context: CommandContext): Promise<void> {
  const { before, after } = await withBooks(context, (db) =>
    writeAsCli(db, context, voidInvoiceCommand, { invoiceId: options.id }),
  );
  const how = before === 'draft' ? 'a draft: nothing had been posted' : 'its entry reversed today';
  context.out.result({ id: after.id, number: after.number, status: after.status, previousStatus: before ?? null }, [
    `Invoice ${after.number} is void (${how}).`,
  ]);
}

async function relinkCommand(options: { id: string }, context: CommandContext): Promise<void> {
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

export function registerInvoiceCommands(program: Command, io: CliIo): void {
  const group = program.command('invoice').description('invoices (the API drafts, sends and records payments)');
  group
    .command('void')
    .description(
      'void an invoice: a draft by its status, a sent one by a reversing entry; refused once paid in part or whole. The way out for a draft dated in a closed period, which can never be sent',
    )
    .requiredOption('--id <id>', 'invoice id', id)
    .action(action(io, voidCommand));
  group
    .command('relink')
    .description("give an invoice a new pay link (the old one then answers 404), e.g. when the link reached the wrong person")
    .requiredOption('--id <id>', 'invoice id', id)
    .action(action(io, relinkCommand));
}
