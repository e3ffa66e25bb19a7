import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { markOverdueCommand } from '../door/commands/invoices.js';
import { writeNow } from '../door/door.js';
import { INSTALLATION_REACH } from '../door/reach.js';
import { jobActor } from '../store/audit.js';

export interface OverdueContext {
  db: Db;
  clock: Clock;
}

/** Moves invoices with money owed past their due date to overdue; safe to run any number of times. */
export function runOverdueSweep(context: OverdueContext): { markedOverdue: number } {
  return { markedOverdue: writeNow(context, { actor: jobActor('overdue'), reach: INSTALLATION_REACH }, markOverdueCommand, undefined) };
}
