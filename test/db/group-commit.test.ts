import { expect } from 'chai';
import { openDb, type Db } from '../../src/db/connection.js';
import { committedTogether, GROUP_BOUND, GroupCommitFailed, groupCommitCounts } from '../../src/door/group-commit.js';
import { freshDb, type TempDb } from '../support/db.js';

/**
 * Group commit (src/door/group-commit.ts) on a real books file: writes ready in one turn share
 * one transaction, each in its own SAVEPOINT; a refusal costs only its own write; a transaction
 * SQLite rolled back, or a commit that failed, loses the whole group and acknowledges none of it.
 */
describe('Group commit of the write door', () => {
  let books: TempDb;
  let reader: Db;

  beforeEach(async () => {
    books = await freshDb();
    books.db.exec(`
      CREATE TABLE probe_rows (name TEXT NOT NULL PRIMARY KEY);
      CREATE TABLE probe_parents (id TEXT PRIMARY KEY);
      CREATE TABLE probe_children (parent TEXT REFERENCES probe_parents (id) DEFERRABLE INITIALLY DEFERRED);
    `);
    reader = openDb(books.path);
  });
  afterEach(() => {
    reader.close();
    books.close();
  });

  const insert = (name: string) => () => {
    books.db.prepare('INSERT INTO probe_rows (name) VALUES (?)').run(name);
    return name;
  };
  /** What another connection sees committed. */
  const committed = (): string[] => (reader.prepare('SELECT name FROM probe_rows ORDER BY name').all() as { name: string }[]).map((row) => row.name);
  const settled = <T>(promises: Promise<T>[]) => Promise.allSettled(promises);

  it('commits the writes started in one turn as one transaction, answering each after the commit', async () => {
    const before = groupCommitCounts(books.db);
    const seenAtAnswer: string[][] = [];
    const names = Array.from({ length: 10 }, (_, i) => `row-${String(i).padStart(2, '0')}`);
    const results = await Promise.all(names.map((name) => committedTogether(books.db, insert(name)).then((value) => (seenAtAnswer.push(committed()), value))));
    expect(results).to.deep.equal(names);
    const after = groupCommitCounts(books.db);
    expect(after.groups - before.groups).to.equal(1);
    expect(after.writes - before.writes).to.equal(10);
    expect(after.largest).to.equal(10);
    // Every answer came after the commit: another connection already saw all ten rows.
    for (const seen of seenAtAnswer) expect(seen).to.deep.equal(names);
  });

  it('rolls back only the write that throws; it gets its own error and the others commit', async () => {
    const outcomes = await settled([
      committedTogether(books.db, insert('first')),
      committedTogether(books.db, () => {
        insert('refused')();
        throw new Error('refused by its own rule');
      }),
      committedTogether(books.db, insert('third')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).to.equal('refused by its own rule');
    expect(committed()).to.deep.equal(['first', 'third']);
  });

  it('loses the whole group when SQLite rolled the transaction back under one write: the others get GroupCommitFailed, nothing is kept', async () => {
    const outcomes = await settled([
      committedTogether(books.db, insert('before')),
      committedTogether(books.db, () => {
        insert('failing')();
        // What SQLite does on a full disk or an I/O error: the whole transaction is gone.
        books.db.exec('ROLLBACK');
        throw new Error('database or disk is full');
      }),
      committedTogether(books.db, insert('after')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    const [before, failing, after] = outcomes as PromiseRejectedResult[];
    expect(before!.reason).to.be.instanceOf(GroupCommitFailed);
    expect(failing!.reason.message).to.equal('database or disk is full');
    expect(after!.reason).to.be.instanceOf(GroupCommitFailed);
    expect(committed()).to.deep.equal([]);
    expect(books.db.inTransaction).to.equal(false);
    // The connection is usable again at once.
    expect(await committedTogether(books.db, insert('next'))).to.equal('next');
    expect(committed()).to.deep.equal(['next']);
  });

  it('fails every write of the group when the commit fails, and keeps none of it', async () => {
    const outcomes = await settled([
      committedTogether(books.db, insert('one')),
      // Valid inside its savepoint; refused only at COMMIT (a deferred foreign key).
      committedTogether(books.db, () => {
        books.db.prepare("INSERT INTO probe_children (parent) VALUES ('nobody')").run();
        return 'dangling';
      }),
      committedTogether(books.db, insert('three')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes as PromiseRejectedResult[]) {
      expect(outcome.reason).to.be.instanceOf(GroupCommitFailed);
      expect((outcome.reason as GroupCommitFailed).cause).to.have.property('code', 'SQLITE_CONSTRAINT_FOREIGNKEY');
    }
    expect(committed()).to.deep.equal([]);
    expect(books.db.inTransaction).to.equal(false);
    expect(countChildren(reader)).to.equal(0);
  });

  it(`holds at most ${GROUP_BOUND} writes in one transaction; the rest commit in the next group`, async () => {
    const before = groupCommitCounts(books.db);
    const names = Array.from({ length: GROUP_BOUND + 6 }, (_, i) => `row-${String(i).padStart(3, '0')}`);
    await Promise.all(names.map((name) => committedTogether(books.db, insert(name))));
    const after = groupCommitCounts(books.db);
    expect(after.groups - before.groups).to.equal(2);
    expect(after.largest).to.equal(GROUP_BOUND);
    expect(committed()).to.have.length(GROUP_BOUND + 6);
  });

  it('refuses to run writes into a transaction something left open, rather than answer what its owner may roll back', async () => {
    books.db.exec('BEGIN');
    try {
      const outcome = (await settled([committedTogether(books.db, insert('joined'))]))[0] as PromiseRejectedResult;
      expect(outcome.status).to.equal('rejected');
      expect(outcome.reason.message).to.match(/a transaction was left open/);
    } finally {
      books.db.exec('ROLLBACK');
    }
    expect(committed()).to.deep.equal([]);
  });

  it('runs a lone write in a transaction of its own', async () => {
    const before = groupCommitCounts(books.db);
    expect(await committedTogether(books.db, insert('alone'))).to.equal('alone');
    const after = groupCommitCounts(books.db);
    expect(after.groups - before.groups).to.equal(1);
    expect(after.writes - before.writes).to.equal(1);
    expect(committed()).to.deep.equal(['alone']);
  });

  it('answers every write of the group when the transaction cannot even begin (the file is locked by another process)', async () => {
    const holder = openDb(books.path);
    holder.exec('BEGIN IMMEDIATE');
    books.db.pragma('busy_timeout = 0');
    try {
      const outcomes = await settled([committedTogether(books.db, insert('a')), committedTogether(books.db, insert('b'))]);
      expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected']);
      for (const outcome of outcomes as PromiseRejectedResult[]) expect(outcome.reason).to.have.property('code', 'SQLITE_BUSY');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(committed()).to.deep.equal([]);
  });
});

function countChildren(db: Db): number {
  return Number((db.prepare('SELECT count(*) AS n FROM probe_children').get() as { n: bigint }).n);
}
