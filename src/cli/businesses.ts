import type { Command } from 'commander';
import { choiceOption, id, integerIn, name } from './args.js';
import { action, handlersIn, type CliIo } from './context.js';

/** Payment terms are stored with a 0..365 CHECK. */
export const MAX_PAYMENT_TERMS_DAYS = 365;

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

const run = handlersIn(() => import('./actions/businesses.js'));

export function registerBusinessCommands(program: Command, io: CliIo): void {
  const group = program.command('business').description('create businesses (each has its own books)');
  group
    .command('create')
    .description('create a business with the standard chart of accounts')
    .requiredOption('--account <id>', 'the account that owns it', id)
    .requiredOption('--name <name>', 'business name', name)
    .addOption(choiceOption('--basis <basis>', 'reporting basis', ['accrual', 'cash']).default('accrual'))
    .option('--payment-terms-days <n>', `default invoice terms, 0 to ${MAX_PAYMENT_TERMS_DAYS} (default: the account's)`, integerIn(0, MAX_PAYMENT_TERMS_DAYS))
    .action(action(io, run('create')));
  group
    .command('set-payments')
    .description("connect the business to card payments (Stripe Checkout), rotate its secrets, or disconnect it")
    .requiredOption('--business <id>', 'the business', id)
    .option('--stripe-key-file <file>', 'a file holding the Stripe secret key (sk_live_…, sk_test_… or rk_…)')
    .option('--webhook-secret-file <file>', "a file holding the webhook's signing secret (whsec_…)")
    .option('--off', 'disconnect the business; its secrets are deleted')
    .addHelpText('after', SET_PAYMENTS_HELP_AFTER)
    .action(action(io, run('setPayments')));
}
