import { userInfo } from 'node:os';
import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { addDays } from '../dates.js';
import { assertBookWrite, type Db } from '../db/connection.js';
import { all, run } from '../db/statements.js';

/** The kinds of writer the audit trail names. */
export const ACTOR_TYPES = ['api_key', 'cli', 'job', 'console', 'pay_page', 'webhook'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/**
 * Who did something: an API key (its id and name), the admin CLI (the OS user who ran it and
 * the command), a job (its name), an owner's console session, the customer opening a pay link,
 * or a payment processor's webhook.
 */
export interface Actor {
  type: ActorType;
  id: string | null;
  name: string;
  /** For the CLI: the admin command that wrote, e.g. `daybook key create`. */
  command?: string | null;
}

/** The OS user running this process, as the audit trail names a CLI writer. */
export function osUserName(): string {
  try {
    const { username } = userInfo();
    if (username) return username;
  } catch {
    // A uid with no passwd entry (a container run with --user 1234) has no name.
  }
  return `uid ${process.getuid?.() ?? 'unknown'}`;
}

/** The admin CLI writing as `command` (e.g. `daybook key create`), under the OS user running it. */
export function cliActor(command: string): Actor {
  return { type: 'cli', id: null, name: osUserName(), command };
}

/** For books written by code that stands in for the admin CLI (fixtures, seeds, benchmarks). */
export const CLI_ACTOR: Actor = cliActor('daybook');

/** A job of the pool, by its name (`overdue`, `rates`, ...). */
export function jobActor(name: string): Actor {
  return { type: 'job', id: null, name };
}

/** Who opens a pay page: the customer, with no key. */
export const PAY_PAGE_ACTOR: Actor = { type: 'pay_page', id: null, name: 'pay page' };

export interface AuditEvent {
  /** The account the row belongs to; null for an installation-wide row (rates, restore, migrate). */
  tenantId: string | null;
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
  assertBookWrite(db, 'recordAudit');
  if (event.tenantId === null && event.businessId) throw new Error('recordAudit: an installation-wide row names no business');
  run(
    db,
    `INSERT INTO audit_log (tenant_id, business_id, actor_type, actor_id, actor_name, command, action, subject_type, subject_id, detail_json, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    event.tenantId,
    event.businessId ?? null,
    actor.type,
    actor.id,
    actor.name,
    actor.type === 'cli' ? (actor.command ?? null) : null,
    event.action,
    event.subjectType ?? null,
    event.subjectId ?? null,
    JSON.stringify(event.detail ?? {}),
    nowIso(clock),
  );
}

export interface AuditRow {
  id: number;
  at: string;
  accountId: string | null;
  businessId: string | null;
  actor: Actor;
  action: string;
  subjectType: string | null;
  subjectId: string | null;
  detail: Record<string, unknown>;
}

/** Which rows to list: one account's, or the installation's (no account). */
export interface AuditFilter {
  scope: { accountId: string } | 'installation';
  businessId?: string;
  /** Rows at or after the start of this day (UTC). */
  since?: string;
  /** Rows before the end of this day (UTC). */
  until?: string;
  /** Rows written by API keys of this name. */
  keyName?: string;
  actorType?: ActorType;
  /** Rows older than this id: the next page after a page ending at it. */
  beforeId?: number;
  limit: number;
}

interface StoredAuditRow {
  id: bigint;
  at: string;
  tenant_id: string | null;
  business_id: string | null;
  actor_type: ActorType;
  actor_id: string | null;
  actor_name: string;
  command: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  detail_json: string;
}

/** Audit rows, newest first, at most `filter.limit` of them. */
export function listAudit(db: Db, filter: AuditFilter): AuditRow[] {
  const where: string[] = [];
  const params: unknown[] = [];
  const when = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filter.scope === 'installation') when('tenant_id IS NULL');
  else when('tenant_id = ?', filter.scope.accountId);
  if (filter.businessId !== undefined) when('business_id = ?', filter.businessId);
  if (filter.since !== undefined) when('at >= ?', `${filter.since}T00:00:00.000Z`);
  if (filter.until !== undefined) when('at < ?', `${addDays(filter.until, 1)}T00:00:00.000Z`);
  if (filter.keyName !== undefined) when("actor_type = 'api_key' AND actor_name = ?", filter.keyName);
  if (filter.actorType !== undefined) when('actor_type = ?', filter.actorType);
  if (filter.beforeId !== undefined) when('id < ?', filter.beforeId);
  const rows = all<StoredAuditRow>(db, `SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, ...params, filter.limit);
  return rows.map(auditRowOf);
}

function auditRowOf(row: StoredAuditRow): AuditRow {
  return {
    id: Number(row.id),
    at: row.at,
    accountId: row.tenant_id,
    businessId: row.business_id,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name, ...(row.command !== null ? { command: row.command } : {}) },
    action: row.action,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    detail: JSON.parse(row.detail_json) as Record<string, unknown>,
  };
}

/** The writer as one phrase: `key "Bookkeeper"`, `alice (daybook key create)`, `job overdue`. */
export function describeActor(actor: Actor): string {
  switch (actor.type) {
    case 'api_key':
      return `key "${actor.name}"`;
    case 'cli':
      return actor.command ? `${actor.name} (${actor.command})` : `${actor.name} (admin CLI)`;
    case 'job':
      return `job ${actor.name}`;
    case 'console':
      return `console: ${actor.name}`;
    case 'pay_page':
      return 'pay page (customer)';
    case 'webhook':
      return `webhook: ${actor.name}`;
  }
}
