import { cardProcessorByEndpoint } from '../books/card-processors.js';
import { BadSignature, readCardEvent } from '../cards/webhook-events.js';
import { findCardPayment } from '../books/card-payments.js';
import { postStoredCardPayment, storeChargeNotice, storePaidSession } from '../door/card-payments.js';
import type { Writer } from '../door/door.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import type { Services } from '../services.js';

/** A delivery is a few kilobytes; a body past this is not one. */
export const MAX_WEBHOOK_BYTES = 262_144;

/**
 * How long a delivery waits for its payment to be posted before it is answered anyway: the
 * processor gives up on an answer after some seconds, and the payment is stored already.
 */
export const POSTING_WAIT_MS = 5_000;

/** The processor's name for itself in the audit trail. */
const PROCESSOR_ACTOR = { type: 'webhook' as const, id: null, name: 'stripe' };

/**
 * POST /webhooks/stripe/{endpointId}: the card processor telling a business that a Checkout
 * Session was paid. The endpoint id names the business; the signature (its webhook secret,
 * five minutes' tolerance) proves the sender. A paid session of one of the business's invoices
 * is stored as a card payment, once; the answer is 2xx as soon as it is stored, so the
 * processor stops retrying. Events Daybook does not act on are answered 200 and do nothing.
 */
export function stripeWebhook(services: Services): AppMiddleware {
  return async (ctx) => {
    const endpointId = (ctx as AppContext & { params: { endpointId: string } }).params.endpointId;
    const processor = cardProcessorByEndpoint(services.db, endpointId);
    if (!processor) return answer(ctx, 404, { error: 'no such webhook address' });
    const raw = await rawBody(ctx);
    if (raw === null) return answer(ctx, 413, { error: `a delivery is at most ${MAX_WEBHOOK_BYTES} bytes` });
    let event;
    try {
      event = await readCardEvent(raw, ctx.get('stripe-signature') || undefined, { apiUrl: services.config.stripeApiUrl, ...processor });
    } catch (error) {
      if (!(error instanceof BadSignature)) throw error;
      services.log.warn({ businessId: processor.businessId, reason: error.message }, 'card webhook refused: bad signature');
      return answer(ctx, 400, { error: 'bad signature' });
    }
    const writer: Writer = { actor: PROCESSOR_ACTOR, reach: { kind: 'processor', businessId: processor.businessId } };
    if (event.kind === 'notice') return answer(ctx, 200, { received: true, recorded: storeChargeNotice(services, writer, processor.businessId, event) });
    if (event.kind === 'ignored' || event.invoiceId === null) return answer(ctx, 200, { received: true, recorded: false });
    const stored = storePaidSession(services, writer, { ...event, invoiceId: event.invoiceId, paid: true, settlement: null }, 'webhook');
    if (stored !== 'refused') await postWithin(services, writer, processor.businessId, event.sessionId);
    return answer(ctx, 200, { received: true, recorded: stored === 'stored' });
  };
}

/**
 * Posts the stored payment, waiting at most POSTING_WAIT_MS: past that the answer goes and the
 * posting finishes on its own (or the job posts it later).
 */
async function postWithin(services: Services, writer: Writer, businessId: string, sessionId: string): Promise<void> {
  const stored = findCardPayment(services.db, businessId, sessionId);
  if (!stored || stored.state === 'posted') return;
  const posting = postStoredCardPayment(services, writer, stored).catch((error: unknown) => services.log.error({ err: error, sessionId }, 'card payment posting failed'));
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, POSTING_WAIT_MS);
    timer.unref();
  });
  await Promise.race([posting, waited]);
  clearTimeout(timer);
}

function answer(ctx: AppContext, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.set('cache-control', 'no-store');
  ctx.body = JSON.stringify(body);
}

/** The body's bytes as received (the signature covers them exactly), or null past the limit. */
async function rawBody(ctx: AppContext): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_WEBHOOK_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
