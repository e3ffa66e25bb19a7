import { findCardPayment, unpostedCardPayments } from '../books/card-payments.js';
import { connectedCardProcessors } from '../books/card-processors.js';
import { completedSessionIds, ProcessorUnavailable, retrieveSession } from '../cards/sessions.js';
import { postStoredCardPayment, storePaidSession } from '../door/card-payments.js';
import type { Writer } from '../door/door.js';
import { INSTALLATION_REACH } from '../door/reach.js';
import { jobActor } from '../store/audit.js';
import type { Services } from '../services.js';

/** How far back the job asks the processor for completed sessions. */
export const LOOK_BACK_DAYS = 3;

const DAY_SECONDS = 86_400;

export interface CardPaymentsRun {
  /** Paid sessions Daybook had not heard of, stored by this run. */
  found: number;
  posted: number;
  /** Received and still not posted: a closed period, billing past due, a charge not yet booked, no rate. */
  waiting: number;
  /** Businesses whose processor could not be asked this time. */
  unreachable: number;
}

/**
 * The card-payments job: for each business taking card payments, asks the processor for the
 * Checkout Sessions completed in the last three days and stores the paid ones Daybook never
 * heard of (a webhook that could not reach the server, a customer who never came back to the
 * page); then posts every card payment received and not yet posted, whatever kept it.
 */
export async function runCardPaymentsJob(services: Services): Promise<CardPaymentsRun> {
  const writer: Writer = { actor: jobActor('card-payments'), reach: INSTALLATION_REACH };
  const run: CardPaymentsRun = { found: 0, posted: 0, waiting: 0, unreachable: 0 };
  const since = Math.floor(services.clock.now().getTime() / 1000) - LOOK_BACK_DAYS * DAY_SECONDS;
  for (const processor of connectedCardProcessors(services.db)) {
    const account = { apiUrl: services.config.stripeApiUrl, secretKey: processor.secretKey };
    try {
      for (const sessionId of await completedSessionIds(account, since)) {
        if (findCardPayment(services.db, processor.businessId, sessionId)) continue;
        const report = await retrieveSession(account, sessionId);
        // Sessions made elsewhere in the same processor account are not Daybook's.
        if (!report.paid || report.invoiceId === null || report.paidOn === null) continue;
        const storer: Writer = { actor: writer.actor, reach: { kind: 'processor', businessId: processor.businessId } };
        if (storePaidSession(services, storer, { ...report, invoiceId: report.invoiceId, paidOn: report.paidOn }, 'job') === 'stored') run.found += 1;
      }
    } catch (error) {
      if (!(error instanceof ProcessorUnavailable)) throw error;
      services.log.warn({ businessId: processor.businessId, err: error.message }, 'card-payments job: the processor did not answer');
      run.unreachable += 1;
    }
  }
  for (const stored of unpostedCardPayments(services.db)) {
    const outcome = await postStoredCardPayment(services, writer, stored);
    if (outcome === 'posted') run.posted += 1;
    if (outcome === 'waiting') run.waiting += 1;
  }
  return run;
}
