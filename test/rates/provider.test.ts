import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import fc from 'fast-check';
import { rateOnOrBefore, setRate } from '../../src/books/fx.js';
import { inTransaction } from '../../src/db/connection.js';
import { FX_RATE_SCALE } from '../../src/money.js';
import { lookUpRate } from '../../src/rates/look-up.js';
import { fetchUsdRates, type QuotedRates } from '../../src/rates/provider.js';
import { isUnreachable, RateProviderError, type RateProviderProblem } from '../../src/rates/provider-error.js';
import { freshDb, type TempDb } from '../support/db.js';
import { testClock } from '../support/factories.js';
import { ecbBody, type FakeProvider, frankfurterBody, startFakeProvider, storingAs } from '../support/rate-provider.js';

const NORMAL = { CAD: '1.4591', GBP: '0.8573', MXN: '19.6543', USD: '1.0812' };

const ECB_NORMAL = { USD: '1.0812', JPY: '161.52', CAD: '1.4591', GBP: '0.85730', MXN: '19.6543' };

function ratesOf(quoted: QuotedRates): Record<string, string> {
  return Object.fromEntries(quoted.rates.map((rate) => [rate.currency, rate.usdPerUnit]));
}

async function expectRefusal(promise: Promise<unknown>, problem: RateProviderProblem, message: RegExp): Promise<RateProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(RateProviderError);
    const refusal = error as RateProviderError;
    expect(refusal.problem, refusal.message).to.equal(problem);
    expect(refusal.message).to.match(message);
    return refusal;
  }
  expect.fail(`expected a RateProviderError (${problem})`);
}

describe('exchange-rate provider client', () => {
  let fake: FakeProvider;

  before(async () => {
    fake = await startFakeProvider();
  });
  after(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.reply = {};
  });

  describe('fetchUsdRates (Frankfurter JSON)', () => {
    const frankfurter = () => ({ kind: 'frankfurter' as const, url: fake.url });

    it('converts EUR quotes to USD per unit at 10 decimals, half away from zero', async () => {
      fake.reply = { body: frankfurterBody('2026-03-13', NORMAL) };
      const quoted = await fetchUsdRates(frankfurter(), '2026-03-13');
      expect(quoted.date).to.equal('2026-03-13');
      expect(quoted.rates.map((rate) => rate.currency)).to.deep.equal(['CAD', 'EUR', 'GBP', 'MXN']);
      expect(ratesOf(quoted)).to.deep.equal({
        EUR: '1.0812', // the USD quote itself
        CAD: '0.7410047289', // 1.0812 / 1.4591 = 0.74100472894... -> down
        GBP: '1.2611687857', // 1.0812 / 0.8573 = 1.26116878572... -> down
        MXN: '0.0550108628', // 1.0812 / 19.6543 = 0.05501086276... -> up
      });
    });

    it('is exact where the quotient terminates and rounds it once where it does not', async () => {
      fake.reply = { body: frankfurterBody('2026-03-13', { USD: '1.2', GBP: '0.8', CAD: '1.5', MXN: '1.8' }) };
      expect(ratesOf(await fetchUsdRates(frankfurter(), '2026-03-13'))).to.deep.equal({
        EUR: '1.2',
        GBP: '1.5', // 1.2 / 0.8, exactly
        CAD: '0.8', // 1.2 / 1.5, exactly
        MXN: '0.6666666667', // 1.2 / 1.8 = 0.666..., the 11th decimal 6 rounds up
      });
      fake.reply = { body: frankfurterBody('2026-03-13', { USD: '1.25', GBP: '0.8', CAD: '1.5', MXN: '3' }) };
      expect(ratesOf(await fetchUsdRates(frankfurter(), '2026-03-13'))).to.include({
        CAD: '0.8333333333', // 1.25 / 1.5 = 0.8333..., rounds down
        GBP: '1.5625', // 1.25 / 0.8, exactly
        MXN: '0.4166666667', // 1.25 / 3 = 0.41666..., rounds up
      });
    });

    it('reads the digits, not a float: a tie at the 11th decimal rounds away from zero', async () => {
      // As a float, 1.23456789005 is 1.2345678900499999..., which would round down to ...900.
      fake.reply = { body: frankfurterBody('2026-03-13', { USD: '1.23456789005', CAD: '1', GBP: '1.00', MXN: '0.5' }) };
      expect(ratesOf(await fetchUsdRates(frankfurter(), '2026-03-13'))).to.deep.equal({
        CAD: '1.2345678901',
        EUR: '1.2345678901',
        GBP: '1.2345678901',
        MXN: '2.4691357801', // 1.23456789005 / 0.5 = 2.4691357801, exactly
      });
    });

    it('treats "amount" as the euro quote (rates per 10 EUR)', async () => {
      fake.reply = { body: frankfurterBody('2026-03-13', { USD: '10.812', CAD: '14.591', GBP: '8.573', MXN: '196.543' }).replace('"amount":1.0', '"amount":10') };
      expect(ratesOf(await fetchUsdRates(frankfurter(), '2026-03-13'))).to.deep.equal({
        EUR: '1.0812',
        CAD: '0.7410047289',
        GBP: '1.2611687857',
        MXN: '0.0550108628',
      });
    });

    it('returns the earlier business day Frankfurter answers for a weekend', async () => {
      fake.reply = { body: frankfurterBody('2026-03-13', NORMAL) };
      const quoted = await fetchUsdRates(frankfurter(), '2026-03-15');
      expect(quoted.date).to.equal('2026-03-13');
    });

    it('asks GET {url}/{date}?from=EUR&to=USD,CAD,GBP,MXN, or /latest', async () => {
      fake.reply = { body: frankfurterBody('2026-03-13', NORMAL) };
      await fetchUsdRates(frankfurter(), '2026-03-14');
      await fetchUsdRates({ kind: 'frankfurter', url: `${fake.url}/` }, 'latest');
      expect(fake.requests).to.deep.equal(['GET /2026-03-14?from=EUR&to=USD,CAD,GBP,MXN', 'GET /latest?from=EUR&to=USD,CAD,GBP,MXN']);
    });

    it('ignores currencies it did not ask for and whitespace in the JSON', async () => {
      fake.reply = { body: `{ "amount": 1.0, "base": "EUR", "date": "2026-03-13",\n "rates": { "JPY": 161.52, "CAD": 1.4591, "GBP": 0.8573,\n "MXN": 19.6543, "USD": 1.0812 } }\n` };
      expect(ratesOf(await fetchUsdRates(frankfurter(), '2026-03-13'))).to.include({ GBP: '1.2611687857' });
    });

    it('uses the fetch it is given', async () => {
      const asked: string[] = [];
      const fetchStub: typeof fetch = async (input) => {
        asked.push(String(input));
        return new Response(frankfurterBody('2026-03-13', NORMAL), { status: 200 });
      };
      const quoted = await fetchUsdRates({ kind: 'frankfurter', url: 'https://rates.invalid' }, 'latest', { fetch: fetchStub });
      expect(asked).to.deep.equal(['https://rates.invalid/latest?from=EUR&to=USD,CAD,GBP,MXN']);
      expect(ratesOf(quoted)).to.include({ EUR: '1.0812' });
    });

    it('rounds every quotient correctly (property: within half a unit of the 10th decimal, ties away)', async () => {
      const decimal = fc
        .tuple(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.integer({ min: 0, max: 8 }))
        .map(([units, scale]) => ({ units, scale, text: scale === 0 ? units.toString() : `${units / 10n ** BigInt(scale)}.${(units % 10n ** BigInt(scale)).toString().padStart(scale, '0')}` }));
      await fc.assert(
        fc.asyncProperty(decimal, decimal, async (usd, cad) => {
          const body = frankfurterBody('2026-03-13', { USD: usd.text, CAD: cad.text, GBP: '1', MXN: '1' });
          const fetchStub: typeof fetch = async () => new Response(body);
          let quoted: QuotedRates;
          try {
            quoted = await fetchUsdRates({ kind: 'frankfurter', url: 'https://rates.invalid' }, 'latest', { fetch: fetchStub });
          } catch (error) {
            // Only a quotient that rounds to zero may be refused.
            expect((error as RateProviderError).problem).to.equal('bad_rate');
            expect(usd.units * 10n ** BigInt(cad.scale + FX_RATE_SCALE) * 2n < cad.units * 10n ** BigInt(usd.scale)).to.equal(true);
            return;
          }
          const text = ratesOf(quoted).CAD ?? '';
          const [whole = '', fraction = ''] = text.split('.');
          const rounded = BigInt(whole + fraction.padEnd(FX_RATE_SCALE, '0'));
          // |rounded - usd/cad x 10^10| <= 1/2, in integers; on a tie, rounded is the larger.
          const exact = usd.units * 10n ** BigInt(cad.scale + FX_RATE_SCALE);
          const denominator = cad.units * 10n ** BigInt(usd.scale);
          const twiceError = 2n * (rounded * denominator - exact);
          expect(twiceError <= denominator && twiceError > -denominator, `${usd.text} / ${cad.text} -> ${text}`).to.equal(true);
        }),
        { numRuns: 300 },
      );
    });

    describe('refuses', () => {
      it('a non-2xx status', async () => {
        fake.reply = { status: 500, body: 'oops' };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'http_status', /^frankfurter rate provider: answered HTTP 500$/);
        fake.reply = { status: 404, body: '{"message":"not found"}' };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'http_status', /HTTP 404/);
      });

      it('an answer that does not come within timeoutMs, before or during the body', async () => {
        fake.reply = { hang: 'before-headers' };
        const started = Date.now();
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13', { timeoutMs: 150 }), 'timeout', /no complete answer within 150 ms/);
        expect(Date.now() - started).to.be.below(2000);
        fake.reply = { hang: 'mid-body', body: frankfurterBody('2026-03-13', NORMAL) };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13', { timeoutMs: 150 }), 'timeout', /within 150 ms/);
      });

      it('a provider nobody answers for', async () => {
        const gone = await startFakeProvider();
        await gone.close();
        await expectRefusal(fetchUsdRates({ kind: 'frankfurter', url: gone.url }, 'latest'), 'unreachable', /request failed/);
      });

      it('a port fetch will not connect to (9, discard): unreachable, with fetch\'s own reason rather than "fetch failed"', async () => {
        const refusal = await expectRefusal(fetchUsdRates({ kind: 'frankfurter', url: 'http://127.0.0.1:9/' }, 'latest'), 'unreachable', /request failed/);
        expect(refusal.message).to.equal('frankfurter rate provider: request failed (bad port)');
        expect(refusal.detail).to.equal('request failed (bad port)');
        expect(isUnreachable(refusal.problem)).to.equal(true);
      });

      it('malformed JSON and answers of the wrong shape', async () => {
        const cases: [string, RegExp][] = [
          ['{"amount":1.0,"base":"EUR","date":"2026-03-13","rates":{"USD":1.08', /not JSON/],
          ['<html>Service Unavailable</html>', /not JSON/],
          ['', /not JSON/],
          ['[1.0812]', /not a JSON object/],
          ['{"amount":1.0,"base":"EUR","date":"2026-03-13"}', /no "rates"/],
          ['{"amount":1.0,"base":"USD","date":"2026-03-13","rates":{}}', /based on "USD"/],
          ['{"amount":1.0,"base":"EUR","start_date":"2026-03-12","end_date":"2026-03-13","rates":{}}', /no "date"/],
          ['{"amount":1.0,"base":"EUR","date":"2026-03-13","rates":{"USD":1.0812,"USD":1.2}}', /repeats the key "USD"/],
        ];
        for (const [body, message] of cases) {
          fake.reply = { body };
          await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'malformed', message);
        }
      });

      it('a zero, negative, exponent-written or string rate', async () => {
        const cases: [Record<string, string>, RegExp][] = [
          [{ ...NORMAL, GBP: '0' }, /GBP rate 0 is zero/],
          [{ ...NORMAL, USD: '0.0000' }, /USD rate 0.0000 is zero/],
          [{ ...NORMAL, CAD: '-1.4591' }, /CAD rate -1.4591 is negative/],
          [{ ...NORMAL, MXN: '1e-3' }, /MXN rate "1e-3" is not a plain decimal/],
          [{ ...NORMAL, MXN: '1.9E+1' }, /not a plain decimal/],
          [{ ...NORMAL, USD: '"1.0812"' }, /USD rate is not a number/],
          [{ ...NORMAL, USD: 'null' }, /USD rate is not a number/],
          [{ ...NORMAL, USD: '1234567890123456.5' }, /more digits than any real quote/],
        ];
        for (const [rates, message] of cases) {
          fake.reply = { body: frankfurterBody('2026-03-13', rates) };
          await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'bad_rate', message);
        }
      });

      it('a quotient too small to store at 10 decimals', async () => {
        fake.reply = { body: frankfurterBody('2026-03-13', { ...NORMAL, USD: '0.00000000001' }) };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'bad_rate', /USD per CAD works out to 0.0000000000/);
      });

      it('a missing currency', async () => {
        const { MXN: _mxn, ...withoutMxn } = NORMAL;
        fake.reply = { body: frankfurterBody('2026-03-13', withoutMxn) };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'missing_currency', /no MXN rate/);
        const { USD: _usd, ...withoutUsd } = NORMAL;
        fake.reply = { body: frankfurterBody('2026-03-13', withoutUsd) };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'missing_currency', /no USD rate/);
      });

      it('a date that is not YYYY-MM-DD, or a day later than the one asked for', async () => {
        for (const date of ['2026-3-13', '13/03/2026', '2026-02-30', '']) {
          fake.reply = { body: frankfurterBody(date, NORMAL) };
          await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'bad_date', /is not a date YYYY-MM-DD/);
        }
        fake.reply = { body: frankfurterBody('2026-03-16', NORMAL) };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'bad_date', /asked for 2026-03-13, answered a later day 2026-03-16/);
      });

      it('an answer larger than any real one', async () => {
        fake.reply = { body: frankfurterBody('2026-03-13', NORMAL, `,"padding":"${'x'.repeat(300 * 1024)}"`) };
        await expectRefusal(fetchUsdRates(frankfurter(), '2026-03-13'), 'too_large', /larger than/);
      });
    });
  });

  describe('fetchUsdRates (ECB daily XML)', () => {
    const ecb = () => ({ kind: 'ecb' as const, url: `${fake.url}/stats/eurofxref/eurofxref-daily.xml` });

    it('converts the daily file the same way and fetches the file itself', async () => {
      fake.reply = { body: ecbBody('2026-03-13', ECB_NORMAL), contentType: 'text/xml' };
      const quoted = await fetchUsdRates(ecb(), 'latest');
      expect(quoted).to.deep.equal({
        date: '2026-03-13',
        rates: [
          { currency: 'CAD', usdPerUnit: '0.7410047289' },
          { currency: 'EUR', usdPerUnit: '1.0812' },
          { currency: 'GBP', usdPerUnit: '1.2611687857' },
          { currency: 'MXN', usdPerUnit: '0.0550108628' },
        ],
      });
      expect(fake.requests).to.deep.equal(['GET /stats/eurofxref/eurofxref-daily.xml']);
    });

    it('answers its own latest day whatever date is asked for', async () => {
      fake.reply = { body: ecbBody('2026-03-13', ECB_NORMAL).replaceAll("'", '"'), contentType: 'text/xml' };
      const quoted = await fetchUsdRates(ecb(), '2026-03-10');
      expect(quoted.date).to.equal('2026-03-13');
      expect(fake.requests).to.deep.equal(['GET /stats/eurofxref/eurofxref-daily.xml']);
    });

    describe('refuses', () => {
      it('a non-2xx status and a hang', async () => {
        fake.reply = { status: 503, body: 'down' };
        await expectRefusal(fetchUsdRates(ecb(), 'latest'), 'http_status', /^ecb rate provider: answered HTTP 503$/);
        fake.reply = { hang: 'before-headers' };
        await expectRefusal(fetchUsdRates(ecb(), 'latest', { timeoutMs: 150 }), 'timeout', /^ecb rate provider: no complete answer within 150 ms$/);
      });

      it('malformed XML and files without one dated Cube', async () => {
        const good = ecbBody('2026-03-13', ECB_NORMAL);
        const twoDays = good.replace("\t\t<Cube time='2026-03-13'>", "\t\t<Cube time='2026-03-12'><Cube currency='USD' rate='1.08'/></Cube>\n\t\t<Cube time='2026-03-13'>");
        const cases: [string, RegExp][] = [
          [good.replace('</gesmes:Envelope>', ''), /<gesmes:Envelope> is never closed/],
          [good.replace("\t\t</Cube>\n\t</Cube>", '\t</Cube>\n\t\t</Cube>\n\t</Cube>'), /does not close/],
          [good.replace("rate='1.0812'", "rate='1.0812"), /not well-formed/],
          [good.replace('<gesmes:subject>', '<!DOCTYPE x [<!ENTITY e "1">]><gesmes:subject>'), /DOCTYPE/],
          ['{"rates":{}}', /not XML|outside its root/],
          ['', /not XML/],
          [good.replace(" time='2026-03-13'", ''), /not inside a dated Cube/],
          [twoDays, /holds 2 days/],
          [good.replace("<Cube currency='GBP' rate='0.85730'/>", "<Cube currency='GBP'/>"), /GBP Cube has no rate/],
        ];
        for (const [body, message] of cases) {
          fake.reply = { body, contentType: 'text/xml' };
          await expectRefusal(fetchUsdRates(ecb(), 'latest'), 'malformed', message);
        }
      });

      it('a zero, negative or exponent-written rate, and a missing currency', async () => {
        const badRates: [Record<string, string>, RegExp][] = [
          [{ ...ECB_NORMAL, GBP: '0.0' }, /GBP rate 0.0 is zero/],
          [{ ...ECB_NORMAL, USD: '-1.0812' }, /USD rate -1.0812 is negative/],
          [{ ...ECB_NORMAL, CAD: '1e-3' }, /CAD rate "1e-3" is not a plain decimal/],
          [{ ...ECB_NORMAL, MXN: '' }, /MXN rate "" is not a plain decimal/],
        ];
        for (const [rates, message] of badRates) {
          fake.reply = { body: ecbBody('2026-03-13', rates) };
          await expectRefusal(fetchUsdRates(ecb(), 'latest'), 'bad_rate', message);
        }
        const { MXN: _mxn, ...withoutMxn } = ECB_NORMAL;
        fake.reply = { body: ecbBody('2026-03-13', withoutMxn) };
        await expectRefusal(fetchUsdRates(ecb(), 'latest'), 'missing_currency', /^ecb rate provider: the answer has no MXN rate$/);
      });

      it('a date that is not YYYY-MM-DD', async () => {
        fake.reply = { body: ecbBody('13/03/2026', ECB_NORMAL) };
        await expectRefusal(fetchUsdRates(ecb(), 'latest'), 'bad_date', /"13\/03\/2026" is not a date YYYY-MM-DD/);
      });
    });
  });

  describe('lookUpRate (the send path\'s one-time look-up)', () => {
    let temp: TempDb;
    const clock = testClock();
    const frankfurter = () => ({ kind: 'frankfurter' as const, url: fake.url });
    const storedRates = () =>
      temp.db.prepare('SELECT currency, rate_date AS date, usd_per_unit AS usdPerUnit, source FROM exchange_rates ORDER BY currency').all();

    beforeEach(async () => {
      temp = await freshDb();
    });
    afterEach(() => {
      temp.close();
    });

    it('uses a recent stored rate (at most four days older: a long weekend) without asking the provider', async () => {
      setRate(temp.db, clock, CLI_ACTOR, { currency: 'GBP', date: '2026-03-10', usdPerUnit: '1.27' });
      fake.reply = { status: 500 };
      const result = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'GBP', '2026-03-14');
      expect(result).to.deep.equal({ rate: { currency: 'GBP', date: '2026-03-10', usdPerUnit: '1.27', source: 'manual' } });
      expect(fake.requests).to.deep.equal([]);
    });

    it('asks again when the stored rate is older than that, and falls back on it, saying why, when the provider fails', async () => {
      setRate(temp.db, clock, CLI_ACTOR, { currency: 'GBP', date: '2026-03-02', usdPerUnit: '1.27' });
      fake.reply = { status: 500 };
      const result = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'GBP', '2026-03-14');
      expect(result.rate).to.deep.equal({ currency: 'GBP', date: '2026-03-02', usdPerUnit: '1.27', source: 'manual' });
      expect(result.problem).to.match(/latest GBP rate stored is for 2026-03-02, and looking up a newer one failed/);
      expect(fake.requests).to.deep.equal(['GET /2026-03-14?from=EUR&to=USD,CAD,GBP,MXN']);
    });

    it('fetches a missing rate once and stores all four under the quote\'s date', async () => {
      fake.reply = { body: frankfurterBody('2026-03-13', NORMAL) };
      const result = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'GBP', '2026-03-14');
      expect(result).to.deep.equal({ rate: { currency: 'GBP', date: '2026-03-13', usdPerUnit: '1.2611687857', source: 'frankfurter' } });
      expect(fake.requests).to.deep.equal(['GET /2026-03-14?from=EUR&to=USD,CAD,GBP,MXN']);
      expect(storedRates()).to.deep.equal([
        { currency: 'CAD', date: '2026-03-13', usdPerUnit: '0.7410047289', source: 'frankfurter' },
        { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.0812', source: 'frankfurter' },
        { currency: 'GBP', date: '2026-03-13', usdPerUnit: '1.2611687857', source: 'frankfurter' },
        { currency: 'MXN', date: '2026-03-13', usdPerUnit: '0.0550108628', source: 'frankfurter' },
      ]);
      // The next look-up for another currency finds what was stored.
      const again = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'MXN', '2026-03-14');
      expect(again.rate?.usdPerUnit).to.equal('0.0550108628');
      expect(fake.requests).to.have.length(1);
    });

    it('keeps a rate already stored for the quote\'s day rather than overwriting it', async () => {
      setRate(temp.db, clock, CLI_ACTOR, { currency: 'EUR', date: '2026-03-13', usdPerUnit: '1.09' });
      fake.reply = { body: frankfurterBody('2026-03-13', NORMAL) };
      const result = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'CAD', '2026-03-13');
      expect(result.rate).to.include({ usdPerUnit: '0.7410047289', source: 'frankfurter' });
      expect(rateOnOrBefore(temp.db, 'EUR', '2026-03-13')).to.include({ usdPerUnit: '1.09', source: 'manual' });
    });

    it('returns the provider\'s failure as a problem and stores nothing', async () => {
      fake.reply = { status: 500, body: 'down' };
      const outage = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'CAD', '2026-03-13');
      expect(outage).to.deep.equal({
        problem: 'no CAD rate is stored on or before 2026-03-13, and looking one up failed: frankfurter rate provider: answered HTTP 500',
      });
      fake.reply = { hang: 'before-headers' };
      const hang = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'CAD', '2026-03-13', { timeoutMs: 100 });
      expect(hang.problem).to.match(/no complete answer within 100 ms$/);
      fake.reply = { body: frankfurterBody('2026-03-13', { ...NORMAL, MXN: '0' }) };
      const badRate = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'CAD', '2026-03-13');
      expect(badRate.problem).to.match(/MXN rate 0 is zero$/);
      expect(storedRates()).to.deep.equal([]);
    });

    it('stores the ECB\'s later day but says why it has no rate for an earlier date', async () => {
      fake.reply = { body: ecbBody('2026-03-13', ECB_NORMAL) };
      const result = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), { kind: 'ecb', url: `${fake.url}/eurofxref-daily.xml` }, 'CAD', '2026-03-10');
      expect(result).to.deep.equal({
        problem: 'no CAD rate is stored on or before 2026-03-10, and the ecb rate provider\'s latest quote is for 2026-03-13',
      });
      expect(storedRates()).to.have.length(4);
      expect(rateOnOrBefore(temp.db, 'CAD', '2026-03-13')).to.include({ source: 'ecb', usdPerUnit: '0.7410047289' });
    });

    it('refuses to be awaited inside a transaction', async () => {
      let thrown: unknown;
      const pending: Promise<unknown>[] = [];
      inTransaction(temp.db, () => {
        pending.push(lookUpRate(temp.db, clock, storingAs(temp.db, clock), frankfurter(), 'CAD', '2026-03-13').catch((error: unknown) => (thrown = error)));
      });
      await Promise.all(pending);
      expect((thrown as Error).message).to.match(/must not be awaited inside a transaction/);
      expect(fake.requests).to.deep.equal([]);
    });
  });
});
