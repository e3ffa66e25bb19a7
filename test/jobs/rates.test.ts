import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { type JobDefinition, runJobOnce, startJobPool } from '../../src/jobs/pool.js';
import { RatesJobError, type RatesContext, type RatesResult, runRatesJob } from '../../src/jobs/rates.js';
import { rateOnOrBefore, setRate } from '../../src/books/fx.js';
import { type FixedClock, fixedClock } from '../../src/clock.js';
import { addDays } from '../../src/dates.js';
import { lookUpRate } from '../../src/rates/look-up.js';
import type { RateProvider } from '../../src/rates/provider.js';
import type { RateProviderProblem } from '../../src/rates/provider-error.js';
import { storeQuotedRates } from '../../src/rates/store.js';
import { freshDb, type TempDb } from '../support/db.js';
import { captureLog } from '../support/log-capture.js';
import { closedPortUrl, ecbBody, type FakeProvider, frankfurterBody, type ProviderReply, startFakeProvider, storingAs } from '../support/rate-provider.js';

/**
 * The exchange-rate job against a real HTTP server on loopback speaking each provider's
 * format, with a fixed clock. In March 2026 the 13th is a Friday and the 15th a Sunday.
 */

/**
 * Each day's Frankfurter quote per 1 EUR: USD 1.MMDD1 (so every day differs), CAD 1.25, GBP 0.8,
 * MXN 20, chosen so USD per unit comes out exact: EUR = the USD quote, CAD = x 0.8,
 * GBP = x 1.25, MXN = / 20.
 */
function dayQuote(date: string): Record<string, string> {
  return { USD: `1.${date.slice(5, 7)}${date.slice(8, 10)}1`, CAD: '1.25', GBP: '0.8', MXN: '20' };
}

const isWeekend = (date: string) => [0, 6].includes(new Date(`${date}T00:00:00.000Z`).getUTCDay());

/**
 * Frankfurter as it behaves: the day asked for, or for a weekend or holiday the business day
 * before it (its own date in the answer). `override` changes one day's answer.
 */
function frankfurterDays(options: { holidays?: string[]; override?: (date: string) => ProviderReply | undefined } = {}) {
  return (path: string): ProviderReply => {
    const asked = /^\/(\d{4}-\d{2}-\d{2})\?/.exec(path)?.[1];
    if (!asked) return { status: 404, body: '{"message":"not found"}' };
    const overridden = options.override?.(asked);
    if (overridden) return overridden;
    let quoteDate = asked;
    while (isWeekend(quoteDate) || options.holidays?.includes(quoteDate)) quoteDate = addDays(quoteDate, -1);
    return { body: frankfurterBody(quoteDate, dayQuote(quoteDate)) };
  };
}

const request = (date: string) => `GET /${date}?from=EUR&to=USD,CAD,GBP,MXN`;

describe('exchange-rate job (runRatesJob)', () => {
  let fake: FakeProvider;
  let temp: TempDb;
  let clock: FixedClock;
  let logged: Record<string, unknown>[];
  let context: RatesContext;

  before(async () => {
    fake = await startFakeProvider();
  });
  after(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    temp = await freshDb();
    clock = fixedClock('2026-03-15T12:00:00.000Z');
    fake.requests.length = 0;
    fake.reply = frankfurterDays();
    const captured = captureLog('warn');
    logged = captured.lines;
    context = { db: temp.db, clock, provider: { kind: 'frankfurter', url: fake.url }, log: captured.log, timeoutMs: 2000 };
  });
  afterEach(() => {
    temp.close();
  });

  const rows = () =>
    temp.db.prepare('SELECT currency, rate_date AS date, usd_per_unit AS usdPerUnit, source FROM exchange_rates ORDER BY rate_date, currency').all() as {
      currency: string;
      date: string;
      usdPerUnit: string;
      source: string;
    }[];
  const rowCount = () => rows().length;
  const datesStored = () => [...new Set(rows().map((row) => row.date))];
  /** Stores a day's quote as an earlier run would have. */
  const storedDay = (date: string) =>
    storeQuotedRates(temp.db, clock, CLI_ACTOR, 'frankfurter', {
      date,
      rates: [
        { currency: 'CAD', usdPerUnit: '0.8' },
        { currency: 'EUR', usdPerUnit: '1' },
        { currency: 'GBP', usdPerUnit: '1.25' },
        { currency: 'MXN', usdPerUnit: '0.05' },
      ],
    });

  async function runFailing(): Promise<RatesJobError> {
    try {
      await runRatesJob(context);
    } catch (error) {
      expect(error).to.be.instanceOf(RatesJobError);
      return error as RatesJobError;
    }
    expect.fail('expected the run to reject with a RatesJobError');
  }

  const result = (counts: Partial<RatesResult>): RatesResult => ({ requested: 0, stored: 0, kept: 0, refused: 0, failed: 0, upToDate: false, ...counts });

  describe('backfill', () => {
    it('first run: asks Frankfurter once per business day of the last 31 days, oldest first, and stores four rates for each', async () => {
      // Sunday 2026-03-15: the 31 days from Friday 2026-02-13 hold 21 business days.
      const businessDays = [
        '2026-02-13',
        ...['16', '17', '18', '19', '20', '23', '24', '25', '26', '27'].map((day) => `2026-02-${day}`),
        ...['02', '03', '04', '05', '06', '09', '10', '11', '12', '13'].map((day) => `2026-03-${day}`),
      ];
      expect(await runRatesJob(context)).to.deep.equal(result({ requested: 21, stored: 84 }));
      expect(fake.requests).to.deep.equal(businessDays.map(request));
      expect(datesStored()).to.deep.equal(businessDays);
      expect(rowCount()).to.equal(84);
      expect(rows().filter((row) => row.date === '2026-03-13')).to.deep.equal([
        { currency: 'CAD', date: '2026-03-13', usdPerUnit: '0.825048', source: 'frankfurter' }, // 1.03131 / 1.25
        { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.03131', source: 'frankfurter' },
        { currency: 'GBP', date: '2026-03-13', usdPerUnit: '1.2891375', source: 'frankfurter' }, // 1.03131 / 0.8
        { currency: 'MXN', date: '2026-03-13', usdPerUnit: '0.0515655', source: 'frankfurter' }, // 1.03131 / 20
      ]);
      expect(logged).to.deep.equal([]);
    });

    it('second run: up to date, asks nothing and stores nothing', async () => {
      await runRatesJob(context);
      fake.requests.length = 0;
      clock.advanceMs(3 * 3_600_000);
      expect(await runRatesJob(context)).to.deep.equal(result({ upToDate: true }));
      expect(fake.requests).to.deep.equal([]);
      expect(rowCount()).to.equal(84);
    });

    it('a weekend uses Friday\'s rate; on Monday only Monday is asked for', async () => {
      await runRatesJob(context);
      expect(rateOnOrBefore(temp.db, 'GBP', '2026-03-14')).to.deep.equal({ currency: 'GBP', date: '2026-03-13', usdPerUnit: '1.2891375', source: 'frankfurter' });
      expect(rateOnOrBefore(temp.db, 'GBP', '2026-03-15')?.date).to.equal('2026-03-13');
      fake.requests.length = 0;
      clock.set('2026-03-16T18:00:00.000Z');
      expect(await runRatesJob(context)).to.deep.equal(result({ requested: 1, stored: 4 }));
      expect(fake.requests).to.deep.equal([request('2026-03-16')]);
    });

    it('fills only from the day after the oldest of the currencies\' latest rates', async () => {
      storedDay('2026-03-11');
      setRate(temp.db, clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-12', usdPerUnit: '1.09' });
      // EUR has the 12th, the others only the 11th: the 12th (for those three) and the 13th are asked.
      expect(await runRatesJob(context)).to.deep.equal(result({ requested: 2, stored: 7, kept: 1 }));
      expect(fake.requests).to.deep.equal([request('2026-03-12'), request('2026-03-13')]);
    });

    it('a holiday answered with the day before is stored once, under that day\'s own date', async () => {
      storedDay('2026-03-10');
      clock.set('2026-03-13T18:00:00.000Z');
      fake.reply = frankfurterDays({ holidays: ['2026-03-12'] });
      expect(await runRatesJob(context)).to.deep.equal(result({ requested: 3, stored: 8 }));
      expect(fake.requests).to.deep.equal(['2026-03-11', '2026-03-12', '2026-03-13'].map(request));
      expect(datesStored()).to.deep.equal(['2026-03-10', '2026-03-11', '2026-03-13']);
      expect(rowCount()).to.equal(12);
      expect(rateOnOrBefore(temp.db, 'EUR', '2026-03-12')).to.deep.equal({ currency: 'EUR', date: '2026-03-11', usdPerUnit: '1.03111', source: 'frankfurter' });
      expect(await runRatesJob(context)).to.deep.equal(result({ upToDate: true }));
    });

    it('ECB: one request for the daily file; EUR-based quotes become exact USD per unit', async () => {
      context.provider = { kind: 'ecb', url: `${fake.url}/eurofxref-daily.xml` };
      fake.reply = {
        contentType: 'text/xml',
        body: ecbBody('2026-03-13', { USD: '1.0812', JPY: '161.52', CAD: '1.4591', GBP: '0.85730', MXN: '19.6543' }),
      };
      expect(await runRatesJob(context)).to.deep.equal(result({ requested: 1, stored: 4 }));
      expect(fake.requests).to.deep.equal(['GET /eurofxref-daily.xml']);
      expect(rows()).to.deep.equal([
        { currency: 'CAD', date: '2026-03-13', usdPerUnit: '0.7410047289', source: 'ecb' }, // 1.0812 / 1.4591 = 0.74100472894...
        { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.0812', source: 'ecb' },
        { currency: 'GBP', date: '2026-03-13', usdPerUnit: '1.2611687857', source: 'ecb' }, // 1.0812 / 0.8573 = 1.26116878572...
        { currency: 'MXN', date: '2026-03-13', usdPerUnit: '0.0550108628', source: 'ecb' }, // 1.0812 / 19.6543 = 0.05501086276...
      ]);
      fake.requests.length = 0;
      expect(await runRatesJob(context)).to.deep.equal(result({ upToDate: true }));
      expect(fake.requests).to.deep.equal([]);
    });

    it('never overwrites a rate set by hand', async () => {
      storedDay('2026-03-12');
      setRate(temp.db, clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.09' });
      clock.set('2026-03-13T18:00:00.000Z');
      expect(await runRatesJob(context)).to.deep.equal(result({ requested: 1, stored: 3, kept: 1 }));
      expect(rows().filter((row) => row.date === '2026-03-13').map((row) => [row.currency, row.usdPerUnit, row.source])).to.deep.equal([
        ['CAD', '0.825048', 'frankfurter'],
        ['EUR', '1.09', 'manual'],
        ['GBP', '1.2891375', 'frankfurter'],
        ['MXN', '0.0515655', 'frankfurter'],
      ]);
    });
  });

  describe('a provider answer that is no good is logged, stores nothing, and fails the run', () => {
    const good = frankfurterBody('2026-03-13', dayQuote('2026-03-13'));
    // A provider that cannot be reached (down, too slow) is the next describe's: offline is normal.
    const cases: { name: string; reply: ProviderReply; ecb?: boolean; problem: RateProviderProblem; message: string }[] = [
      { name: 'malformed JSON', reply: { body: '{"amount":1.0,"base":"EUR","date":"2026-03-13","rates":{' }, problem: 'malformed', message: 'frankfurter rate provider: answer is not JSON' },
      {
        name: 'malformed XML',
        ecb: true,
        reply: { contentType: 'text/xml', body: "<gesmes:Envelope><Cube><Cube time='2026-03-13'></Cube></gesmes:Envelope>" },
        problem: 'malformed',
        message: 'ecb rate provider: answer is not well-formed XML (</gesmes:Envelope> does not close <Cube>)',
      },
      {
        name: 'a huge answer',
        reply: { body: frankfurterBody('2026-03-13', dayQuote('2026-03-13'), `,"padding":"${'x'.repeat(300_000)}"`) },
        problem: 'too_large',
        message: 'frankfurter rate provider: answer is larger than 262144 bytes',
      },
      { name: 'HTTP 500', reply: { status: 500, body: '{"message":"internal"}' }, problem: 'http_status', message: 'frankfurter rate provider: answered HTTP 500' },
      {
        name: 'a missing currency',
        reply: { body: frankfurterBody('2026-03-13', { USD: '1.0812', CAD: '1.4591', GBP: '0.8573' }) },
        problem: 'missing_currency',
        message: 'frankfurter rate provider: the answer has no MXN rate',
      },
      { name: 'a zero quote', reply: { body: frankfurterBody('2026-03-13', { ...dayQuote('2026-03-13'), MXN: '0' }) }, problem: 'bad_rate', message: 'frankfurter rate provider: MXN rate 0 is zero' },
      { name: 'a negative quote', reply: { body: frankfurterBody('2026-03-13', { ...dayQuote('2026-03-13'), CAD: '-1.25' }) }, problem: 'bad_rate', message: 'frankfurter rate provider: CAD rate -1.25 is negative' },
    ];

    for (const failure of cases) {
      it(`${failure.name}: then a good answer is stored by the next run`, async () => {
        // Thursday is stored; Friday 2026-03-13 is the one day to ask for.
        storedDay('2026-03-12');
        clock.set('2026-03-13T18:00:00.000Z');
        const provider: RateProvider = failure.ecb ? { kind: 'ecb', url: `${fake.url}/eurofxref-daily.xml` } : { kind: 'frankfurter', url: fake.url };
        context.provider = provider;
        fake.reply = failure.reply;
        const asked = failure.ecb ? 'latest' : '2026-03-13';

        const error = await runFailing();
        expect(error.message).to.equal(`1 of 1 rate requests failed: ${asked}: ${failure.message}`);
        expect(error.result).to.deep.equal(result({ requested: 1, failed: 1 }));
        expect(rowCount()).to.equal(4);
        expect(logged).to.have.length(1);
        expect(logged[0]).to.include({ level: 40, msg: 'exchange-rate request failed', provider: provider.kind, date: asked, problem: failure.problem, error: failure.message });
        expect(fake.requests).to.deep.equal([failure.ecb ? 'GET /eurofxref-daily.xml' : request('2026-03-13')]);

        // The same process carries on: the next run, with the provider well again, stores Friday.
        context.provider = failure.ecb ? provider : { kind: 'frankfurter', url: fake.url };
        fake.reply = failure.ecb ? { contentType: 'text/xml', body: ecbBody('2026-03-13', { USD: '1.2', CAD: '1.5', GBP: '0.8', MXN: '24' }) } : { body: good };
        expect(await runRatesJob(context)).to.deep.equal(result({ requested: 1, stored: 4 }));
        expect(rateOnOrBefore(temp.db, 'MXN', '2026-03-13')).to.include({ date: '2026-03-13', usdPerUnit: failure.ecb ? '0.05' : '0.0515655' });
      });
    }

    it('stores the days that did answer and names the one that did not', async () => {
      storedDay('2026-03-10');
      clock.set('2026-03-13T18:00:00.000Z');
      fake.reply = frankfurterDays({ override: (date) => (date === '2026-03-12' ? { status: 503 } : undefined) });
      const error = await runFailing();
      expect(error.message).to.equal('1 of 3 rate requests failed: 2026-03-12: frankfurter rate provider: answered HTTP 503');
      expect(error.result).to.deep.equal(result({ requested: 3, stored: 8, failed: 1 }));
      expect(datesStored()).to.deep.equal(['2026-03-10', '2026-03-11', '2026-03-13']);
    });

    it('gives up after three failures in a row, leaving the rest for the retry', async () => {
      fake.reply = { status: 500 };
      const error = await runFailing();
      expect(error.message).to.equal(
        '3 of 3 rate requests failed (stopped after 3 failures in a row; 18 more days not asked): ' +
          '2026-02-13: frankfurter rate provider: answered HTTP 500; 2026-02-16: frankfurter rate provider: answered HTTP 500; 2026-02-17: frankfurter rate provider: answered HTTP 500',
      );
      expect(error.result).to.deep.equal(result({ requested: 3, failed: 3 }));
      expect(fake.requests).to.deep.equal(['2026-02-13', '2026-02-16', '2026-02-17'].map(request));
      expect(rowCount()).to.equal(0);
      expect(logged.map((line) => line.date)).to.deep.equal(['2026-02-13', '2026-02-16', '2026-02-17']);
    });
  });

  describe('a provider that cannot be reached: offline is normal, one warning line a run', () => {
    const OFF = 'If this machine is offline on purpose, DAYBOOK_JOB_RATES=off turns the rates job off; DAYBOOK_FX_PROVIDER_URL points it at another provider.';
    const ONCE_A_YEAR = '0 0 1 1 *';
    /** The server logs at info unless told otherwise: what an operator sees. */
    let operatorLog: ReturnType<typeof captureLog>;

    beforeEach(() => {
      operatorLog = captureLog('info');
      context.log = operatorLog.log;
    });

    /** The rates job as the pool and `daybook jobs run` know it; `starts` gets the time each run began. */
    function ratesJob(retry?: JobDefinition['retry']): { job: JobDefinition; starts: number[] } {
      const starts: number[] = [];
      const run = () => {
        starts.push(Date.now());
        return runRatesJob(context);
      };
      return { job: { name: 'rates', schedule: ONCE_A_YEAR, runAtStart: true, run, ...(retry ? { retry } : {}) }, starts };
    }

    async function until(done: () => boolean, what: string): Promise<void> {
      for (let waitedMs = 0; !done(); waitedMs += 10) {
        if (waitedMs > 10_000) expect.fail(`still waiting for ${what}`);
        await sleep(10);
      }
    }

    /** A line carries no stack: neither an err object nor stack frames anywhere in it. */
    function expectNoStack(line: Record<string, unknown>): void {
      expect(line).to.not.have.any.keys('err', 'stack');
      expect(JSON.stringify(line)).to.not.match(/\n\s+at /);
    }

    it('a server that is down, from start through two retries: one warning line a run, no stack, naming the provider and DAYBOOK_JOB_RATES=off; the retries back off', async () => {
      const url = await closedPortUrl();
      context.provider = { kind: 'frankfurter', url };
      const { job, starts } = ratesJob({ firstDelayMs: 40, maxDelayMs: 1000 });
      const pool = startJobPool([job], operatorLog.log);
      try {
        await until(() => operatorLog.lines.length >= 3, 'three runs to be logged');
      } finally {
        await pool.stop();
      }

      // Sunday the 15th, nothing stored: 21 business days to fill, and each run stops after three failures in a row.
      const failed = { requested: 3, stored: 0, kept: 0, refused: 0, failed: 3, upToDate: false };
      const message = `exchange rates not fetched: the frankfurter rate provider at ${url} cannot be reached, request failed (ECONNREFUSED). ${OFF}`;
      expect(operatorLog.lines.map(({ level, job: name, outcome, provider, problem, result: counts, retryInMs, msg }) => ({ level, name, outcome, provider, problem, counts, retryInMs, msg }))).to.deep.equal(
        [40, 80, 160].map((retryInMs) => ({ level: 40, name: 'rates', outcome: 'failed', provider: 'frankfurter', problem: 'unreachable', counts: failed, retryInMs, msg: message })),
      );
      for (const line of operatorLog.lines) expectNoStack(line);
      expect(starts).to.have.length(3);
      expect(starts[1]! - starts[0]!).to.be.at.least(35);
      expect(starts[2]! - starts[1]!).to.be.at.least(75);
      expect(rowCount()).to.equal(0);
    });

    /** undici's rejection when the name does not resolve, as on a machine with no network. */
    const noDns: typeof fetch = () =>
      Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND api.frankfurter.app'), { code: 'ENOTFOUND' }) }));

    const unreachable: { name: string; set: () => Promise<RateProvider>; problem: RateProviderProblem; at: (provider: RateProvider) => string; detail: string }[] = [
      {
        name: 'a name that does not resolve (ENOTFOUND, the issue\'s machine without internet)',
        set: async () => {
          context.fetch = noDns;
          return { kind: 'frankfurter', url: 'https://api.frankfurter.app' };
        },
        problem: 'unreachable',
        at: () => 'https://api.frankfurter.app',
        detail: 'request failed (ENOTFOUND)',
      },
      {
        name: 'no answer within the timeout',
        set: async () => {
          fake.reply = { hang: 'before-headers' };
          context.timeoutMs = 100;
          return { kind: 'frankfurter', url: fake.url };
        },
        problem: 'timeout',
        at: (provider) => provider.url,
        detail: 'no complete answer within 100 ms',
      },
      {
        name: 'half an answer, then nothing within the timeout',
        set: async () => {
          fake.reply = { hang: 'mid-body', body: frankfurterBody('2026-03-13', dayQuote('2026-03-13')) };
          context.timeoutMs = 100;
          return { kind: 'frankfurter', url: fake.url };
        },
        problem: 'timeout',
        at: (provider) => provider.url,
        detail: 'no complete answer within 100 ms',
      },
      {
        name: 'the ECB\'s file at an address nobody listens on, a key in its query (shown as ***)',
        set: async () => ({ kind: 'ecb', url: `${await closedPortUrl()}/eurofxref-daily.xml?api_key=s3cret` }),
        problem: 'unreachable',
        at: (provider) => provider.url.replace('s3cret', '***'),
        detail: 'request failed (ECONNREFUSED)',
      },
    ];

    for (const failure of unreachable) {
      it(`${failure.name}: one warning line, no stack, naming the settings; then a good answer is stored by the next run`, async () => {
        // Thursday is stored; Friday 2026-03-13 is the one day to ask for.
        storedDay('2026-03-12');
        clock.set('2026-03-13T18:00:00.000Z');
        const provider = await failure.set();
        context.provider = provider;
        const message = `exchange rates not fetched: the ${provider.kind} rate provider at ${failure.at(provider)} cannot be reached, ${failure.detail}. ${OFF}`;

        // As `daybook jobs run rates` runs it: no retry to announce.
        const outcome = await runJobOnce(ratesJob().job, operatorLog.log, undefined);
        expect(operatorLog.lines.map((line) => line.msg)).to.deep.equal([message]);
        expect(operatorLog.lines[0]).to.deep.include({
          level: 40,
          job: 'rates',
          outcome: 'failed',
          provider: provider.kind,
          problem: failure.problem,
          result: result({ requested: 1, failed: 1 }),
          msg: message,
        });
        expect(operatorLog.lines[0]).to.not.have.property('retryInMs');
        expectNoStack(operatorLog.lines[0]!);
        expect(outcome).to.deep.include({ ok: false, outage: true, error: message });
        expect(rowCount()).to.equal(4);

        // The machine comes back online: the next run stores Friday.
        delete context.fetch;
        context.timeoutMs = 2000;
        context.provider = provider.kind === 'ecb' ? { kind: 'ecb', url: `${fake.url}/eurofxref-daily.xml` } : { kind: 'frankfurter', url: fake.url };
        fake.reply = provider.kind === 'ecb' ? { contentType: 'text/xml', body: ecbBody('2026-03-13', { USD: '1.2', CAD: '1.5', GBP: '0.8', MXN: '24' }) } : { body: frankfurterBody('2026-03-13', dayQuote('2026-03-13')) };
        expect(await runRatesJob(context)).to.deep.equal(result({ requested: 1, stored: 4 }));
      });
    }

    it('a provider that stops answering part way: what did answer stays stored, and the line says how much', async () => {
      storedDay('2026-03-10');
      clock.set('2026-03-13T18:00:00.000Z');
      fake.reply = frankfurterDays({ override: (date) => (date >= '2026-03-12' ? { reset: true } : undefined) });
      const outcome = await runJobOnce(ratesJob().job, operatorLog.log, undefined);
      expect(operatorLog.lines.map(({ level, result: counts, msg }) => ({ level, counts, msg }))).to.deep.equal([
        {
          level: 40,
          counts: result({ requested: 3, stored: 4, failed: 2 }),
          msg: `4 exchange rates fetched, the rest not: the frankfurter rate provider at ${fake.url} cannot be reached, request failed (UND_ERR_SOCKET). ${OFF}`,
        },
      ]);
      expect(outcome).to.deep.include({ ok: false, outage: true });
      expect(datesStored()).to.deep.equal(['2026-03-10', '2026-03-11']);
    });

    it('a provider out of reach for one day but answering garbage for another is no outage: logged at error level with its stack, as before', async () => {
      storedDay('2026-03-11');
      clock.set('2026-03-13T18:00:00.000Z');
      fake.reply = frankfurterDays({ override: (date) => (date === '2026-03-12' ? { reset: true } : { body: '{"rates":' }) });
      const outcome = await runJobOnce(ratesJob().job, operatorLog.log, undefined);
      // The unreachable day is named in the failure's summary, not in a warning of its own.
      expect(operatorLog.lines.map(({ level, msg, date }) => ({ level, msg, date }))).to.deep.equal([
        { level: 40, msg: 'exchange-rate request failed', date: '2026-03-13' },
        { level: 50, msg: 'job failed', date: undefined },
      ]);
      expect(operatorLog.lines[1]).to.have.nested.property('err.type', 'RatesJobError');
      expect(operatorLog.lines[1]).to.have.nested.property('err.stack').that.matches(/^RatesJobError: 2 of 2 rate requests failed: 2026-03-12: frankfurter rate provider: request failed \(UND_ERR_SOCKET\)/);
      expect(outcome).to.deep.include({ ok: false, outage: false });
    });

    it('a provider answering malformed JSON still fails at error level, with the details and the stack; the retry still backs off', async () => {
      fake.reply = { body: '{"amount":1.0,"base":"EUR","date":"2026-03-13","rates":{' };
      const { job } = ratesJob({ firstDelayMs: 60_000, maxDelayMs: 3_600_000 });
      const pool = startJobPool([job], operatorLog.log);
      try {
        await until(() => operatorLog.lines.some((line) => line.msg === 'job will be retried'), 'the retry to be planned');
      } finally {
        await pool.stop();
      }
      const days = ['2026-02-13', '2026-02-16', '2026-02-17'];
      expect(operatorLog.lines.map(({ level, msg, date, problem, retryInMs }) => ({ level, msg, date, problem, retryInMs }))).to.deep.equal([
        ...days.map((date) => ({ level: 40, msg: 'exchange-rate request failed', date, problem: 'malformed', retryInMs: undefined })),
        { level: 50, msg: 'job failed', date: undefined, problem: undefined, retryInMs: undefined },
        { level: 40, msg: 'job will be retried', date: undefined, problem: undefined, retryInMs: 60_000 },
      ]);
      const failedLine = operatorLog.lines[3]!;
      expect(failedLine).to.have.nested.property('err.type', 'RatesJobError');
      expect(failedLine).to.have.nested.property('err.message').that.matches(/^3 of 3 rate requests failed \(stopped after 3 failures in a row; 18 more days not asked\): 2026-02-13: frankfurter rate provider: answer is not JSON/);
      expect(failedLine).to.have.nested.property('err.stack').that.matches(/\n\s+at /);
    });
  });

  describe('refused rates', () => {
    it('a rate over 100 times, or under 1/100 of, the day before is refused; the quote\'s other currencies are stored', async () => {
      storedDay('2026-03-12'); // MXN 0.05, GBP 1.25
      clock.set('2026-03-13T18:00:00.000Z');
      // Per 1 EUR: MXN 0.01 makes USD per MXN 103.131 (2,062x 0.05); GBP 100 makes it 0.0103131 (under 1.25 / 100).
      fake.reply = { body: frankfurterBody('2026-03-13', { ...dayQuote('2026-03-13'), MXN: '0.01', GBP: '100' }) };
      const error = await runFailing();
      expect(error.message).to.equal(
        '2 rates refused: GBP rate 0.0103131 for 2026-03-13 is less than 1/100 of the 1.25 stored for 2026-03-12; ' +
          'MXN rate 103.131 for 2026-03-13 is more than 100 times the 0.05 stored for 2026-03-12',
      );
      expect(error.result).to.deep.equal(result({ requested: 1, stored: 2, refused: 2 }));
      expect(rows().filter((row) => row.date === '2026-03-13').map((row) => [row.currency, row.usdPerUnit])).to.deep.equal([
        ['CAD', '0.825048'],
        ['EUR', '1.03131'],
      ]);
      expect(rateOnOrBefore(temp.db, 'MXN', '2026-03-13')).to.include({ date: '2026-03-12', usdPerUnit: '0.05' });
      expect(logged.map(({ level, currency, date, usdPerUnit, previous, reason }) => ({ level, currency, date, usdPerUnit, previous, reason }))).to.deep.equal([
        { level: 40, currency: 'GBP', date: '2026-03-13', usdPerUnit: '0.0103131', previous: { date: '2026-03-12', usdPerUnit: '1.25' }, reason: 'under_hundredth_of_previous' },
        { level: 40, currency: 'MXN', date: '2026-03-13', usdPerUnit: '103.131', previous: { date: '2026-03-12', usdPerUnit: '0.05' }, reason: 'over_100x_previous' },
      ]);
    });
  });
});

describe('storeQuotedRates', () => {
  let temp: TempDb;
  const clock = fixedClock('2026-03-15T12:00:00.000Z');
  beforeEach(async () => {
    temp = await freshDb();
  });
  afterEach(() => {
    temp.close();
  });
  const rows = () => temp.db.prepare('SELECT currency, rate_date AS date, usd_per_unit AS usdPerUnit FROM exchange_rates ORDER BY rate_date, currency').all();

  it('refuses zero, negative and malformed rates, and stores the quote\'s others', () => {
    const stored = storeQuotedRates(temp.db, clock, CLI_ACTOR, 'frankfurter', {
      date: '2026-03-13',
      rates: [
        { currency: 'CAD', usdPerUnit: '0' },
        { currency: 'EUR', usdPerUnit: '-1.0812' },
        { currency: 'GBP', usdPerUnit: '1.2611687857' },
        { currency: 'MXN', usdPerUnit: '5.5e-2' },
      ],
    });
    expect(stored).to.deep.equal({
      stored: 1,
      kept: 0,
      refused: [
        { currency: 'CAD', date: '2026-03-13', usdPerUnit: '0', reason: 'zero', message: 'CAD rate 0 is zero' },
        { currency: 'EUR', date: '2026-03-13', usdPerUnit: '-1.0812', reason: 'negative', message: 'EUR rate -1.0812 is negative' },
        { currency: 'MXN', date: '2026-03-13', usdPerUnit: '5.5e-2', reason: 'malformed', message: 'MXN rate "5.5e-2" is not a decimal with at most 10 places' },
      ],
    });
    expect(rows()).to.deep.equal([{ currency: 'GBP', date: '2026-03-13', usdPerUnit: '1.2611687857' }]);
    const tooFine = storeQuotedRates(temp.db, clock, CLI_ACTOR, 'frankfurter', { date: '2026-03-12', rates: [{ currency: 'CAD', usdPerUnit: '0.74100472894' }] });
    expect(tooFine.refused.map((refusal) => refusal.reason)).to.deep.equal(['malformed']);
    expect(rows()).to.have.length(1);
  });

  it('compares with the latest rate before the quote\'s date, exactly: 100 times (or 1/100) passes, a hair beyond does not', () => {
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'MXN', date: '2026-03-11', usdPerUnit: '0.05' });
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'CAD', date: '2026-03-11', usdPerUnit: '0.7' });
    const quote = (rates: { currency: 'CAD' | 'MXN'; usdPerUnit: string }[]) => storeQuotedRates(temp.db, clock, CLI_ACTOR, 'ecb', { date: '2026-03-13', rates });
    const beyond = quote([
      { currency: 'MXN', usdPerUnit: '5.0000000001' },
      { currency: 'CAD', usdPerUnit: '0.0069999999' },
    ]);
    expect(beyond.refused.map(({ currency, reason, previous }) => ({ currency, reason, previousDate: previous?.date }))).to.deep.equal([
      { currency: 'MXN', reason: 'over_100x_previous', previousDate: '2026-03-11' },
      { currency: 'CAD', reason: 'under_hundredth_of_previous', previousDate: '2026-03-11' },
    ]);
    expect(rows()).to.have.length(2);
    expect(quote([{ currency: 'MXN', usdPerUnit: '0.0004999999' }]).refused.map((refusal) => refusal.reason)).to.deep.equal(['under_hundredth_of_previous']);
    expect(quote([
      { currency: 'MXN', usdPerUnit: '5' },
      { currency: 'CAD', usdPerUnit: '0.007' },
    ])).to.deep.equal({ stored: 2, kept: 0, refused: [] });
    expect(rows()).to.deep.equal([
      { currency: 'CAD', date: '2026-03-11', usdPerUnit: '0.7' },
      { currency: 'MXN', date: '2026-03-11', usdPerUnit: '0.05' },
      { currency: 'CAD', date: '2026-03-13', usdPerUnit: '0.007' },
      { currency: 'MXN', date: '2026-03-13', usdPerUnit: '5' },
    ]);
  });
});

describe('lookUpRate refuses what the rates job refuses', () => {
  let fake: FakeProvider;
  let temp: TempDb;
  const clock = fixedClock('2026-03-15T12:00:00.000Z');
  before(async () => {
    fake = await startFakeProvider();
    temp = await freshDb();
  });
  after(async () => {
    await fake.close();
    temp.close();
  });

  it('a rate over 100 times the one before: the older rate is used, with the reason beside it, and the rest of the quote is stored', async () => {
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'MXN', date: '2026-03-02', usdPerUnit: '0.05' });
    fake.reply = { body: frankfurterBody('2026-03-13', { ...dayQuote('2026-03-13'), MXN: '0.01' }) };
    const provider: RateProvider = { kind: 'frankfurter', url: fake.url };
    expect(await lookUpRate(temp.db, clock, storingAs(temp.db, clock), provider, 'MXN', '2026-03-13')).to.deep.equal({
      rate: { currency: 'MXN', date: '2026-03-02', usdPerUnit: '0.05', source: 'manual' },
      problem:
        'the latest MXN rate stored is for 2026-03-02, and looking up a newer one failed: ' +
        'the frankfurter rate provider\'s answer was refused: MXN rate 103.131 for 2026-03-13 is more than 100 times the 0.05 stored for 2026-03-02',
    });
    expect(fake.requests).to.deep.equal([request('2026-03-13')]);
    expect(temp.db.prepare("SELECT currency FROM exchange_rates WHERE rate_date = '2026-03-13' ORDER BY currency").pluck().all()).to.deep.equal(['CAD', 'EUR', 'GBP']);
    expect(await lookUpRate(temp.db, clock, storingAs(temp.db, clock), provider, 'CAD', '2026-03-13')).to.deep.equal({ rate: { currency: 'CAD', date: '2026-03-13', usdPerUnit: '0.825048', source: 'frankfurter' } });
    expect(fake.requests).to.have.length(1);
  });
});
