import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { type Db, doorTransaction } from '../db/connection.js';
import { int, one } from '../db/statements.js';
import type { Mailer } from '../email/mailer.js';
import type { Logger } from '../log.js';
import type { Actor } from '../store/audit.js';
import { claimInProgress, completeClaim, type IdempotencyClaim, releaseClaim, type StoredAnswer, storedAnswer, storeAnswer } from '../store/idempotency.js';
import { committedTogether } from './group-commit.js';
import { type Reach, type Reached, resolveScope, type Scope } from './reach.js';

/**
 * The write door: every write to the books, from any entry point (the API's POSTs, the admin
 * CLI, the jobs, the pay page, the demo seed and the test double's fixtures), is a named
 * command run through here. The door resolves the command's scope for the writer (once),
 * awaits its preparation when it has one (a rate look-up), then in one synchronous
 * transaction checks the Idempotency-Key, runs the command, checks that it appended its audit
 * row under the writer, and stores the answer; after the commit it runs the command's
 * after-commit work (delivering an email), which a replay skips. A refusal is a throw: it
 * rolls everything back, the key included, so the client may correct the request and retry
 * with the same key.
 *
 * `write` (the API's POSTs, and a card payment's posting from the webhook, the pay page's
 * return or the job) commits together with the other writes ready in the same turn of the
 * event loop (group-commit.ts), each in its own SAVEPOINT of one transaction, and returns after
 * that commit. `writeNow` (the CLI, the other jobs, the seeds, the pages' own writes) runs in a
 * transaction of its own, or, inside `batch`, in a SAVEPOINT of the batch's one transaction.
 */

/** What the door needs of the server's services; the CLI has no mailer and may have no settings. */
export interface DoorServices {
  db: Db;
  clock: Clock;
  config?: Config;
  log?: Logger;
  mailer?: Mailer;
}

/** Who writes: the audit trail's actor, and what it may reach. */
export interface Writer {
  actor: Actor;
  reach: Reach;
}

/** What a command's work gets besides its input. */
export interface CommandContext<P = undefined> {
  db: Db;
  clock: Clock;
  actor: Actor;
  /** The command's scope, resolved for the writer. */
  reached: Reached;
  /** What `prepare` gave. */
  prepared: P;
}

/** A named write. `run` is synchronous and appends its audit row under `context.actor`. */
export interface Command<I, R, P = undefined> {
  /** The command's name, e.g. `invoice.send`. */
  name: string;
  /** The record the writer must reach. */
  scope(input: I): Scope;
  /** Work awaited before the transaction (a rate look-up); it must not write to the books except through the door. */
  prepare?(services: DoorServices, writer: Writer, input: I, reached: Reached): Promise<P>;
  run(context: CommandContext<P>, input: I): R;
  /** When the work found nothing to change (an invoice already viewed, a sweep that moved none), it leaves no audit row. */
  leavesNoRowWhen?(result: R): boolean;
  /** After the commit, before the answer; skipped on a replay. A failure is logged and never undoes the write. */
  afterCommit?(services: DoorServices, result: R): Promise<void>;
}

/** Declares a command; its types are checked here and erased where commands are listed. */
export function defineCommand<I, R, P = undefined>(command: Command<I, R, P>): Command<I, R, P> {
  return command;
}

/** A write's answer as it will be (and, under a key, was) sent. */
export interface Reply {
  status: number;
  body: unknown;
}

/** For an API request: its Idempotency-Key (or null) and how the result becomes the stored answer. */
export interface Idempotency<R> {
  claim: IdempotencyClaim | null;
  reply(result: R): Reply;
}

export type WriteOutcome<R> = { replayed: false; result: R; answer: StoredAnswer | null } | { replayed: true; answer: StoredAnswer };

/**
 * Runs `command` for `writer`: the whole door, awaiting preparation and after-commit work.
 * Without `idempotency` (the CLI, jobs, pages) there is no key to check or answer to store.
 */
export async function write<I, R, P>(services: DoorServices, writer: Writer, command: Command<I, R, P>, input: I, idempotency?: Idempotency<R>): Promise<WriteOutcome<R>> {
  const { db, clock } = services;
  const claim = idempotency?.claim ?? null;
  let outcome: WriteOutcome<R>;
  if (!command.prepare) {
    outcome = await committedTogether(db, (): WriteOutcome<R> => {
      const stored = claim ? storedAnswer(db, clock, claim) : undefined;
      if (stored) return { replayed: true, answer: stored };
      const reached = resolveScope(db, writer.reach, command.scope(input));
      return completed(services, writer, command, input, reached, undefined as P, idempotency);
    });
  } else {
    outcome = await preparedWrite(services, writer, command, command.prepare, input, idempotency);
  }
  if (!outcome.replayed && command.afterCommit) await afterCommit(services, command, outcome.result);
  return outcome;
}

/**
 * A command without preparation or after-commit work, run at once: the CLI, the jobs and the
 * seeds, which write synchronously. Emails a command writes stay in the outbox for the job.
 */
export function writeNow<I, R>(services: DoorServices, writer: Writer, command: Command<I, R, undefined>, input: I): R {
  if (command.prepare) throw new Error(`write door: ${command.name} must be prepared; use write()`);
  const { db } = services;
  return doorTransaction(db, () => {
    const reached = resolveScope(db, writer.reach, command.scope(input));
    return runAudited(services, writer, command, input, reached, undefined);
  });
}

/**
 * Runs `work`, which makes several writes through `writeNow`, in one transaction: each command
 * in its own SAVEPOINT, one commit for all (the demo seed and the test double's fixtures).
 */
export function batch<T>(db: Db, work: () => T): T {
  return doorTransaction(db, work);
}

/**
 * A command that awaits something before it can post. Under a key, the key is first claimed
 * `in_progress` in a short transaction (committed with the group ready then), so a concurrent
 * duplicate gets 409 instead of running twice; then the scope is resolved and `prepare` awaited, outside any transaction;
 * then the work runs and the claim becomes the stored answer in one commit. Any failure frees
 * the key again. A crash while the claim is held leaves it in_progress; start-up frees it
 * (releaseAbandonedClaims), since completion commits with the work.
 */
async function preparedWrite<I, R, P>(
  services: DoorServices,
  writer: Writer,
  command: Command<I, R, P>,
  prepare: NonNullable<Command<I, R, P>['prepare']>,
  input: I,
  idempotency: Idempotency<R> | undefined,
): Promise<WriteOutcome<R>> {
  const { db, clock } = services;
  const claim = idempotency?.claim ?? null;
  if (claim) {
    const stored = await committedTogether(db, () => {
      const found = storedAnswer(db, clock, claim);
      if (!found) claimInProgress(db, clock, claim);
      return found;
    });
    if (stored) return { replayed: true, answer: stored };
  }
  try {
    const reached = resolveScope(db, writer.reach, command.scope(input));
    const prepared = await prepare(services, writer, input, reached);
    return await committedTogether(db, () => completed(services, writer, command, input, reached, prepared, idempotency, 'claimed'));
  } catch (error) {
    if (claim) releaseQuietly(db, claim);
    throw error;
  }
}

/** Runs the command and, under a key, stores its answer: inside the door's transaction. */
function completed<I, R, P>(
  services: DoorServices,
  writer: Writer,
  command: Command<I, R, P>,
  input: I,
  reached: Reached,
  prepared: P,
  idempotency: Idempotency<R> | undefined,
  claimState: 'new' | 'claimed' = 'new',
): WriteOutcome<R> {
  const result = runAudited(services, writer, command, input, reached, prepared);
  if (!idempotency) return { replayed: false, result, answer: null };
  const answer = storedAnswerOf(idempotency.reply(result));
  const { claim } = idempotency;
  if (claim && claimState === 'claimed') completeClaim(services.db, services.clock, claim, answer);
  else if (claim) storeAnswer(services.db, services.clock, claim, answer);
  return { replayed: false, result, answer };
}

/** The reply as stored and sent; a refusal must throw, so a reply is always a success. */
function storedAnswerOf(reply: Reply): StoredAnswer {
  if (reply.status < 200 || reply.status > 299) {
    throw new Error(`write door: a write answered ${reply.status}; refusals must throw so nothing commits`);
  }
  return { status: reply.status, json: JSON.stringify(reply.body) };
}

/** Runs the command and checks what only a bug could break: it appended an audit row under the writer. */
function runAudited<I, R, P>(services: DoorServices, writer: Writer, command: Command<I, R, P>, input: I, reached: Reached, prepared: P): R {
  const { db, clock } = services;
  const mark = lastAuditId(db);
  const result = command.run({ db, clock, actor: writer.actor, reached, prepared }, input);
  if (!command.leavesNoRowWhen?.(result) && !auditedSince(db, mark, writer.actor)) {
    throw new Error(`write door: ${command.name} appended no audit row under ${writer.actor.type} ${writer.actor.name}`);
  }
  return result;
}

async function afterCommit<I, R, P>(services: DoorServices, command: Command<I, R, P>, result: R): Promise<void> {
  try {
    await command.afterCommit?.(services, result);
  } catch (error) {
    services.log?.warn({ err: error, command: command.name }, 'work after the commit failed; the write stands');
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
