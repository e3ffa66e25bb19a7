import type { Clock } from '../clock.js';
import { assertInTransaction, type Db, inTransaction } from '../db/connection.js';
import { int, one } from '../db/statements.js';
import type { Actor } from './audit.js';
import {
  claimInProgress,
  completeClaim,
  type IdempotencyClaim,
  releaseClaim,
  type StoredAnswer,
  storedAnswer,
  storeAnswer,
} from './idempotency.js';

/**
 * The one door every write goes through. In one synchronous transaction it checks the
 * Idempotency-Key, runs the work, checks that the work appended its audit row under the
 * actor, and stores the answer, so "ran but answer not saved" and "ran but not audited"
 * cannot happen. A refusal is a throw: the throw rolls everything back, the key included,
 * so the client may correct the request and retry with the same key.
 */

/** A write's answer as it will be (and, under a key, was) sent. */
export interface Reply {
  status: number;
  body: unknown;
}

export interface WriteRequest {
  /** Who is writing: the audit row the work appends must name this actor. */
  actor: Actor;
  /** The Idempotency-Key, or null when the request sent none. */
  claim: IdempotencyClaim | null;
}

export type WriteOutcome<R extends Reply> =
  | { replayed: false; reply: R; answer: StoredAnswer }
  | { replayed: true; answer: StoredAnswer };

/** A write that runs start to finish synchronously: check, work, audit check and answer in one commit. */
export function runWrite<R extends Reply>(db: Db, clock: Clock, request: WriteRequest, work: () => R): WriteOutcome<R> {
  return inTransaction(db, () => {
    if (request.claim) {
      const stored = storedAnswer(db, clock, request.claim);
      if (stored) return { replayed: true, answer: stored };
    }
    const { reply, answer } = workAudited(db, request.actor, work);
    if (request.claim) storeAnswer(db, clock, request.claim, answer);
    return { replayed: false, reply, answer };
  });
}

/**
 * A write that must await something before it can post (send looking up a missing exchange
 * rate). Under a key, the key is first claimed `in_progress` in its own short transaction, so
 * a concurrent duplicate gets 409 instead of running twice; then `prepare` is awaited, outside
 * any transaction; then the work runs and the claim becomes the stored answer in one commit.
 * Any failure frees the key again. A crash while the claim is held leaves it in_progress;
 * start-up frees it (releaseAbandonedClaims), since completion commits with the work.
 */
export async function runAwaitingWrite<R extends Reply, P>(
  db: Db,
  clock: Clock,
  request: WriteRequest,
  prepare: () => Promise<P>,
  work: (prepared: P) => R,
): Promise<WriteOutcome<R>> {
  const { claim } = request;
  if (claim) {
    const stored = inTransaction(db, () => {
      const found = storedAnswer(db, clock, claim);
      if (!found) claimInProgress(db, clock, claim);
      return found;
    });
    if (stored) return { replayed: true, answer: stored };
  }
  try {
    const prepared = await prepare();
    return inTransaction(db, () => {
      const { reply, answer } = workAudited(db, request.actor, () => work(prepared));
      if (claim) completeClaim(db, clock, claim, answer);
      return { replayed: false, reply, answer };
    });
  } catch (error) {
    if (claim) releaseQuietly(db, claim);
    throw error;
  }
}

/**
 * Frees the key after a failed write. If even that fails (the disk is gone), the write's own
 * error is the one to report; the claim stays until start-up frees it.
 */
function releaseQuietly(db: Db, claim: IdempotencyClaim): void {
  try {
    releaseClaim(db, claim);
  } catch {
    // Nothing more to do here: releaseAbandonedClaims frees it at the next start.
  }
}

/**
 * Runs the work inside the caller's transaction and checks what only a bug could break: the
 * answer is a success (refusals must throw, so nothing commits), it can be written as JSON,
 * and the work appended an audit row under the actor.
 */
function workAudited<R extends Reply>(db: Db, actor: Actor, work: () => R): { reply: R; answer: StoredAnswer } {
  assertInTransaction(db, 'workAudited');
  const mark = lastAuditId(db);
  const reply = work();
  if (reply.status < 200 || reply.status > 299) {
    throw new Error(`write door: a write answered ${reply.status}; refusals must throw so nothing commits`);
  }
  if (!auditedSince(db, mark, actor)) {
    throw new Error(`write door: the write appended no audit row under ${actor.type} ${actor.name}`);
  }
  return { reply, answer: { status: reply.status, json: JSON.stringify(reply.body) } };
}

function lastAuditId(db: Db): number {
  return int(one<{ id: bigint | null }>(db, 'SELECT max(id) AS id FROM audit_log')?.id ?? null) ?? 0;
}

function auditedSince(db: Db, mark: number, actor: Actor): boolean {
  const row = one<{ id: bigint }>(
    db,
    'SELECT id FROM audit_log WHERE id > ? AND actor_type = ? AND actor_id IS ? AND actor_name = ? LIMIT 1',
    mark,
    actor.type,
    actor.id,
    actor.name,
  );
  return row !== undefined;
}
