import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { run } from '../db/statements.js';

/** Who did something: an API key (recorded under its name), the admin CLI, or a job. */
export interface Actor {
  type: 'api_key' | 'cli' | 'system';
  id: string | null;
  name: string;
}

export const CLI_ACTOR: Actor = { type: 'cli', id: null, name: 'daybook cli' };

export interface AuditEvent {
  tenantId: string;
  businessId?: string | null;
  action: string;
  subjectType?: string | null;
  subjectId?: string | null;
  detail?: Record<string, unknown>;
}

/**
 * Appends one row to the audit log; the log is append-only at the database level. The caller
 * holds the transaction, so the row commits with the change it records, or not at all.
 */
export function recordAudit(db: Db, clock: Clock, actor: Actor, event: AuditEvent): void {
  assertInTransaction(db, 'recordAudit');
  run(
    db,
    `INSERT INTO audit_log (tenant_id, business_id, actor_type, actor_id, actor_name, action, subject_type, subject_id, detail_json, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    event.tenantId,
    event.businessId ?? null,
    actor.type,
    actor.id,
    actor.name,
    event.action,
    event.subjectType ?? null,
    event.subjectId ?? null,
    JSON.stringify(event.detail ?? {}),
    nowIso(clock),
  );
}

export interface AuditRow {
  id: string;
  at: string;
  actorType: string;
  actorName: string;
  action: string;
  businessId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  detail: Record<string, unknown>;
}
