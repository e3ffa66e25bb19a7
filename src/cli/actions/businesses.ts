import { readFileSync } from 'node:fs';
import { createBusinessCommand, setCardPayments } from '../../door/commands/accounts.js';
import { loadConfig } from '../../config.js';
import { UsageError, fileErrorReason } from '../errors.js';
import { type Basis } from '../../books/businesses.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';
import { inSpecTerms } from '../output.js';

interface CreateOptions {
  account: string;
  name: string;
  basis: Basis;
  paymentTermsDays?: number;
}

export async function create(options: CreateOptions, context: CommandContext): Promise<void> {
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

/** One secret, read from its file; the file's content is never shown. */
function readSecretFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${path}: ${fileErrorReason(error)}`);
  }
}

export async function setPayments(options: SetPaymentsOptions, context: CommandContext): Promise<void> {
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

