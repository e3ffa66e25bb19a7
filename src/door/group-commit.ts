import { type Db, doorTransaction } from '../db/connection.js';

/**
 * Group commit for the write door. Writes that are ready together (the requests that arrived
 * while the previous group was committing) share one transaction and one fsync: each runs in
 * its own SAVEPOINT, one after another in one synchronous burst, and the group commits once;
 * each write's promise settles only after the commit that holds it, so nothing is answered that
 * is not durable.
 *
 * - A write whose work throws rolls back only its savepoint and gets its own error.
 * - If SQLite rolled back the whole transaction (a full disk, an I/O error), every other write
 *   of the group gets GroupCommitFailed (500): the work before it went with the transaction.
 * - If the commit fails, every write of the group gets GroupCommitFailed, and nothing of the
 *   group is kept; the keys they stored go with it.
 *
 * The group runs at the next check phase of the event loop (setImmediate): a write alone waits
 * for no timer, only for the requests already read in the same turn. No transaction stays open
 * across turns of the event loop, so no read ever sees work a failed commit erases.
 * docs/decisions.md "Group commit" says what a client can observe.
 */

/** The most writes one transaction holds; the rest commit in the next group, a turn later. */
export const GROUP_BOUND = 64;

/** A write that was lost with its group: the transaction was rolled back, or its commit failed. */
export class GroupCommitFailed extends Error {
  constructor(cause: unknown) {
    super('write door: the writes committing together with this one could not be committed; none of them was kept', { cause });
    this.name = 'GroupCommitFailed';
  }
}

interface Queued {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What one connection's queue has committed: for tests and the benchmark's report. */
export interface GroupCommitCounts {
  /** Transactions committed or attempted. */
  groups: number;
  /** Writes run in them. */
  writes: number;
  /** The largest group so far. */
  largest: number;
}

class WriteQueue {
  private waiting: Queued[] = [];
  private scheduled = false;
  readonly counts: GroupCommitCounts = { groups: 0, writes: 0, largest: 0 };

  constructor(private readonly db: Db) {}

  add<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const group = this.waiting.splice(0, GROUP_BOUND);
    if (this.waiting.length > 0) this.schedule();
    if (this.db.inTransaction) {
      // Only a bug leaves a transaction open between turns: joining it would answer writes that
      // its owner may still roll back.
      const open = new Error('write door: a transaction was left open on the books connection; the writes were not run');
      for (const queued of group) queued.reject(open);
      return;
    }
    this.counts.groups += 1;
    this.counts.writes += group.length;
    this.counts.largest = Math.max(this.counts.largest, group.length);
    if (group.length === 1) runAlone(this.db, group[0]!);
    else runGroup(this.db, group);
  }
}

const queues = new WeakMap<Db, WriteQueue>();

function queueOf(db: Db): WriteQueue {
  let queue = queues.get(db);
  if (!queue) {
    queue = new WriteQueue(db);
    queues.set(db, queue);
  }
  return queue;
}

/**
 * Runs `work` in the write door's transaction, committed together with the other writes ready
 * in this turn of the event loop; settles after that commit.
 */
export function committedTogether<T>(db: Db, work: () => T): Promise<T> {
  return queueOf(db).add(work);
}

/** The counts of `db`'s queue so far. */
export function groupCommitCounts(db: Db): GroupCommitCounts {
  return { ...queueOf(db).counts };
}

/** A write with nobody to share with: its own transaction, exactly as without grouping. */
function runAlone(db: Db, queued: Queued): void {
  try {
    queued.resolve(doorTransaction(db, queued.work));
  } catch (error) {
    queued.reject(error);
  }
}

type Ran = { ok: true; value: unknown } | { ok: false; error: unknown };

function runGroup(db: Db, group: Queued[]): void {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    for (const queued of group) queued.reject(error);
    return;
  }
  const ran: Ran[] = [];
  for (const queued of group) {
    ran.push(runInSavepoint(db, queued));
    if (!db.inTransaction) {
      settleLost(group, ran, ran.at(-1)!);
      return;
    }
  }
  try {
    db.exec('COMMIT');
  } catch (error) {
    rollbackQuietly(db);
    const lost = new GroupCommitFailed(error);
    for (const queued of group) queued.reject(lost);
    return;
  }
  group.forEach((queued, index) => settle(queued, ran[index]!));
}

/** doorTransaction inside an open transaction is a SAVEPOINT: a throw rolls back this write only. */
function runInSavepoint(db: Db, queued: Queued): Ran {
  try {
    return { ok: true, value: doorTransaction(db, queued.work) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** SQLite rolled the whole transaction back under the last write: it keeps its own error, the rest are lost. */
function settleLost(group: Queued[], ran: Ran[], last: Ran): void {
  const cause = last.ok ? new Error('the transaction ended inside a write') : last.error;
  const lost = new GroupCommitFailed(cause);
  group.forEach((queued, index) => {
    if (index === ran.length - 1 && !last.ok) queued.reject(last.error);
    else queued.reject(lost);
  });
}

function settle(queued: Queued, ran: Ran): void {
  if (ran.ok) queued.resolve(ran.value);
  else queued.reject(ran.error);
}

function rollbackQuietly(db: Db): void {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // The connection ended the transaction itself; nothing is left to undo.
  }
}
