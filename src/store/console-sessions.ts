import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Clock, nowIso } from '../clock.js';
import { assertInTransaction, type Db, withoutWaiting } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { type Actor, recordAudit } from './audit.js';
import { SIGN_IN_MAX_MINUTES } from './sign-in-minutes.js';

/**
 * The owner's console's way in: one-time sign-in links the admin command prints, and the
 * browser sessions they start. Tokens and session ids are 256 random bits, sent to the browser
 * once and stored only as SHA-256 fingerprints. A session ends when signed out or revoked,
 * after SESSION_IDLE_MS without a request, or SESSION_LIFETIME_MS after it began, whichever
 * comes first.
 */

export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** A session's last request is written at most this often, not on every request. */
const SEEN_EVERY_MS = 60 * 1000;

/** 32 random bytes, base64url: 43 characters. */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function fingerprintOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export interface SignInLink {
  token: string;
  expiresAt: string;
}

/** A one-time sign-in link for the account's Owner; the token is returned once and never stored. */
export function createSignInLink(db: Db, clock: Clock, actor: Actor, tenantId: string, minutes: number): SignInLink {
  assertInTransaction(db, 'createSignInLink');
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > SIGN_IN_MAX_MINUTES) throw new Error(`createSignInLink: minutes must be 1 to ${SIGN_IN_MAX_MINUTES}`);
  const token = newSecret();
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + minutes * 60_000).toISOString();
  run(db, 'INSERT INTO console_sign_in_links (fingerprint, tenant_id, created_at, expires_at) VALUES (?, ?, ?, ?)', fingerprintOf(token), tenantId, now.toISOString(), expiresAt);
  recordAudit(db, clock, actor, { tenantId, action: 'console.link', subjectType: 'tenant', subjectId: tenantId, detail: { expiresAt } });
  return { token, expiresAt };
}

/** Why a sign-in link no longer signs anyone in; the page says only that it cannot be used. */
export type LinkProblem = 'unknown' | 'used' | 'expired';

/** The account a sign-in link would sign into, if it still can (a read: the page before the button). */
export function checkSignInLink(db: Db, clock: Clock, token: string): { tenantId: string } | { problem: LinkProblem } {
  if (!SECRET_SHAPE.test(token)) return { problem: 'unknown' };
  const row = one<{ tenant_id: string; expires_at: string; used_at: string | null }>(
    db,
    'SELECT tenant_id, expires_at, used_at FROM console_sign_in_links WHERE fingerprint = ?',
    fingerprintOf(token),
  );
  if (!row) return { problem: 'unknown' };
  if (row.used_at !== null) return { problem: 'used' };
  if (row.expires_at <= nowIso(clock)) return { problem: 'expired' };
  return { tenantId: row.tenant_id };
}

export interface StartedSession {
  /** The cookie's value: sent once, never stored. */
  secret: string;
  id: string;
  tenantId: string;
  expiresAt: string;
}

/**
 * Uses a sign-in link up and starts a session, or says why it cannot: a link signs in once,
 * however many requests race for it (the update of `used_at` decides). Audited as
 * `console.sign_in` under the new session.
 */
export function startSession(db: Db, clock: Clock, token: string, id: string, userAgent: string | undefined): StartedSession | { problem: LinkProblem } {
  assertInTransaction(db, 'startSession');
  const checked = checkSignInLink(db, clock, token);
  if ('problem' in checked) return checked;
  const now = nowIso(clock);
  const used = run(db, 'UPDATE console_sign_in_links SET used_at = ? WHERE fingerprint = ? AND used_at IS NULL', now, fingerprintOf(token));
  if (used.changes !== 1) return { problem: 'used' };
  const secret = newSecret();
  const expiresAt = new Date(clock.now().getTime() + SESSION_LIFETIME_MS).toISOString();
  run(
    db,
    'INSERT INTO console_sessions (id, fingerprint, tenant_id, created_at, last_seen_at, expires_at, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)',
    id,
    fingerprintOf(secret),
    checked.tenantId,
    now,
    now,
    expiresAt,
    userAgent ? userAgent.slice(0, 300) : null,
  );
  recordAudit(db, clock, consoleActor(id), { tenantId: checked.tenantId, action: 'console.sign_in', subjectType: 'console_session', subjectId: id, detail: { expiresAt } });
  return { secret, id, tenantId: checked.tenantId, expiresAt };
}

/** A live session, as a request finds it by its cookie. */
export interface ConsoleSession {
  id: string;
  tenantId: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

interface SessionRow {
  id: string;
  tenant_id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ended_at: string | null;
  ended_by: 'sign_out' | 'revoked' | null;
  user_agent: string | null;
}

/** The session the cookie names, if it is live now; undefined for any other value (nothing says why). */
export function findLiveSession(db: Db, clock: Clock, secret: string): ConsoleSession | undefined {
  if (!SECRET_SHAPE.test(secret)) return undefined;
  const row = one<SessionRow>(db, 'SELECT * FROM console_sessions WHERE fingerprint = ?', fingerprintOf(secret));
  if (!row || !isLive(row, clock.now().getTime())) return undefined;
  return { id: row.id, tenantId: row.tenant_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at, expiresAt: row.expires_at };
}

function isLive(row: Pick<SessionRow, 'ended_at' | 'last_seen_at' | 'expires_at'>, now: number): boolean {
  return row.ended_at === null && Date.parse(row.expires_at) > now && Date.parse(row.last_seen_at) + SESSION_IDLE_MS > now;
}

/**
 * Records that the session was used now, at most once a minute: the idle limit counts from it.
 * Not a write of the books and not audited; nothing else changes. It never waits for the books:
 * while another process holds them (a backup, an import), the mark is skipped, and the idle
 * limit counts from the last one made.
 */
export function touchSession(db: Db, clock: Clock, session: ConsoleSession): void {
  const now = clock.now();
  if (now.getTime() - Date.parse(session.lastSeenAt) < SEEN_EVERY_MS) return;
  try {
    withoutWaiting(db, () => run(db, 'UPDATE console_sessions SET last_seen_at = ? WHERE id = ? AND ended_at IS NULL', now.toISOString(), session.id));
  } catch (error) {
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
  }
}

/** Signs a session out (the session's own request): audited as `console.sign_out`. */
export function endSession(db: Db, clock: Clock, session: ConsoleSession): void {
  assertInTransaction(db, 'endSession');
  run(db, "UPDATE console_sessions SET ended_at = ?, ended_by = 'sign_out' WHERE id = ? AND ended_at IS NULL", nowIso(clock), session.id);
  recordAudit(db, clock, consoleActor(session.id), { tenantId: session.tenantId, action: 'console.sign_out', subjectType: 'console_session', subjectId: session.id });
}

export interface ListedSession {
  id: string;
  tenantId: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  state: 'live' | 'signed_out' | 'revoked' | 'expired';
  endedAt: string | null;
  userAgent: string | null;
}

/** Every session of an account, newest first. */
export function listSessions(db: Db, clock: Clock, tenantId: string): ListedSession[] {
  const now = clock.now().getTime();
  return all<SessionRow>(db, 'SELECT * FROM console_sessions WHERE tenant_id = ? ORDER BY created_at DESC, id', tenantId).map((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    state: row.ended_by === 'sign_out' ? 'signed_out' : row.ended_by === 'revoked' ? 'revoked' : isLive(row, now) ? 'live' : 'expired',
    endedAt: row.ended_at,
    userAgent: row.user_agent,
  }));
}

export function findSession(db: Db, id: string): { id: string; tenantId: string } | undefined {
  const row = one<{ id: string; tenant_id: string }>(db, 'SELECT id, tenant_id FROM console_sessions WHERE id = ?', id);
  return row && { id: row.id, tenantId: row.tenant_id };
}

/** Ends sessions of an account by the operator (one, or all still live): audited `console.revoke`, one row per session ended. */
export function revokeSessions(db: Db, clock: Clock, actor: Actor, tenantId: string, sessionId?: string): string[] {
  assertInTransaction(db, 'revokeSessions');
  const now = nowIso(clock);
  const live = listSessions(db, clock, tenantId).filter((session) => session.state === 'live' && (sessionId === undefined || session.id === sessionId));
  for (const session of live) {
    run(db, "UPDATE console_sessions SET ended_at = ?, ended_by = 'revoked' WHERE id = ? AND ended_at IS NULL", now, session.id);
    recordAudit(db, clock, actor, { tenantId, action: 'console.revoke', subjectType: 'console_session', subjectId: session.id });
  }
  return live.map((session) => session.id);
}

/** The console session as the audit trail names it. */
export function consoleActor(sessionId: string): Actor {
  return { type: 'console', id: sessionId, name: `console session ${sessionId.slice(0, 8)}` };
}

/**
 * The session's CSRF token: derived from its secret (which only the browser holding the cookie
 * has), so it needs no storage and differs per session.
 */
export function csrfToken(secret: string): string {
  return createHmac('sha256', secret).update('daybook console csrf').digest('base64url');
}

export function csrfTokenMatches(secret: string, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfToken(secret));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
