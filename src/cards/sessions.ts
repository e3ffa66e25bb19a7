import type Stripe from 'stripe';
import type { Settlement } from '../books/card-payments.js';
import { stripeClient } from './stripe-client.js';

/**
 * Checkout Sessions read back from the processor: whether one is paid, and what its payment
 * settled as (the balance transaction of its charge: the gross and fee in the processor
 * account's currency). Daybook asks instead of trusting what a browser brings back.
 */

export interface SessionReport {
  sessionId: string;
  /** The invoice Daybook named in the session's metadata; null for a session made elsewhere. */
  invoiceId: string | null;
  paid: boolean;
  amountCents: bigint;
  /** As the processor writes it (lower case). */
  currency: string;
  /** The UTC day the charge was made; null until it is paid. */
  paidOn: string | null;
  paymentIntentId: string | null;
  /** Null until the processor has booked the charge to its balance. */
  settlement: Settlement | null;
}

/** The processor could not be asked just now (unreachable, too many requests, its own failure): ask again later. */
export class ProcessorUnavailable extends Error {
  override name = 'ProcessorUnavailable';
}

/**
 * The processor refused the request: the key is revoked or lacks a permission Daybook needs
 * (docs/payments.md lists them), or it knows no such session. Asking again changes nothing
 * until someone acts.
 */
export class ProcessorRefused extends Error {
  override name = 'ProcessorRefused';
}

/** What the processor could not do, however it failed. */
export type ProcessorProblem = ProcessorUnavailable | ProcessorRefused;

/** The session is not paid, or its charge is not yet booked to the processor's balance: try again later. */
export class NotSettled extends Error {
  override name = 'NotSettled';
}

export interface ProcessorAccount {
  apiUrl: string;
  secretKey: string;
}

const SETTLEMENT_EXPANSION = ['payment_intent.latest_charge.balance_transaction'];

/** One session, with its payment's settlement. */
export async function retrieveSession(account: ProcessorAccount, sessionId: string): Promise<SessionReport> {
  let session: Stripe.Checkout.Session;
  try {
    session = await (await stripeClient(account.apiUrl, account.secretKey)).checkout.sessions.retrieve(sessionId, { expand: SETTLEMENT_EXPANSION });
  } catch (error) {
    throw processorProblem(error);
  }
  return reportOf(session);
}

/**
 * The ids of the sessions completed since `since` (seconds) that are paid and name one of
 * Daybook's invoices, newest first, every page of them: what the job may have missed.
 */
export async function paidSessionIds(account: ProcessorAccount, since: number): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const session of (await stripeClient(account.apiUrl, account.secretKey)).checkout.sessions.list({ created: { gte: since }, status: 'complete', limit: 100 })) {
      if (session.payment_status === 'paid' && session.metadata?.daybook_invoice_id) ids.push(session.id);
    }
  } catch (error) {
    throw processorProblem(error);
  }
  return ids;
}

function reportOf(session: Stripe.Checkout.Session): SessionReport {
  const intent = typeof session.payment_intent === 'object' ? session.payment_intent : null;
  const charge = intent && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
  const transaction = charge && typeof charge.balance_transaction === 'object' ? charge.balance_transaction : null;
  return {
    sessionId: session.id,
    invoiceId: session.metadata?.daybook_invoice_id ?? null,
    paid: session.payment_status === 'paid',
    amountCents: BigInt(session.amount_total ?? 0),
    currency: session.currency ?? '',
    paidOn: charge ? utcDay(charge.created) : null,
    paymentIntentId: intent?.id ?? (typeof session.payment_intent === 'string' ? session.payment_intent : null),
    settlement: transaction
      ? { balanceTransactionId: transaction.id, currency: transaction.currency.toUpperCase(), grossCents: BigInt(transaction.amount), feeCents: BigInt(transaction.fee) }
      : null,
  };
}

/** The UTC day of a processor timestamp (seconds since the epoch). */
export function utcDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/** Errors the SDK reports for a request that may succeed when asked again. */
const TRANSIENT = new Set(['StripeConnectionError', 'StripeAPIError', 'StripeRateLimitError']);

/** The SDK's error as one of ours: a failure worth retrying, or a refusal someone must act on. */
function processorProblem(error: unknown): ProcessorProblem {
  const type = (error as { type?: unknown }).type;
  const message = error instanceof Error ? error.message : String(error);
  return typeof type === 'string' && !TRANSIENT.has(type) ? new ProcessorRefused(message) : new ProcessorUnavailable(message);
}
