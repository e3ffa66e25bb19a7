import { createHash } from 'node:crypto';
import type { Invoice } from '../books/invoices.js';
import type { Currency } from '../money.js';
import type Stripe from 'stripe';
import { stripeClient } from './stripe-client.js';

/**
 * A Checkout Session for what an invoice still owes: the processor's hosted page takes the
 * card, so no card number reaches Daybook.
 */

/**
 * The smallest charge the processor accepts, per currency, in its units (cents: all five
 * currencies have two decimals). Below it the pay page offers no card payment.
 */
export const MINIMUM_CHARGE_CENTS: Readonly<Record<Currency, bigint>> = { USD: 50n, EUR: 50n, GBP: 30n, CAD: 50n, MXN: 1000n };

/** The largest amount the processor takes in one charge (eight digits of cents); above it, no card payment. */
export const MAXIMUM_CHARGE_CENTS = 99_999_999n;

/** Whether a balance can be paid by card: within the processor's smallest and largest charge. */
export function cardPayable(currency: Currency, balanceCents: bigint): 'yes' | 'below_minimum' | 'above_maximum' {
  if (balanceCents < MINIMUM_CHARGE_CENTS[currency]) return 'below_minimum';
  if (balanceCents > MAXIMUM_CHARGE_CENTS) return 'above_maximum';
  return 'yes';
}

export interface CheckoutRequest {
  apiUrl: string;
  secretKey: string;
  invoice: Invoice;
  balanceCents: bigint;
  /** The pay page's address: the customer comes back to it. */
  pageUrl: string;
}

export interface CheckoutSession {
  id: string;
  url: string;
}

/** The processor refused or could not be reached; nothing was recorded. */
export class CheckoutFailed extends Error {
  override name = 'CheckoutFailed';
}

/**
 * Creates the session. The Idempotency-Key holds the invoice, the balance and a digest of every
 * parameter (the link's address among them): a double click makes one session, a later
 * balance, a new link or a changed email address another.
 */
export async function createCheckoutSession(request: CheckoutRequest): Promise<CheckoutSession> {
  const { invoice, balanceCents } = request;
  if (cardPayable(invoice.currency, balanceCents) !== 'yes') throw new Error(`createCheckoutSession: ${balanceCents} cents cannot be charged by card`);
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: 'payment',
    client_reference_id: invoice.id,
    ...(invoice.customer.email ? { customer_email: invoice.customer.email } : {}),
    line_items: [
      {
        quantity: 1,
        // At most eight digits of cents (cardPayable): exact as a number.
        price_data: { currency: invoice.currency.toLowerCase(), unit_amount: Number(balanceCents), product_data: { name: `Invoice ${invoice.number}` } },
      },
    ],
    metadata: { daybook_invoice_id: invoice.id },
    payment_intent_data: { metadata: { daybook_invoice_id: invoice.id } },
    success_url: `${request.pageUrl}/return?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: request.pageUrl,
  };
  // The processor refuses a key sent again with other parameters (a customer's email changed, a
  // new site address): a digest of them in the key makes such a request a new session instead.
  const digest = createHash('sha256').update(JSON.stringify(params)).digest('hex').slice(0, 16);
  try {
    const session = await (await stripeClient(request.apiUrl, request.secretKey)).checkout.sessions.create(params, {
      idempotencyKey: `daybook-checkout-${invoice.id}-${balanceCents}-${digest}`,
    });
    if (!session.url) throw new CheckoutFailed('the processor gave no checkout address');
    return { id: session.id, url: session.url };
  } catch (error) {
    if (error instanceof CheckoutFailed) throw error;
    throw new CheckoutFailed(error instanceof Error ? error.message : String(error));
  }
}
