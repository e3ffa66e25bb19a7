import type { Proposal } from './index.js';
import { allWords, quotable } from './text.js';

/**
 * Payouts from the card processor: money in that moves what Card Payments Clearing holds (card
 * payments less the processor's fees, src/books/card-payments.ts) to the bank. A bank line is
 * taken for one when its description or vendor says "Stripe" and "payout" or "transfer", as
 * the processor's deposits read on US statements ("STRIPE TRANSFER ST-X1Y2Z3", "Stripe
 * payout"). Nothing else in money in is recognised: a customer's wire or a transfer from
 * savings is not a payout.
 */

/**
 * How sure a recognised payout is: it is read from words alone, so, like the built-in
 * merchant knowledge, it stays below the review threshold and a person checks the amount
 * against the clearing account once before it is booked.
 */
export const PAYOUT_CONFIDENCE = 0.7;

const PROCESSOR_WORDS = new Set(['stripe']);
const PAYOUT_WORDS = new Set(['payout', 'payouts', 'transfer', 'transfers', 'trnsfr', 'xfer']);

/** Whether a money-in bank line reads as the card processor's payout. */
export function isProcessorPayout(description: string | null, vendorName: string | null): boolean {
  const words = allWords(description, vendorName);
  return words.some((word) => PROCESSOR_WORDS.has(word)) && words.some((word) => PAYOUT_WORDS.has(word));
}

/** The proposal for a recognised payout: the business's clearing account, with a one-line reason. */
export function payoutProposal(description: string, clearingAccountId: string): Proposal {
  return {
    accountId: clearingAccountId,
    confidence: PAYOUT_CONFIDENCE,
    rationale: `'${quotable(description)}' reads as a Stripe payout: it moves what card payments left in the clearing account to the bank.`,
  };
}
