import { CLI_ACTOR } from '../../src/store/audit.js';
import { expect } from 'chai';
import { setRate } from '../../src/books/fx.js';
import { fixedClock } from '../../src/clock.js';
import { usableRate } from '../../src/books/fx.js';
import { lookUpRate } from '../../src/rates/look-up.js';
import { freshDb, type TempDb } from '../support/db.js';
import { type FakeProvider, startFakeProvider, storingAs } from '../support/rate-provider.js';

/** The one rule send and payments post by: the rate of the date, or the newest before it within the maximum age. */
describe('usableRate and lookUpRate: a stored rate no older than the maximum age, never one for a day not yet come', () => {
  let temp: TempDb;
  let fake: FakeProvider;
  const clock = fixedClock('2026-09-15T12:00:00.000Z');
  const provider = () => ({ kind: 'frankfurter' as const, url: fake.url });
  before(async () => {
    fake = await startFakeProvider();
  });
  after(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    temp = await freshDb();
    fake.requests.length = 0;
    fake.reply = { status: 500, body: 'down' };
  });
  afterEach(() => {
    temp.close();
  });

  it('takes a rate up to maxAgeDays older (4 unless told), and not one older', () => {
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'GBP', date: '2026-09-06', usdPerUnit: '1.29' });
    expect(usableRate(temp.db, clock, 'GBP', '2026-09-10').rate?.date).to.equal('2026-09-06');
    expect(usableRate(temp.db, clock, 'GBP', '2026-09-11')).to.deep.equal({
      problem:
        'the newest GBP rate stored is for 2026-09-06, more than 4 days before 2026-09-11, and the rate provider gave none newer; ' +
        'store one by hand with daybook rate set --currency GBP --date 2026-09-11 --usd-per-unit RATE',
    });
    expect(usableRate(temp.db, clock, 'GBP', '2026-09-13', 7).rate?.date).to.equal('2026-09-06');
    expect(usableRate(temp.db, clock, 'GBP', '2026-09-07', 0).problem).to.match(/more than 0 days before 2026-09-07/);
  });

  it('for a date after today, takes only a rate of that date', () => {
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'GBP', date: '2026-09-15', usdPerUnit: '1.30' });
    expect(usableRate(temp.db, clock, 'GBP', '2026-09-16').problem).to.equal(
      '2026-09-16 is after today (2026-09-15), so no rate for it can be fetched yet, and the newest GBP rate stored is for 2026-09-15; ' +
        'store one by hand with daybook rate set --currency GBP --date 2026-09-16 --usd-per-unit RATE',
    );
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'GBP', date: '2026-09-16', usdPerUnit: '1.31' });
    expect(usableRate(temp.db, clock, 'GBP', '2026-09-16').rate?.usdPerUnit).to.equal('1.31');
  });

  it('lookUpRate does not ask the provider for a day not yet come, nor for one its maxAgeDays covers', async () => {
    setRate(temp.db, clock, CLI_ACTOR, { currency: 'GBP', date: '2026-09-06', usdPerUnit: '1.29' });
    const future = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), provider(), 'GBP', '2026-09-20');
    expect(future.problem).to.match(/^2026-09-20 is after today/);
    const covered = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), provider(), 'GBP', '2026-09-13', { maxAgeDays: 7 });
    expect(covered).to.deep.equal({ rate: { currency: 'GBP', date: '2026-09-06', usdPerUnit: '1.29', source: 'manual' } });
    expect(fake.requests).to.deep.equal([]);
    const stale = await lookUpRate(temp.db, clock, storingAs(temp.db, clock), provider(), 'GBP', '2026-09-13');
    expect(stale.problem).to.match(/latest GBP rate stored is for 2026-09-06, and looking up a newer one failed/);
    expect(fake.requests).to.have.length(1);
  });
});
