import { cardProcessorByEndpoint } from '../books/card-processors.js';
import { BadSignature, readCardEvent } from '../cards/webhook-events.js';
import { receiveCardPaymentCommand } from '../door/commands/invoices.js';
import { writeNow } from '../door/door.js';
import { ApiError } from '../errors.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import type { Services } from '../services.js';

/** A delivery is a few kilobytes; a body past this is not one. */
export const MAX_WEBHOOK_BYTES = 262_144;

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
      event = readCardEvent(raw, ctx.get('stripe-signature') || undefined, { apiUrl: services.config.stripeApiUrl, ...processor });
    } catch (error) {
      if (!(error instanceof BadSignature)) throw error;
      services.log.warn({ businessId: processor.businessId, reason: error.message }, 'card webhook refused: bad signature');
      return answer(ctx, 400, { error: 'bad signature' });
    }
    if (event.kind === 'ignored' || event.invoiceId === null) return answer(ctx, 200, { received: true, recorded: false });
    const writer = { actor: PROCESSOR_ACTOR, reach: { kind: 'processor' as const, businessId: processor.businessId } };
    try {
      const { received } = writeNow(services, writer, receiveCardPaymentCommand, {
        sessionId: event.sessionId,
        invoiceId: event.invoiceId,
        amountCents: event.amountCents,
        currency: event.currency,
        paidOn: event.paidOn,
        paymentIntentId: event.paymentIntentId,
        via: 'webhook',
      });
      return answer(ctx, 200, { received: true, recorded: received });
    } catch (error) {
      // A session naming an invoice of another business, in another currency, or stored for
      // another invoice already: nothing to store, and nothing a retry would change.
      if (!(error instanceof ApiError) || (error.code !== 'not_found' && error.code !== 'validation_failed')) throw error;
      services.log.warn({ businessId: processor.businessId, sessionId: event.sessionId, reason: error.message }, 'card webhook not recorded');
      return answer(ctx, 200, { received: true, recorded: false });
    }
  };
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
