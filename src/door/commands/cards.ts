import { type CardNotice, cardPaymentPostingDay, type PaidSession, postCardPayment, receiveCardPayment, recordCardNotice, type Settlement } from '../../books/card-payments.js';
import { findCardProcessor } from '../../books/card-processors.js';
import { conflict } from '../../errors.js';
import { isCurrency } from '../../money.js';
import { NotSettled, retrieveSession } from '../../cards/sessions.js';
import { defineCommand } from '../door.js';
import { ensureRate } from '../ensure-rate.js';

/** Card payments: a paid session stored once, posted once settled, and the processor's refunds and disputes kept. */

/** A paid Checkout Session, stored once as a card payment `received`. */
export const receiveCardPaymentCommand = defineCommand({
  name: 'card_payment.receive',
  scope: (input: PaidSession) => ({ invoice: input.invoiceId }),
  run: ({ db, clock, actor }, input) => receiveCardPayment(db, clock, actor, input),
  // The same session delivered again stores nothing.
  leavesNoRowWhen: (result) => !result.received,
});

interface PostInput {
  businessId: string;
  sessionId: string;
  invoiceId: string;
  /** DAYBOOK_RATE_MAX_AGE_DAYS, for an account settling in a currency other than US dollars. */
  rateMaxAgeDays?: number;
}

/**
 * A received card payment posted to the books. Before the transaction the processor is asked
 * what the payment settled as (the gross and fee its balance transaction reports), and, for
 * an account settling in another currency than US dollars, a rate for the day is made sure
 * of. Until the processor has booked the charge it throws NotSettled and the payment stays
 * received, for the job to try again.
 */
export const postCardPaymentCommand = defineCommand({
  name: 'card_payment.post',
  scope: (input: PostInput) => ({ invoice: input.invoiceId }),
  async prepare(services, writer, input): Promise<Settlement> {
    const processor = findCardProcessor(services.db, input.businessId);
    if (!processor) throw conflict('the business is no longer connected to its card processor: reconnect it to post its received card payments');
    if (!services.config) throw new Error('write door: posting a card payment needs the server’s settings');
    const report = await retrieveSession({ apiUrl: services.config.stripeApiUrl, secretKey: processor.secretKey }, input.sessionId);
    if (!report.paid || !report.settlement) throw new NotSettled(`the processor has not booked session ${input.sessionId} to its balance yet`);
    const settledIn = report.settlement.currency;
    // Converted on the day it posts, which a closed period or the issue date may move.
    const postOn = cardPaymentPostingDay(services.db, input.businessId, input.sessionId);
    if (isCurrency(settledIn) && postOn) await ensureRate(services, writer, settledIn, postOn);
    return report.settlement;
  },
  run: ({ db, clock, actor, prepared }, input) => postCardPayment(db, clock, actor, input, prepared, input.rateMaxAgeDays),
  leavesNoRowWhen: (result) => !result.posted,
});

/** A refund or dispute the processor reported, kept once for Today; nothing is posted. */
export const recordCardNoticeCommand = defineCommand({
  name: 'card_payment.notice',
  scope: (input: CardNotice) => ({ invoice: input.invoiceId }),
  run: ({ db, clock, actor }, input) => recordCardNotice(db, clock, actor, input),
  leavesNoRowWhen: (result) => !result.recorded,
});
