import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { isIsoDate } from '../dates.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { one, run } from '../db/statements.js';
import { ApiError, validationFailed } from '../errors.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { getBusiness } from './businesses.js';
import { newId } from '../ids.js';

/** The last locked date of a business, or null when no period is closed. */
export function lockedThrough(db: Db, businessId: string): string | null {
  const row = one<{ through: string | null }>(
    db,
    'SELECT max(locked_through) AS through FROM period_locks WHERE business_id = ?',
    businessId,
  );
  return row?.through ?? null;
}

export function isDateLocked(db: Db, businessId: string, date: string): boolean {
  const through = lockedThrough(db, businessId);
  return through !== null && date <= through;
}

/**
 * Closes every period up to and including `through`. Locks only move forward: a closed
 * period is never reopened, so a date before the current lock is refused.
 */
export function lockPeriod(db: Db, clock: Clock, actor: Actor, businessId: string, through: string): { businessId: string; lockedThrough: string } {
  if (!isIsoDate(through)) throw validationFailed('through', 'must be a date YYYY-MM-DD');
  return inTransaction(db, () => {
    const business = getBusiness(db, businessId);
    const current = lockedThrough(db, businessId);
    if (current !== null && through <= current) {
      throw new ApiError('conflict', `periods are already locked through ${current}; a lock can only move forward`);
    }
    run(db, 'INSERT INTO period_locks (id, business_id, locked_through, created_at) VALUES (?, ?, ?, ?)', newId(), businessId, through, nowIso(clock));
    recordAudit(db, clock, actor, {
      tenantId: business.tenantId,
      businessId,
      action: 'period.lock',
      subjectType: 'business',
      subjectId: businessId,
      detail: { through, previous: current },
    });
    return { businessId, lockedThrough: through };
  });
}
