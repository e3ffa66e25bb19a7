import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Business } from '../../src/books/businesses.js';
import { postEntry } from '../../src/books/ledger.js';
import type { TestApp, TestResponse } from '../support/app.js';
import { buildApiTenant, expectError, expectInvalid, type ApiTenant, useTenantApp, withoutRequestId } from '../support/api.js';
import { accountIdByName, buildBusiness, buildKey, TEST_ACTOR } from '../support/factories.js';
import { addExpense, addTransactionRow, addVendor, usdMoney, walkPages, withQuery } from '../support/register.js';

/**
 * GET /transactions (the register of one business, newest first, filtered and cursor-paged)
 * and GET /transactions/{id} (one transaction and the journal lines of the business's basis).
 */

type Query = Record<string, string | number | boolean | undefined>;

const REGISTER = '/api/v1/transactions';
const ids = (res: TestResponse): string[] => (res.body.transactions as Array<{ id: string }>).map((row) => row.id);

describe('GET /transactions', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useTenantApp((started) => ({ app, tenant } = started));

  const register = (key: string, query: Query = {}) => app.get(withQuery(REGISTER, query), key);
  /** Each recording one second after the last, so "recorded later" is well defined. */
  const later = () => app.clock.advanceMs(1000);

  it('answers {transactions, nextCursor} with each row {id, date, amount {cents, formatted, currency USD}, vendor, account, status, source}', async () => {
    const own = buildApiTenant(app, { plan: 'large' });
    const expense = addExpense(app, own.business, { date: '2026-03-02', amountCents: 123456n, vendor: { name: 'Staples' }, account: 'Office Supplies', memo: 'Printer paper' });
    later();
    const pending = addTransactionRow(app, own.business, { date: '2026-03-05', amountCents: 5n, description: 'CARD 4411 UNKNOWN' });

    const res = await register(own.key);
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['nextCursor', 'transactions']);
    expect(res.body).to.deep.equal({
      transactions: [
        { id: pending, date: '2026-03-05', amount: usdMoney('5', '$0.05'), vendor: null, account: null, status: 'pending', source: 'csv' },
        {
          id: expense,
          date: '2026-03-02',
          amount: usdMoney('123456', '$1,234.56'),
          vendor: 'Staples',
          account: 'Office Supplies',
          status: 'accepted',
          source: 'manual',
        },
      ],
      nextCursor: null,
    });
    for (const row of res.body.transactions as Array<Record<string, unknown>>) {
      expect(Object.keys(row).sort(), 'exactly the summary fields').to.deep.equal(['account', 'amount', 'date', 'id', 'source', 'status', 'vendor']);
      expect(Object.keys(row.amount as object).sort()).to.deep.equal(['cents', 'currency', 'formatted']);
    }
  });

  it('answers an empty register with nextCursor null (200)', async () => {
    const own = buildApiTenant(app);
    expect((await register(own.key)).body).to.deep.equal({ transactions: [], nextCursor: null });
  });

  describe('order (newest first)', () => {
    it('orders by date, newest first, then by creation: on the same date the one recorded later comes first', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      const b = own.business;
      const midFirst = addExpense(app, b, { date: '2026-03-05', amountCents: 100n, vendor: { name: 'First' } });
      later();
      const oldest = addExpense(app, b, { date: '2026-01-31', amountCents: 200n, vendor: { name: 'Second' } });
      later();
      const newest = addTransactionRow(app, b, { date: '2026-03-20', amountCents: 300n });
      later();
      const midSecond = addTransactionRow(app, b, { date: '2026-03-05', amountCents: 400n });
      later();
      const midThird = addExpense(app, b, { date: '2026-03-05', amountCents: 500n, vendor: { name: 'First' } });

      const res = await register(own.key);
      expect(res.status).to.equal(200);
      expect(ids(res)).to.deep.equal([newest, midThird, midSecond, midFirst, oldest]);
    });

    it('orders rows of the same date recorded at the same instant by id (descending, as the register\'s declared order)', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      const made = Array.from({ length: 5 }, () => addTransactionRow(app, own.business, { date: '2026-03-07', amountCents: 100n }));
      const res = await register(own.key);
      expect(ids(res)).to.deep.equal([...made].sort().reverse());
    });
  });

  describe('filters', () => {
    let firm: ApiTenant;
    let home: Business;
    let away: Business;
    const t: Record<string, string> = {};
    const vendor: Record<string, string> = {};
    const account: Record<string, string> = {};
    const list = async (query: Query): Promise<string[]> => {
      const res = await register(firm.key, { entityId: home.id, ...query });
      expect(res.status, `${JSON.stringify(query)}: ${res.text.slice(0, 300)}`).to.equal(200);
      expect(res.body.nextCursor).to.equal(null);
      return ids(res);
    };
    const expectRows = async (query: Query, names: string[]) => {
      expect(await list(query), JSON.stringify(query)).to.deep.equal(names.map((name) => t[name]));
    };

    before(() => {
      firm = buildApiTenant(app, { plan: 'large', businesses: 2 });
      [home, away] = [firm.businesses[0]!, firm.businesses[1]!];
      vendor.abc = addVendor(app, firm.id, 'ABC Roofing');
      vendor.axc = addVendor(app, firm.id, 'Axc Supply');
      vendor.staples = addVendor(app, firm.id, 'Staples');
      account.office = accountIdByName(app.db, home.id, 'Office Supplies');
      account.rent = accountIdByName(app.db, home.id, 'Rent');
      account.software = accountIdByName(app.db, home.id, 'Software and Subscriptions');
      account.uncategorized = accountIdByName(app.db, home.id, 'Uncategorized Expense');
      account.awayOffice = accountIdByName(app.db, away.id, 'Office Supplies');

      t.t1 = addExpense(app, home, { date: '2026-03-01', amountCents: 1000n, vendor: { id: vendor.abc }, account: 'Office Supplies', memo: 'roof repair' });
      later();
      t.t2 = addExpense(app, home, { date: '2026-03-05', amountCents: 2500n, vendor: { id: vendor.axc }, account: 'Rent', memo: 'Staples order' });
      later();
      t.t3 = addExpense(app, home, { date: '2026-03-10', amountCents: 9999n, vendor: { id: vendor.staples }, account: 'Office Supplies', memo: 'abc paper' });
      later();
      t.t4 = addTransactionRow(app, home, { date: '2026-03-05', amountCents: 2500n, vendorId: vendor.staples, accountId: account.software, status: 'edited' });
      later();
      t.t5 = addTransactionRow(app, home, { date: '2026-03-12', amountCents: 700n, description: 'ABC', status: 'pending' });
      later();
      t.t6 = addTransactionRow(app, home, { date: '2026-02-28', amountCents: 42n, vendorId: vendor.abc, accountId: account.uncategorized, status: 'uncategorized', source: 'email' });
      later();
      // The other business of the same account: never in home's register, whatever the filter.
      addExpense(app, away, { date: '2026-03-05', amountCents: 2500n, vendor: { id: vendor.abc }, account: 'Office Supplies' });
      addTransactionRow(app, away, { date: '2026-03-12', amountCents: 700n, status: 'pending' });
    });

    it('lists the whole register of the named business, newest first (control)', async () => {
      await expectRows({}, ['t5', 't3', 't4', 't2', 't1', 't6']);
    });

    it('takes dateFrom inclusive (dateFrom=2026-03-05 keeps the rows of the 5th)', async () => {
      await expectRows({ dateFrom: '2026-03-05' }, ['t5', 't3', 't4', 't2']);
      await expectRows({ dateFrom: '2026-03-13' }, []);
    });

    it('takes dateTo inclusive (dateTo=2026-03-05 keeps the rows of the 5th)', async () => {
      await expectRows({ dateTo: '2026-03-05' }, ['t4', 't2', 't1', 't6']);
      await expectRows({ dateTo: '2026-02-27' }, []);
    });

    it('takes dateFrom and dateTo together, inclusive at both ends (a single day; a range)', async () => {
      await expectRows({ dateFrom: '2026-03-05', dateTo: '2026-03-05' }, ['t4', 't2']);
      await expectRows({ dateFrom: '2026-03-01', dateTo: '2026-03-10' }, ['t3', 't4', 't2', 't1']);
      await expectRows({ dateFrom: '2026-03-02', dateTo: '2026-03-09' }, ['t4', 't2']);
      await expectRows({ dateFrom: '2026-03-11', dateTo: '2026-03-11' }, []);
    });

    it('filters by vendorId (this business\'s rows only; an unknown vendor lists nothing)', async () => {
      await expectRows({ vendorId: vendor.staples! }, ['t3', 't4']);
      await expectRows({ vendorId: vendor.abc! }, ['t1', 't6']);
      await expectRows({ vendorId: vendor.abc!.toUpperCase() }, ['t1', 't6']);
      await expectRows({ vendorId: randomUUID() }, []);
    });

    it('filters by accountId (another business\'s account of the same name lists nothing)', async () => {
      await expectRows({ accountId: account.office! }, ['t3', 't1']);
      await expectRows({ accountId: account.uncategorized! }, ['t6']);
      await expectRows({ accountId: account.awayOffice! }, []);
    });

    it('matches text against the vendor name only, case-insensitively: a memo or description holding the text does not match', async () => {
      await expectRows({ text: 'abc' }, ['t1', 't6']);
      await expectRows({ text: 'ROOFING' }, ['t1', 't6']);
      await expectRows({ text: 'staples' }, ['t3', 't4']);
      await expectRows({ text: 'paper' }, []);
      await expectRows({ text: 'repair' }, []);
    });

    it('treats % and _ as wildcards in text (a_c% matches ABC Roofing and Axc Supply; _xc only Axc)', async () => {
      await expectRows({ text: 'a_c%' }, ['t2', 't1', 't6']);
      await expectRows({ text: '_xc' }, ['t2']);
      await expectRows({ text: 's%s' }, ['t3', 't4']);
      await expectRows({ text: '%' }, ['t3', 't4', 't2', 't1', 't6']);
    });

    it('filters by each status (pending, accepted, edited, uncategorized)', async () => {
      await expectRows({ status: 'pending' }, ['t5']);
      await expectRows({ status: 'accepted' }, ['t3', 't2', 't1']);
      await expectRows({ status: 'edited' }, ['t4']);
      await expectRows({ status: 'uncategorized' }, ['t6']);
    });

    it('takes minCents and maxCents inclusive, compared as numbers', async () => {
      await expectRows({ minCents: '2500' }, ['t3', 't4', 't2']);
      await expectRows({ maxCents: '2500' }, ['t5', 't4', 't2', 't1', 't6']);
      await expectRows({ minCents: '2500', maxCents: '2500' }, ['t4', 't2']);
      await expectRows({ minCents: '900', maxCents: '1000' }, ['t1']);
      await expectRows({ minCents: '0' }, ['t5', 't3', 't4', 't2', 't1', 't6']);
      await expectRows({ maxCents: '42' }, ['t6']);
      await expectRows({ maxCents: '41' }, []);
      await expectRows({ minCents: '10000' }, []);
    });

    it('combines filters (each narrows the others)', async () => {
      await expectRows({ vendorId: vendor.staples!, status: 'accepted' }, ['t3']);
      await expectRows({ text: 'abc', dateFrom: '2026-03-01' }, ['t1']);
      await expectRows({ accountId: account.office!, minCents: '1000', maxCents: '1000' }, ['t1']);
      await expectRows({ dateFrom: '2026-03-01', dateTo: '2026-03-10', minCents: '2000', status: 'accepted' }, ['t3', 't2']);
      await expectRows(
        { text: 'a', vendorId: vendor.axc!, accountId: account.rent!, status: 'accepted', dateFrom: '2026-03-05', dateTo: '2026-03-05', minCents: '2500', maxCents: '2500' },
        ['t2'],
      );
      await expectRows({ vendorId: vendor.staples!, accountId: account.rent! }, []);
    });

    for (const [label, huge] of [
      ['just past the largest 64-bit integer (9223372036854775808)', '9223372036854775808'],
      ['of 25 digits', '9'.repeat(25)],
    ] as const) {
      it(`answers a minCents or maxCents ${label}, beyond every amount, without a fault: 200 with the rows it selects, or 422 naming it`, async () => {
        const [min, max] = await app.allowingFaults(async () => [
          await register(firm.key, { entityId: home.id, minCents: huge }),
          await register(firm.key, { entityId: home.id, maxCents: huge }),
        ]);
        for (const [field, res, rows] of [['minCents', min!, []], ['maxCents', max!, ['t5', 't3', 't4', 't2', 't1', 't6']]] as const) {
          expect(res.status, `${field}=${huge}: ${res.text.slice(0, 300)}`).to.be.oneOf([200, 422]);
          if (res.status === 422) expectInvalid(res, field);
          else expect(ids(res)).to.deep.equal(rows.map((name) => t[name]));
        }
      });
    }

    it('serves a minCents and maxCents of 19 digits within the 64-bit range (9223372036854775807: 200)', async () => {
      await expectRows({ minCents: '9223372036854775807' }, []);
      await expectRows({ maxCents: '9223372036854775807' }, ['t5', 't3', 't4', 't2', 't1', 't6']);
    });

    describe('refusals (422 validation_failed naming the field)', () => {
      const refused: Array<[label: string, query: Query, field: string]> = [
        ['dateTo before dateFrom', { dateFrom: '2026-03-05', dateTo: '2026-03-04' }, 'dateTo'],
        ['maxCents below minCents', { minCents: '1000', maxCents: '999' }, 'maxCents'],
        ['maxCents below minCents, however many digits', { minCents: '10', maxCents: '9' }, 'maxCents'],
        ['status void', { status: 'void' }, 'status'],
        ['status in another case (Pending)', { status: 'Pending' }, 'status'],
        ['an empty status', { status: '' }, 'status'],
        ['minCents 12.5', { minCents: '12.5' }, 'minCents'],
        ['minCents -1', { minCents: '-1' }, 'minCents'],
        ['minCents 1e3', { minCents: '1e3' }, 'minCents'],
        ['minCents +5', { minCents: '+5' }, 'minCents'],
        ['minCents with a space', { minCents: ' 5' }, 'minCents'],
        ['an empty minCents', { minCents: '' }, 'minCents'],
        ['minCents of 31 digits', { minCents: '1'.repeat(31) }, 'minCents'],
        ['maxCents 12.5', { maxCents: '12.5' }, 'maxCents'],
        ['maxCents -1', { maxCents: '-1' }, 'maxCents'],
        ['maxCents 0x10', { maxCents: '0x10' }, 'maxCents'],
        ['dateFrom not a date (2026-3-1)', { dateFrom: '2026-3-1' }, 'dateFrom'],
        ['dateFrom a day that does not exist (2026-02-30)', { dateFrom: '2026-02-30' }, 'dateFrom'],
        ['dateTo with a time', { dateTo: '2026-03-05T00:00:00Z' }, 'dateTo'],
        ['vendorId not a uuid', { vendorId: 'staples' }, 'vendorId'],
        ['accountId not a uuid', { accountId: '6160' }, 'accountId'],
        ['text of 201 characters', { text: 'x'.repeat(201) }, 'text'],
        ['limit 0', { limit: '0' }, 'limit'],
        ['limit 101', { limit: '101' }, 'limit'],
        ['limit abc', { limit: 'abc' }, 'limit'],
        ['limit 1.5', { limit: '1.5' }, 'limit'],
        ['an unknown parameter (search: the register\'s is text)', { search: 'abc' }, 'search'],
        ['an unknown parameter (vendor)', { vendor: 'Staples' }, 'vendor'],
      ];
      for (const [label, query, field] of refused) {
        it(`refuses ${label} ("${field}:")`, async () => {
          expectInvalid(await register(firm.key, { entityId: home.id, ...query }), field);
        });
      }

      it('accepts a text of 200 characters (200)', async () => {
        await expectRows({ text: 'x'.repeat(200) }, []);
      });
    });
  });

  describe('paging', () => {
    it('serves 50 rows by default: 52 rows come as a page of 50 with a nextCursor, then 2 with nextCursor null', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      const made = Array.from({ length: 52 }, (_, i) => addTransactionRow(app, own.business, { date: `2026-01-${String((i % 28) + 1).padStart(2, '0')}`, amountCents: BigInt(i + 1) }));
      const first = await register(own.key);
      expect(first.body.transactions).to.have.length(50);
      expect(first.body.nextCursor).to.be.a('string');
      const second = await register(own.key, { cursor: first.body.nextCursor });
      expect(second.body.transactions).to.have.length(2);
      expect(second.body.nextCursor).to.equal(null);
      expect(new Set([...ids(first), ...ids(second)])).to.deep.equal(new Set(made));
    });

    it('returns every row exactly once, newest first, across several pages (limit=3), ties of date and instant included', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      const dates = ['2026-03-01', '2026-03-03', '2026-03-03', '2026-03-03', '2026-03-03', '2026-03-08', '2026-02-11', '2026-03-03', '2026-03-08', '2026-03-03'];
      dates.forEach((date, i) => {
        addTransactionRow(app, own.business, { date, amountCents: BigInt(100 + i) });
        if (i % 3 === 0) later();
      });
      const whole = await register(own.key, { limit: 100 });
      const walk = await walkPages<{ id: string; date: string }>(app, own.key, REGISTER, 'transactions', { limit: 3 });
      expect(walk.pages.map((page) => page.length)).to.deep.equal([3, 3, 3, 1]);
      expect(walk.rows.map((row) => row.id)).to.deep.equal(ids(whole));
      expect(walk.rows.map((row) => row.date)).to.deep.equal([...dates].sort().reverse());
    });

    it('neither repeats nor skips a row when rows are inserted (newer, older, same date) between page requests', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      const b = own.business;
      const original: string[] = [];
      for (const date of ['2026-03-09', '2026-03-08', '2026-03-07', '2026-03-06', '2026-03-05', '2026-03-04', '2026-03-03', '2026-03-02']) {
        original.push(addExpense(app, b, { date, amountCents: 100n, vendor: { name: 'Original' } }));
        later();
      }
      const insertions: Array<Array<[date: string, cents: bigint]>> = [
        // after page 1 (09, 08, 07): newer than everything, the same date as the position, older
        [['2026-03-20', 1n], ['2026-03-07', 2n], ['2026-03-08', 3n], ['2026-03-05', 4n]],
        // after page 2
        [['2026-03-04', 5n], ['2026-03-10', 6n], ['2026-01-01', 7n]],
        // after page 3
        [['2026-03-02', 8n], ['2026-03-06', 9n]],
      ];
      const walk = await walkPages<{ id: string; date: string }>(app, own.key, REGISTER, 'transactions', { limit: 3 }, (pageIndex) => {
        for (const [date, cents] of insertions[pageIndex] ?? []) {
          later();
          addTransactionRow(app, b, { date, amountCents: cents });
        }
      });
      const served = walk.rows.map((row) => row.id);
      expect(new Set(served).size, 'no row served twice').to.equal(served.length);
      expect(served.filter((id) => original.includes(id)), 'every row that existed, once, in order').to.deep.equal(original);
      const dates = walk.rows.map((row) => row.date);
      expect(dates, 'the pages read as one list, newest first').to.deep.equal([...dates].sort().reverse());
    });

    it('returns nextCursor null when the last page is exactly full (6 rows, limit=3)', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      for (let i = 0; i < 6; i++) addTransactionRow(app, own.business, { date: `2026-03-0${i + 1}`, amountCents: 100n });
      const walk = await walkPages(app, own.key, REGISTER, 'transactions', { limit: 3 });
      expect(walk.pages.map((page) => page.length)).to.deep.equal([3, 3]);
      expect(walk.responses[1]!.body.nextCursor).to.equal(null);
    });

    it('pages a filtered register with the same filters on every page', async () => {
      const own = buildApiTenant(app, { plan: 'large' });
      const pending: string[] = [];
      for (let i = 0; i < 7; i++) {
        const id = addTransactionRow(app, own.business, { date: `2026-03-0${i + 1}`, amountCents: 100n, status: i % 2 === 0 ? 'pending' : 'edited' });
        if (i % 2 === 0) pending.unshift(id);
      }
      const walk = await walkPages<{ id: string }>(app, own.key, REGISTER, 'transactions', { limit: 2, status: 'pending' });
      expect(walk.rows.map((row) => row.id)).to.deep.equal(pending);
    });

    describe('cursors (422 "cursor:")', () => {
      let firm: ApiTenant;
      let cursor: string;
      const first = (query: Query) => register(firm.key, { entityId: firm.businesses[0]!.id, limit: 2, ...query });
      before(async () => {
        firm = buildApiTenant(app, { plan: 'large', businesses: 2 });
        for (const business of firm.businesses) {
          for (let i = 1; i <= 5; i++) addTransactionRow(app, business, { date: `2026-03-0${i}`, amountCents: BigInt(i * 100), status: 'pending' });
        }
        cursor = (await first({})).body.nextCursor as string;
        expect(cursor).to.be.a('string');
      });

      it('serves the genuine cursor with the same filters (control)', async () => {
        const res = await first({ cursor });
        expect(res.status).to.equal(200);
        expect((res.body.transactions as Array<{ date: string }>).map((row) => row.date)).to.deep.equal(['2026-03-03', '2026-03-02']);
      });

      for (const [label, query] of [
        ['dateFrom', { dateFrom: '2026-01-01' }],
        ['dateTo', { dateTo: '2026-12-31' }],
        ['status', { status: 'pending' }],
        ['minCents', { minCents: '0' }],
        ['maxCents', { maxCents: '999999' }],
        ['text', { text: '%' }],
        ['vendorId', { vendorId: randomUUID() }],
        ['accountId', { accountId: randomUUID() }],
      ] as Array<[string, Query]>) {
        it(`refuses a cursor used with a ${label} filter it was not issued under`, async () => {
          expectInvalid(await first({ ...query, cursor }), 'cursor');
        });
      }

      it('refuses a cursor issued under a filter used without it, or with another value', async () => {
        const filtered = (await first({ status: 'pending' })).body.nextCursor as string;
        expect(filtered).to.be.a('string');
        expectInvalid(await first({ cursor: filtered }), 'cursor');
        expectInvalid(await first({ status: 'edited', cursor: filtered }), 'cursor');
        expect((await first({ status: 'pending', cursor: filtered })).status).to.equal(200);
      });

      it('refuses a cursor of another business\'s register (the same account)', async () => {
        expectInvalid(await register(firm.key, { entityId: firm.businesses[1]!.id, limit: 2, cursor }), 'cursor');
      });

      it('refuses a cursor of another account\'s register', async () => {
        const other = buildApiTenant(app);
        for (let i = 1; i <= 3; i++) addTransactionRow(app, other.business, { date: `2026-03-0${i}`, amountCents: 100n });
        const theirs = (await register(other.key, { limit: 2 })).body.nextCursor as string;
        expect(theirs).to.be.a('string');
        expectInvalid(await first({ cursor: theirs }), 'cursor');
        expectInvalid(await register(other.key, { limit: 2, cursor }), 'cursor');
      });

      it('refuses a cursor of GET /customers, random text and a cursor with one character changed', async () => {
        const own = buildApiTenant(app, { plan: 'large' });
        for (const name of ['One', 'Two', 'Three']) await app.post('/api/v1/customers', own.key, { name });
        const customers = (await app.get('/api/v1/customers?limit=1', own.key)).body.nextCursor as string;
        expect(customers).to.be.a('string');
        addTransactionRow(app, own.business, { date: '2026-03-01', amountCents: 100n });
        expectInvalid(await register(own.key, { cursor: customers }), 'cursor');
        expectInvalid(await first({ cursor: 'not-a-cursor' }), 'cursor');
        const middle = Math.floor(cursor.length / 3);
        const changed = `${cursor.slice(0, middle)}${cursor[middle] === 'x' ? 'y' : 'x'}${cursor.slice(middle + 1)}`;
        expectInvalid(await first({ cursor: changed }), 'cursor');
      });
    });
  });

  describe('entity rules (entityId)', () => {
    let firm: ApiTenant;
    let stranger: ApiTenant;
    let limitedKey: string;
    const rows: Record<string, string> = {};
    before(() => {
      firm = buildApiTenant(app, { plan: 'large', businesses: 2 });
      stranger = buildApiTenant(app);
      limitedKey = buildKey(app.db, app.clock, { tenantId: firm.id, businessIds: [firm.businesses[0]!.id] }).key;
      rows.granted = addTransactionRow(app, firm.businesses[0]!, { date: '2026-03-01', amountCents: 100n });
      rows.other = addTransactionRow(app, firm.businesses[1]!, { date: '2026-03-01', amountCents: 200n });
      rows.stranger = addTransactionRow(app, stranger.business, { date: '2026-03-01', amountCents: 300n });
    });

    it('lists the named business\'s register (200), each business its own', async () => {
      expect(ids(await register(firm.key, { entityId: firm.businesses[0]!.id }))).to.deep.equal([rows.granted]);
      expect(ids(await register(firm.key, { entityId: firm.businesses[1]!.id }))).to.deep.equal([rows.other]);
      expect(ids(await register(limitedKey, { entityId: firm.businesses[0]!.id.toUpperCase() }))).to.deep.equal([rows.granted]);
    });

    it('uses the only business a limited key reaches when entityId is omitted (200)', async () => {
      expect(ids(await register(limitedKey))).to.deep.equal([rows.granted]);
      expect(ids(await register(stranger.key))).to.deep.equal([rows.stranger]);
    });

    it('refuses an entityId of a business the key was not given (403 entity_not_allowed)', async () => {
      expectError(await register(limitedKey, { entityId: firm.businesses[1]!.id }), 403, 'entity_not_allowed');
      expectError(await register(limitedKey, { entityId: stranger.business.id }), 403, 'entity_not_allowed');
    });

    it('answers an unlimited key naming another account\'s business with 404 not_found, the same as an unknown business', async () => {
      const foreign = await register(firm.key, { entityId: stranger.business.id });
      expectError(foreign, 404, 'not_found');
      const unknown = await register(firm.key, { entityId: randomUUID() });
      expectError(unknown, 404, 'not_found');
      expect(withoutRequestId(foreign)).to.equal(withoutRequestId(unknown));
    });

    it('refuses an omitted entityId when the key reaches several businesses ("entityId:", 422)', async () => {
      expectInvalid(await register(firm.key), 'entityId');
      const two = buildKey(app.db, app.clock, { tenantId: firm.id, businessIds: firm.businesses.map((b) => b.id) });
      expectInvalid(await register(two.key), 'entityId');
    });

    it('refuses a malformed entityId ("entityId:", 422)', async () => {
      expectInvalid(await register(firm.key, { entityId: 'home' }), 'entityId');
    });
  });

  it('matches text on a Greek vendor name by a substring ending in capital sigma (ΟΔΥΣ finds ΟΔΥΣΣΕΑΣ Travel)', async () => {
    const own = buildApiTenant(app, { plan: 'large' });
    const id = addExpense(app, own.business, { date: '2026-03-02', amountCents: 100n, vendor: { name: 'ΟΔΥΣΣΕΑΣ Travel' }, account: 'Travel' });
    expect(ids(await register(own.key, { text: 'οδυσ' })), 'lower case').to.deep.equal([id]);
    expect(ids(await register(own.key, { text: 'ΟΔΥΣ' })), 'the name\'s own upper case').to.deep.equal([id]);
  });

  it('is readable with a Read only key (200)', async () => {
    const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
    expect((await register(readOnly.key)).status).to.equal(200);
  });
});

describe('GET /transactions/{id}', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useTenantApp((started) => ({ app, tenant } = started), { plan: 'large', businesses: 2 });

  const detail = (id: string, key = tenant.key) => app.get(`/api/v1/transactions/${id}`, key);
  const DETAIL_KEYS = ['account', 'amount', 'date', 'description', 'id', 'lines', 'rationale', 'source', 'status', 'vendor'];

  /** Every line has exactly one side as a USD money object, and the sides balance. */
  function expectBalancedLines(lines: Array<{ account: string; debit: any; credit: any }>): void {
    let debitCents = 0n;
    let creditCents = 0n;
    for (const line of lines) {
      expect(Object.keys(line).sort()).to.deep.equal(['account', 'credit', 'debit']);
      expect((line.debit === null) !== (line.credit === null), `exactly one of debit and credit on ${line.account}`).to.equal(true);
      const side = line.debit ?? line.credit;
      expect(side.currency).to.equal('USD');
      expect(side.cents).to.match(/^[0-9]+$/);
      if (line.debit) debitCents += BigInt(line.debit.cents);
      else creditCents += BigInt(line.credit.cents);
    }
    expect(debitCents, 'debits equal credits').to.equal(creditCents);
  }

  it('answers an expense with the summary fields, description (the memo), rationale null, and its lines: the expense account debited, Business Checking credited', async () => {
    const id = addExpense(app, tenant.business, { date: '2026-03-02', amountCents: 123456n, vendor: { name: 'Staples' }, account: 'Office Supplies', memo: 'Printer paper' });
    const res = await detail(id);
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(DETAIL_KEYS);
    const amount = usdMoney('123456', '$1,234.56');
    expect(res.body).to.deep.equal({
      id,
      date: '2026-03-02',
      amount,
      vendor: 'Staples',
      account: 'Office Supplies',
      status: 'accepted',
      source: 'manual',
      description: 'Printer paper',
      rationale: null,
      lines: [
        { account: 'Office Supplies', debit: amount, credit: null },
        { account: 'Business Checking', debit: null, credit: amount },
      ],
    });
    expectBalancedLines(res.body.lines);
  });

  it('answers description null for an expense recorded without a memo, with the account it was recorded to', async () => {
    const id = addExpense(app, tenant.business, { date: '2026-03-03', amountCents: 250000n, vendor: { name: 'Landlord LLC' }, account: 'Rent' });
    const res = await detail(id);
    expect(res.status).to.equal(200);
    expect(res.body.description).to.equal(null);
    expect(res.body.rationale).to.equal(null);
    const amount = usdMoney('250000', '$2,500.00');
    expect(res.body.lines).to.deep.equal([
      { account: 'Rent', debit: amount, credit: null },
      { account: 'Business Checking', debit: null, credit: amount },
    ]);
  });

  it('shows the same summary fields as the register row', async () => {
    const id = addExpense(app, tenant.businesses[1]!, { date: '2026-03-04', amountCents: 999n, vendor: { name: 'Summary Match' }, account: 'Meals' });
    const res = await detail(id);
    const register = await app.get(`/api/v1/transactions?entityId=${tenant.businesses[1]!.id}`, tenant.key);
    const row = (register.body.transactions as Array<{ id: string }>).find((r) => r.id === id);
    expect(row).to.deep.equal({ id, date: res.body.date, amount: res.body.amount, vendor: res.body.vendor, account: res.body.account, status: res.body.status, source: res.body.source });
  });

  it('answers a pending transaction without a journal entry with lines [], and its description and rationale', async () => {
    const vendorId = addVendor(app, tenant.id, 'Figma Inc');
    const accountId = accountIdByName(app.db, tenant.business.id, 'Software and Subscriptions');
    const id = addTransactionRow(app, tenant.business, {
      date: '2026-03-06',
      amountCents: 1500n,
      vendorId,
      accountId,
      description: 'FIGMA MONTHLY',
      rationale: 'Recurring design software charge',
    });
    const res = await detail(id);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      id,
      date: '2026-03-06',
      amount: usdMoney('1500', '$15.00'),
      vendor: 'Figma Inc',
      account: 'Software and Subscriptions',
      status: 'pending',
      source: 'csv',
      description: 'FIGMA MONTHLY',
      rationale: 'Recurring design software charge',
      lines: [],
    });
  });

  it('answers vendor, account, description and rationale null when the transaction has none', async () => {
    const id = addTransactionRow(app, tenant.business, { date: '2026-03-06', amountCents: 1n, status: 'uncategorized', source: 'ios' });
    const res = await detail(id);
    expect(res.body).to.deep.equal({
      id,
      date: '2026-03-06',
      amount: usdMoney('1', '$0.01'),
      vendor: null,
      account: null,
      status: 'uncategorized',
      source: 'ios',
      description: null,
      rationale: null,
      lines: [],
    });
  });

  describe('lines of the business\'s basis', () => {
    /**
     * One entry with a pair of lines for each basis: both (a bank fee), accrual only (supplies
     * on account) and cash only (the same supplies paid from the bank), and a transaction on it.
     */
    function transactionOnMixedEntry(business: Business): string {
      const id = (name: string) => accountIdByName(app.db, business.id, name);
      const entry = postEntry(app.db, app.clock, TEST_ACTOR, {
        businessId: business.id,
        date: '2026-03-09',
        memo: 'supplies on account',
        sourceType: 'manual',
        lines: [
          { accountId: id('Bank Fees'), direction: 'debit', amountCents: 2500n, basis: 'both' },
          { accountId: id('Business Checking'), direction: 'credit', amountCents: 2500n, basis: 'both' },
          { accountId: id('Office Supplies'), direction: 'debit', amountCents: 30000n, basis: 'accrual' },
          { accountId: id('Accounts Payable'), direction: 'credit', amountCents: 30000n, basis: 'accrual' },
          { accountId: id('Office Supplies'), direction: 'debit', amountCents: 30000n, basis: 'cash' },
          { accountId: id('Business Checking'), direction: 'credit', amountCents: 30000n, basis: 'cash' },
        ],
      });
      return addTransactionRow(app, business, {
        date: '2026-03-09',
        amountCents: 32500n,
        status: 'accepted',
        accountId: id('Office Supplies'),
        journalEntryId: entry.id,
      });
    }
    const fee = usdMoney('2500', '$25.00');
    const supplies = usdMoney('30000', '$300.00');

    it('shows a cash-basis business the lines of basis both and cash, leaving the accrual-only lines out', async () => {
      const cash = buildBusiness(app.db, app.clock, { tenantId: tenant.id, basis: 'cash' });
      const res = await detail(transactionOnMixedEntry(cash));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.lines).to.deep.equal([
        { account: 'Bank Fees', debit: fee, credit: null },
        { account: 'Business Checking', debit: null, credit: fee },
        { account: 'Office Supplies', debit: supplies, credit: null },
        { account: 'Business Checking', debit: null, credit: supplies },
      ]);
      expectBalancedLines(res.body.lines);
    });

    it('shows an accrual-basis business the lines of basis both and accrual, leaving the cash-only lines out', async () => {
      const accrual = buildBusiness(app.db, app.clock, { tenantId: tenant.id, basis: 'accrual' });
      const res = await detail(transactionOnMixedEntry(accrual));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.lines).to.deep.equal([
        { account: 'Bank Fees', debit: fee, credit: null },
        { account: 'Business Checking', debit: null, credit: fee },
        { account: 'Office Supplies', debit: supplies, credit: null },
        { account: 'Accounts Payable', debit: null, credit: supplies },
      ]);
      expectBalancedLines(res.body.lines);
    });
  });

  describe('not found and malformed ids', () => {
    let mine: string;
    let otherBusiness: string;
    let strangers: string;
    let limitedKey: string;
    before(() => {
      mine = addTransactionRow(app, tenant.businesses[0]!, { date: '2026-03-01', amountCents: 100n });
      otherBusiness = addTransactionRow(app, tenant.businesses[1]!, { date: '2026-03-01', amountCents: 100n });
      const stranger = buildApiTenant(app);
      strangers = addTransactionRow(app, stranger.business, { date: '2026-03-01', amountCents: 100n });
      limitedKey = buildKey(app.db, app.clock, { tenantId: tenant.id, businessIds: [tenant.businesses[0]!.id] }).key;
    });

    it('serves a limited key a transaction of its granted business (200, control)', async () => {
      const res = await detail(mine, limitedKey);
      expect(res.status).to.equal(200);
      expect(res.body.id).to.equal(mine);
      expect((await detail(otherBusiness)).status, 'the unlimited key reaches both businesses').to.equal(200);
    });

    it('answers 404 not_found, with identical bodies but for the request id, for an unknown id, another account\'s transaction, and (for a limited key) another business of its own account', async () => {
      const unknown = await detail(randomUUID());
      const foreign = await detail(strangers);
      const ungranted = await detail(otherBusiness, limitedKey);
      for (const res of [unknown, foreign, ungranted]) expectError(res, 404, 'not_found');
      expect(withoutRequestId(foreign)).to.equal(withoutRequestId(unknown));
      expect(withoutRequestId(ungranted)).to.equal(withoutRequestId(unknown));
      expect(new Set([unknown, foreign, ungranted].map((res) => res.body.error.requestId)).size).to.equal(3);
    });

    it('finds a transaction by its id in upper case (200, the same body)', async () => {
      const lower = await detail(mine);
      const upper = await detail(mine.toUpperCase());
      expect(upper.status, upper.text).to.equal(200);
      expect(upper.body).to.deep.equal(lower.body);
      expectError(await detail(otherBusiness.toUpperCase(), limitedKey), 404, 'not_found');
    });

    for (const malformed of ['not-a-uuid', '12345', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', `${randomUUID()}x`, randomUUID().replace(/-/g, '')]) {
      it(`refuses a malformed id ${JSON.stringify(malformed)} ("id:", 422)`, async () => {
        expectInvalid(await detail(malformed), 'id');
      });
    }

    it('refuses query parameters: the id is the whole request ("entityId:", "id:", 422)', async () => {
      expectInvalid(await app.get(`/api/v1/transactions/${mine}?entityId=${tenant.businesses[0]!.id}`, tenant.key), 'entityId');
      expectInvalid(await app.get(`/api/v1/transactions/${mine}?id=${mine}`, tenant.key), 'id');
    });
  });
});
