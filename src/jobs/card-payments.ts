import { findCardPayment, unpostedCardPayments } from '../books/card-payments.js';
import { connectedCardProcessors } from '../books/card-processors.js';
import { paidSessionIds, ProcessorRefused, ProcessorUnavailable, retrieveSession } from '../cards/sessions.js';
import { postStoredCardPayment, storePaidSession } from '../door/card-payments.js';
import type { Writer } from '../door/door.js';
import { INSTALLATION_REACH } from '../door/reach.js';
import { jobActor } from '../store/audit.js';
import type { Services } from '../services.js';

/**
 * How far back the job asks the processor for completed sessions, by when each was created: a
 * session is made when the customer presses the button, and a bank debit (ACH, SEPA) the
 * customer chose there can take up to two weeks to succeed. Thirty days covers that, with a
 * server down for days on top.
 */
export const LOOK_BACK_DAYS = 30;

const DAY_SECONDS = 86_400;

export interface CardPaymentsRun {
  /** Paid sessions Daybook had not heard of, stored by this run. */
  found: number;
  posted: number;
  /** Received and still not posted: a closed period, billing past due, a charge not yet booked, no rate. */
  waiting: number;
  /** Businesses whose processor could not be asked this time, or refused Daybook's key. */
  unreachable: number;
}

/** A run that met errors it did not expect, after doing everything else it could. */
export class CardPaymentsJobFailed extends Error {
  override name = 'CardPaymentsJobFailed';
}

/**
 * The card-payments job: for each business taking card payments, asks the processor for the
 * paid Checkout Sessions created in the last 30 days and stores those Daybook never heard of (a
 * webhook that could not reach the server, a customer who never came back to the page); then
 * posts every card payment received and not yet posted, whatever kept it. One business or
 * payment going wrong does not keep the others waiting: an unexpected error is logged, the rest
 * are done, and then the run fails, naming it.
 */
export async function runCardPaymentsJob(services: Services): Promise<CardPaymentsRun> {
  const writer: Writer = { actor: jobActor('card-payments'), reach: INSTALLATION_REACH };
  const run: CardPaymentsRun = { found: 0, posted: 0, waiting: 0, unreachable: 0 };
  const unexpected: string[] = [];
  const since = Math.floor(services.clock.now().getTime() / 1000) - LOOK_BACK_DAYS * DAY_SECONDS;
  for (const processor of connectedCardProcessors(services.db)) {
    const account = { apiUrl: services.config.stripeApiUrl, secretKey: processor.secretKey };
    // Storing is within the business's own reach: a session naming another business's invoice is refused.
    const storer: Writer = { actor: writer.actor, reach: { kind: 'processor', businessId: processor.businessId } };
    try {
      for (const sessionId of await paidSessionIds(account, since)) {
        if (findCardPayment(services.db, processor.businessId, sessionId)) continue;
        const report = await retrieveSession(account, sessionId);
        if (!report.paid || report.invoiceId === null || report.paidOn === null) continue;
        if (storePaidSession(services, storer, { ...report, invoiceId: report.invoiceId, paidOn: report.paidOn }, 'job') === 'stored') run.found += 1;
      }
    } catch (error) {
      if (error instanceof ProcessorUnavailable || error instanceof ProcessorRefused) {
        services.log.warn({ businessId: processor.businessId, err: error.message }, `card-payments job: the processor ${error instanceof ProcessorRefused ? 'refused Daybook’s key' : 'did not answer'}`);
        run.unreachable += 1;
      } else {
        services.log.error({ businessId: processor.businessId, err: error }, 'card-payments job: looking for paid sessions failed');
        unexpected.push(`business ${processor.businessId}: ${(error as Error).message}`);
      }
    }
  }
  for (const stored of unpostedCardPayments(services.db)) {
    try {
      const outcome = await postStoredCardPayment(services, writer, stored);
      if (outcome === 'posted') run.posted += 1;
      if (outcome === 'waiting') run.waiting += 1;
    } catch (error) {
      services.log.error({ businessId: stored.businessId, sessionId: stored.sessionId, err: error }, 'card-payments job: posting failed');
      unexpected.push(`session ${stored.sessionId}: ${(error as Error).message}`);
      run.waiting += 1;
    }
  }
  if (unexpected.length > 0) throw new CardPaymentsJobFailed(`${unexpected.length} unexpected error(s), the rest done (${JSON.stringify(run)}): ${unexpected.join('; ')}`);
  return run;
}
