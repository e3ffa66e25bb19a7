import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { createBusinessCommand, setCardPayments } from '../door/commands/accounts.js';
import { loadConfig } from '../config.js';
import { UsageError, fileErrorReason } from './errors.js';
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

interface SetPaymentsOptions {
  business: string;
  stripeKeyFile?: string;
  webhookSecretFile?: string;
  off?: boolean;
}

const SET_PAYMENTS_HELP_AFTER = `
Connects the business to card payments through Stripe Checkout: its pay pages then offer
"Pay by card". The secret key and the webhook signing secret are read from files (never
from the command line, where they would stay in the shell's history), stored in the books,
and never printed, logged or answered back. Running it again with new files replaces them
(the rotation); the webhook address stays. Register the address it prints in the Stripe
dashboard for the events checkout.session.completed and
checkout.session.async_payment_succeeded. --off disconnects the business.

  daybook business set-payments --business ID --stripe-key-file /run/secrets/stripe-key \\
    --webhook-secret-file /run/secrets/stripe-webhook
--json: {"businessId", "connected", "webhookUrl", "replaced"}, or {"businessId", "connected": false, "wasConnected"}`;

/** One secret, read from its file; the file's content is never shown. */
function readSecretFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${path}: ${fileErrorReason(error)}`);
  }
}

async function setPayments(options: SetPaymentsOptions, context: CommandContext): Promise<void> {
  const files = options.stripeKeyFile !== undefined || options.webhookSecretFile !== undefined;
  if (options.off && files) throw new UsageError('give --off, or the two secret files, not both');
  if (!options.off && (options.stripeKeyFile === undefined || options.webhookSecretFile === undefined)) {
    throw new UsageError('give --stripe-key-file and --webhook-secret-file to connect the business, or --off to disconnect it');
  }
  const secrets = options.off
    ? null
    : { secretKey: readSecretFile(options.stripeKeyFile!, '--stripe-key-file'), webhookSecret: readSecretFile(options.webhookSecretFile!, '--webhook-secret-file') };
  const { siteUrl } = loadConfig(context.io.env);
  const result = await withBooks(context, (db) => writeAsCli(db, context, setCardPayments, { businessId: options.business, secrets }));
  if (!result.connected) {
    context.out.result({ businessId: result.businessId, connected: false, wasConnected: result.wasConnected }, [
      result.wasConnected ? `Business ${result.businessId} no longer takes card payments; its secrets are deleted from the books.` : `Business ${result.businessId} was not connected to card payments.`,
    ]);
    return;
  }
  const webhookUrl = `${siteUrl}/webhooks/stripe/${result.endpointId}`;
  context.out.result({ businessId: result.businessId, connected: true, webhookUrl, replaced: result.replaced }, [
    result.replaced
      ? `Business ${result.businessId}: the Stripe secrets are replaced; the webhook address is unchanged.`
      : `Business ${result.businessId} takes card payments through Stripe. Register this webhook address in the Stripe dashboard`,
    ...(result.replaced ? [] : ['for checkout.session.completed and checkout.session.async_payment_succeeded:']),
    webhookUrl,
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
  group
    .command('set-payments')
    .description("connect the business to card payments (Stripe Checkout), rotate its secrets, or disconnect it")
    .requiredOption('--business <id>', 'the business', id)
    .option('--stripe-key-file <file>', 'a file holding the Stripe secret key (sk_live_…, sk_test_… or rk_…)')
    .option('--webhook-secret-file <file>', "a file holding the webhook's signing secret (whsec_…)")
    .option('--off', 'disconnect the business; its secrets are deleted')
    .addHelpText('after', SET_PAYMENTS_HELP_AFTER)
    .action(action(io, setPayments));
}
