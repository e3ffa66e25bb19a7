import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RATE_WINDOW_SECONDS } from '../../src/store/counters.js';
import { counterStorePath, type Db, openDb } from '../../src/db/connection.js';
import { CounterStore, FLUSH_INTERVAL_MS, MAX_WINDOWS_IN_MEMORY, RATE_LIMIT_TABLE } from '../../src/store/counters.js';
import { testClock } from '../support/factories.js';

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;

/**
 * The request counters count in memory and write their windows to the counter file in batches
 * (src/store/counters.ts). The file stays the store of record: these tests read it through a
 * connection of their own, as another process would.
 */
describe('request counters: counted in memory, written through in batches', () => {
  let dir: string;
  let booksPath: string;
  let clock: ReturnType<typeof testClock>;
  let store: CounterStore;
  let file: Db;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-counters-'));
    booksPath = join(dir, 'books.sqlite');
    clock = testClock('2026-05-01T09:00:00.000Z');
    store = new CounterStore(booksPath, clock);
    file = openDb(counterStorePath(booksPath), { bigints: false });
  });
  afterEach(() => {
    store.close();
    file.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stored = (key: string) =>
    file.prepare(`SELECT points, expire FROM ${RATE_LIMIT_TABLE} WHERE key = ?`).get(key) as { points: number; expire: number } | undefined;
  const countReads = (subject: string, times: number) => {
    let usage = store.reads.count(subject);
    for (let i = 1; i < times; i += 1) usage = store.reads.count(subject);
    return usage;
  };

  it('counts each request in the window and answers the time left, without writing the file per request', () => {
    expect(store.reads.count('key-1')).to.deep.equal({ used: 1, msBeforeReset: WINDOW_MS });
    clock.advanceMs(90_000);
    expect(store.reads.count('key-1')).to.deep.equal({ used: 2, msBeforeReset: WINDOW_MS - 90_000 });
    expect(stored('read:key-1'), 'nothing written before the batch').to.equal(undefined);

    store.flush();
    expect(stored('read:key-1')).to.deep.equal({ points: 2, expire: Date.parse('2026-05-01T09:10:00.000Z') });
  });

  it('keeps reads, writes and failed authentications apart', () => {
    countReads('same', 3);
    expect(store.writes.count('same').used).to.equal(1);
    expect(store.authFailures.count('same').used).to.equal(1);
    store.flush();
    expect(stored('read:same')?.points).to.equal(3);
    expect(stored('write:same')?.points).to.equal(1);
    expect(stored('authfail:same')?.points).to.equal(1);
  });

  it('adds each batch to the stored window rather than replacing it', () => {
    countReads('key-1', 4);
    store.flush();
    countReads('key-1', 3);
    store.flush();
    expect(stored('read:key-1')?.points).to.equal(7);
  });

  it('writes the batch by itself shortly after counting', async () => {
    countReads('key-1', 5);
    await sleep(FLUSH_INTERVAL_MS * 2 + 100);
    expect(stored('read:key-1')?.points).to.equal(5);
  });

  it('keeps the count across a restart: a new store reads the window from the file', () => {
    countReads('key-1', 10);
    store.close();
    clock.advanceMs(60_000);
    store = new CounterStore(booksPath, clock);
    expect(store.reads.count('key-1')).to.deep.equal({ used: 11, msBeforeReset: WINDOW_MS - 60_000 });
  });

  it('starts a fresh window once the last one ended, in memory and in the file', () => {
    countReads('key-1', 600);
    clock.advanceMs(WINDOW_MS);
    expect(store.reads.count('key-1')).to.deep.equal({ used: 1, msBeforeReset: WINDOW_MS });
    store.flush();
    expect(stored('read:key-1')).to.deep.equal({ points: 1, expire: Date.parse('2026-05-01T09:20:00.000Z') });
  });

  it('ignores an ended window left in the file', () => {
    countReads('key-1', 50);
    store.close();
    clock.advanceMs(WINDOW_MS + 1);
    store = new CounterStore(booksPath, clock);
    expect(store.reads.count('key-1').used).to.equal(1);
  });

  it('keeps the counts in memory while the file is busy, reports the failure once, and writes them once it is free', async () => {
    const failures: unknown[] = [];
    store.close();
    store = new CounterStore(booksPath, clock, (error) => failures.push(error));
    countReads('key-1', 3);
    file.exec('BEGIN IMMEDIATE');
    try {
      await sleep(FLUSH_INTERVAL_MS * 4);
      expect(failures).to.have.length(1);
      expect(String(failures[0])).to.match(/locked|busy/i);
      expect(stored('read:key-1'), 'nothing written while busy').to.equal(undefined);
    } finally {
      file.exec('ROLLBACK');
    }
    countReads('key-1', 2);
    await sleep(FLUSH_INTERVAL_MS * 8);
    expect(stored('read:key-1')?.points).to.equal(5);
    expect(failures).to.have.length(1);
  });

  it('closes the file even when the last write fails, and says why', () => {
    countReads('key-1', 4);
    file.pragma('busy_timeout = 0');
    file.exec('BEGIN IMMEDIATE');
    try {
      expect(() => store.close()).to.throw(/locked|busy/i);
    } finally {
      file.exec('ROLLBACK');
    }
    expect(() => store.size(), 'the file is closed all the same').to.throw(/not open/);
  });

  it('goes on counting in memory after close, without writing', () => {
    countReads('key-1', 2);
    store.close();
    expect(store.reads.count('key-1').used).to.equal(3);
    expect(store.reads.count('key-new').used).to.equal(1);
    expect(stored('read:key-1')?.points).to.equal(2);
  });

  it(`keeps at most ${MAX_WINDOWS_IN_MEMORY.toLocaleString('en-US')} windows in memory; one let go is read back from the file`, () => {
    for (let i = 0; i < MAX_WINDOWS_IN_MEMORY; i += 1) store.authFailures.count(`10.0.${i >> 8}.${i & 255}`);
    store.flush();
    expect(store.windowsInMemory()).to.equal(MAX_WINDOWS_IN_MEMORY);
    store.authFailures.count('192.0.2.1');
    expect(store.windowsInMemory()).to.be.at.most(MAX_WINDOWS_IN_MEMORY);
    expect(store.authFailures.count('10.0.0.0').used, 'the first address, counted once before').to.equal(2);
  });

  it('writes what is counted when closed', () => {
    countReads('key-1', 8);
    store.close();
    expect(stored('read:key-1')?.points).to.equal(8);
  });
});
