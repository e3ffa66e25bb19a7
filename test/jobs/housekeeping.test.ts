import { expect } from 'chai';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { runHousekeeping } from '../../src/jobs/housekeeping.js';
import { IDEMPOTENCY_WINDOW_MS, storeAnswer } from '../../src/store/idempotency.js';
import { inTransaction, openDb } from '../../src/db/connection.js';
import { CounterStore } from '../../src/store/counters.js';
import { freshDb, type TempDb } from '../support/db.js';
import { buildTenant, buildKey, testClock } from '../support/factories.js';

describe('housekeeping job', () => {
  let temp: TempDb;
  let counters: CounterStore;
  const clock = testClock('2026-03-15T12:00:00.000Z');

  before(async () => {
    temp = await freshDb();
    counters = new CounterStore(join(temp.dir, 'books.sqlite'), clock);
  });
  after(() => {
    counters.close();
    temp.close();
  });

  const records = (): number => Number((temp.db.prepare('SELECT count(*) AS n FROM idempotency_records').get() as { n: bigint }).n);

  it('removes idempotency records past their 24-hour window and keeps the rest', () => {
    const account = buildTenant(temp.db, clock);
    const key = buildKey(temp.db, clock, { tenantId: account.id });
    const claim = (value: string) => ({ apiKeyId: key.id, key: value, requestHash: 'h' });
    const store = (value: string) => inTransaction(temp.db, () => storeAnswer(temp.db, clock, claim(value), { status: 201, json: '{}' }));
    store('early');
    clock.advanceMs(60 * 60 * 1000);
    store('later');
    expect(records()).to.equal(2);

    clock.set(new Date(Date.parse('2026-03-15T12:00:00.000Z') + IDEMPOTENCY_WINDOW_MS));
    const result = runHousekeeping({ db: temp.db, clock, counters });
    expect(result.idempotencyRecords).to.equal(1);
    expect(records()).to.equal(1);
    const left = temp.db.prepare('SELECT idempotency_key FROM idempotency_records').get() as { idempotency_key: string };
    expect(left.idempotency_key).to.equal('later');
  });

  it('removes rate-limit windows that have ended and keeps the current ones', async () => {
    clock.set('2026-03-16T00:00:00.000Z');
    counters.reads.count('key-a');
    counters.writes.count('key-a');
    clock.advanceMs(5 * 60 * 1000);
    counters.authFailures.count('127.0.0.1');
    expect(counters.size()).to.equal(3);

    clock.advanceMs(6 * 60 * 1000); // the first two windows ended a minute ago
    expect(runHousekeeping({ db: temp.db, clock, counters }).counterWindows).to.equal(2);
    expect(counters.size()).to.equal(1);
    expect(counters.authFailures.count('127.0.0.1').used).to.equal(2);
  });

  it('checkpoints and truncates a write-ahead log past its limit, and leaves a small one alone', () => {
    // A reader holding a snapshot keeps SQLite's own checkpoints from resetting the log.
    const reader = openDb(temp.db.name, { synchronous: 'normal' });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM tenants').get();
      for (let n = 0; n < 50; n += 1) buildTenant(temp.db, clock);
      reader.exec('COMMIT');
    } finally {
      reader.close();
    }
    // PRAGMA optimize may write planner statistics the first time it sees a table: let it settle.
    runHousekeeping({ db: temp.db, clock, counters, walLimitBytes: Number.MAX_SAFE_INTEGER });
    const walBytes = statSync(`${temp.db.name}-wal`).size;
    expect(walBytes).to.be.greaterThan(4096);

    const untouched = runHousekeeping({ db: temp.db, clock, counters, walLimitBytes: walBytes + 1 });
    expect(untouched).to.include({ walBytes, walCheckpointed: false });
    expect(statSync(`${temp.db.name}-wal`).size).to.equal(walBytes);

    const truncated = runHousekeeping({ db: temp.db, clock, counters, walLimitBytes: 4096 });
    expect(truncated).to.include({ walBytes, walCheckpointed: true });
    expect(statSync(`${temp.db.name}-wal`).size).to.equal(0);
  });
});
