import type Stripe from 'stripe';
import { utcDay } from './sessions.js';
import { stripeClient } from './stripe-client.js';

/**
 * What a processor's webhook delivery says, once its signature is checked: a Checkout Session
 * that is paid, or an event Daybook does not act on.
 */

/** Seconds a signed delivery stays acceptable: the processor's own default, against replays. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface PaidSessionEvent {
  kind: 'paid';
  eventId: string;
  sessionId: string;
  /** The invoice Daybook named in the session's metadata; null when a session was made elsewhere. */
  invoiceId: string | null;
  amountCents: bigint;
  currency: string;
  /** The UTC day of the event, when the processor took the money. */
  paidOn: string;
  paymentIntentId: string | null;
}

/** A refund or dispute of a charge: kept for Today, never posted. */
export interface ChargeNoticeEvent {
  kind: 'notice';
  eventId: string;
  notice: 'refund' | 'dispute';
  paymentIntentId: string | null;
  amountCents: bigint;
  currency: string;
  reportedOn: string;
}

export type CardEvent = PaidSessionEvent | ChargeNoticeEvent | { kind: 'ignored'; eventId: string; type: string };

/** The signature is missing, malformed, made with another secret, or too old. */
export class BadSignature extends Error {
  override name = 'BadSignature';
}

/** Checks the signature of `raw` (the bytes as received) and reads the event. */
export async function readCardEvent(raw: Buffer, signature: string | undefined, secrets: { apiUrl: string; secretKey: string; webhookSecret: string }): Promise<CardEvent> {
  const client = await stripeClient(secrets.apiUrl, secrets.secretKey);
  let event: Stripe.Event;
  try {
    event = client.webhooks.constructEvent(raw, signature ?? '', secrets.webhookSecret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (error) {
    throw new BadSignature(error instanceof Error ? error.message : String(error));
  }
  const notice = noticeOf(event);
  if (notice) return notice;
  const paid =
    (event.type === 'checkout.session.completed' && event.data.object.payment_status === 'paid') || event.type === 'checkout.session.async_payment_succeeded';
  if (!paid) return { kind: 'ignored', eventId: event.id, type: event.type };
  const session = event.data.object as Stripe.Checkout.Session;
  const intent = session.payment_intent;
  return {
    kind: 'paid',
    eventId: event.id,
    sessionId: session.id,
    invoiceId: session.metadata?.daybook_invoice_id ?? null,
    amountCents: BigInt(session.amount_total ?? 0),
    currency: session.currency ?? '',
    paidOn: utcDay(event.created),
    paymentIntentId: typeof intent === 'string' ? intent : (intent?.id ?? null),
  };
}

/** A refund or dispute, read only when the processor's object has the fields one has. */
function noticeOf(event: Stripe.Event): ChargeNoticeEvent | null {
  const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : (value?.id ?? null));
  const common = { kind: 'notice' as const, eventId: event.id, reportedOn: utcDay(event.created) };
  if (event.type === 'charge.refunded') {
    const charge = event.data.object;
    if (typeof charge.amount_refunded !== 'number' || typeof charge.currency !== 'string') return null;
    return { ...common, notice: 'refund', paymentIntentId: idOf(charge.payment_intent), amountCents: BigInt(charge.amount_refunded), currency: charge.currency };
  }
  if (event.type === 'charge.dispute.created') {
    const dispute = event.data.object;
    if (typeof dispute.amount !== 'number' || typeof dispute.currency !== 'string') return null;
    return { ...common, notice: 'dispute', paymentIntentId: idOf(dispute.payment_intent), amountCents: BigInt(dispute.amount), currency: dispute.currency };
  }
  return null;
}
