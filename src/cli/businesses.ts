import type { Command } from 'commander';
import { createBusinessCommand } from '../door/commands/accounts.js';
import { type Basis } from '../books/businesses.js';
import { choiceOption, id, integerIn, name } from './args.js';
import { action, type CliIo, type CommandContext, withBooks, writeAsCli } from './context.js';
import { inSpecTerms } from './output.js';

/** Payment terms are stored with a 0..365 CHECK. */
export const MAX_PAYMENT_TERMS_DAYS = 365;

interface CreateOptions {
  account: string;
  name: string;
  basis: Basis;
  paymentTermsDays?: number;
}

async function create(options: CreateOptions, context: CommandContext): Promise<void> {
  const business = await withBooks(context, (db) =>
    writeAsCli(db, context, createBusinessCommand, {
      tenantId: options.account,
      name: options.name,
      basis: options.basis,
      paymentTermsDays: options.paymentTermsDays ?? null,
    }),
  );
  const terms = business.paymentTermsDays === null ? "the account's" : `${business.paymentTermsDays} days`;
  context.out.result(inSpecTerms(business), [
    `Business created: ${business.name}`,
    `id: ${business.id}`,
    `${business.basis} basis, payment terms ${terms}, standard chart of accounts`,
  ]);
}

export function registerBusinessCommands(program: Command, io: CliIo): void {
  const group = program.command('business').description('create businesses (each has its own books)');
  group
    .command('create')
    .description('create a business with the standard chart of accounts')
    .requiredOption('--account <id>', 'the account that owns it', id)
    .requiredOption('--name <name>', 'business name', name)
    .addOption(choiceOption('--basis <basis>', 'reporting basis', ['accrual', 'cash']).default('accrual'))
    .option('--payment-terms-days <n>', `default invoice terms, 0 to ${MAX_PAYMENT_TERMS_DAYS} (default: the account's)`, integerIn(0, MAX_PAYMENT_TERMS_DAYS))
    .action(action(io, create));
}
