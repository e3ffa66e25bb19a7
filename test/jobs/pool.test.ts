import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { type JobDefinition, startJobPool } from '../../jobs/pool.js';
import { createLogger } from '../../src/log.js';

const EVERY_SECOND = '* * * * * *';
const ONCE_A_YEAR = '0 0 1 1 *';

/** A logger whose lines the test can read back. */
function capturingLogger(level: 'debug' | 'warn' | 'error'): { log: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const written: string[] = [];
  const log = createLogger(level, { write: (line: string) => void written.push(line) });
  return { log, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** An async job that records how many copies of itself run at once. */
function concurrencyProbe(name: string, schedule: string, runAtStart: boolean, durationMs: number) {
  const seen = { running: 0, maxRunning: 0, started: 0 };
  let markStarted: () => void = () => {};
  const firstStart = new Promise<void>((resolve) => (markStarted = resolve));
  const job: JobDefinition = {
    name,
    schedule,
    runAtStart,
    async run() {
      seen.running += 1;
      seen.started += 1;
      seen.maxRunning = Math.max(seen.maxRunning, seen.running);
      markStarted();
      await sleep(durationMs);
      seen.running -= 1;
    },
  };
  return { job, seen, firstStart };
}

describe('job pool', () => {
  const silent = createLogger('silent');

  it('runs a job at start when asked', async () => {
    let runs = 0;
    const pool = startJobPool([{ name: 'probe', schedule: ONCE_A_YEAR, runAtStart: true, run: () => ++runs }], silent);
    expect(runs).to.equal(1);
    expect(pool.jobs.map((job) => job.name)).to.deep.equal(['probe']);
    await pool.stop();
    expect(runs).to.equal(1);
  });

  it('keeps going when a job throws (the failure is logged, not raised)', async () => {
    const { log, lines } = capturingLogger('error');
    const pool = startJobPool([{ name: 'broken', schedule: ONCE_A_YEAR, runAtStart: true, run: () => { throw new Error('boom'); } }], log);
    await pool.stop();
    expect(lines()).to.have.lengthOf(1);
    expect(lines()[0]).to.include({ job: 'broken', msg: 'job failed' });
  });

  it('never runs two copies of an async job that outlasts its schedule', async () => {
    const probe = concurrencyProbe('slow', EVERY_SECOND, false, 2500);
    const pool = startJobPool([probe.job], silent);
    await probe.firstStart;
    await sleep(2200); // two more ticks fall inside the first run
    await pool.stop();
    expect(probe.seen.maxRunning).to.equal(1);
    expect(probe.seen.started).to.equal(1);
  });

  it('does not start a scheduled run while the run at start is in flight', async () => {
    const probe = concurrencyProbe('slow-start', EVERY_SECOND, true, 2500);
    const pool = startJobPool([probe.job], silent);
    await sleep(2200); // at least two ticks fall inside the run at start
    await pool.stop();
    expect(probe.seen.maxRunning).to.equal(1);
    expect(probe.seen.started).to.equal(1);
  });

  it('logs an async job that rejects as failed, and the process keeps running', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { log, lines } = capturingLogger('error');
      const run = async (): Promise<never> => {
        await sleep(10);
        throw new Error('provider down');
      };
      const pool = startJobPool([{ name: 'rejecting', schedule: ONCE_A_YEAR, runAtStart: true, run }], log);
      await sleep(50);
      await pool.stop();
      await sleep(10); // unhandledRejection is emitted after the microtask queue drains
      expect(unhandled).to.deep.equal([]);
      expect(lines()).to.have.lengthOf(1);
      expect(lines()[0]).to.include({ job: 'rejecting', msg: 'job failed' });
      expect(lines()[0]).to.have.nested.property('err.message', 'provider down');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('stop() ends the schedule of a job that would otherwise run again', async () => {
    let runs = 0;
    const pool = startJobPool([{ name: 'ticker', schedule: EVERY_SECOND, runAtStart: false, run: () => ++runs }], silent);
    while (runs === 0) await sleep(50);
    await pool.stop();
    const runsAtStop = runs;
    await sleep(1500);
    expect(runs).to.equal(runsAtStop);
  });

  it('stop() waits for a job in flight to finish', async () => {
    let finished = false;
    const run = async (): Promise<void> => {
      await sleep(300);
      finished = true;
    };
    const pool = startJobPool([{ name: 'finishing', schedule: ONCE_A_YEAR, runAtStart: true, run }], silent);
    await pool.stop();
    expect(finished).to.equal(true);
  });

  it('stop() gives up on a job that never settles after stopTimeoutMs, with a warning naming it', async () => {
    const { log, lines } = capturingLogger('warn');
    const hung = (): Promise<void> => new Promise<void>(() => {});
    const pool = startJobPool([{ name: 'hung', schedule: ONCE_A_YEAR, runAtStart: true, run: hung }], log, { stopTimeoutMs: 200 });
    const startedMs = Date.now();
    await pool.stop();
    expect(Date.now() - startedMs).to.be.within(190, 1000);
    expect(lines()).to.have.lengthOf(1);
    expect(lines()[0]).to.include({ msg: 'jobs still running at stop' });
    expect(lines()[0]).to.have.deep.property('jobs', ['hung']);
  });
});
