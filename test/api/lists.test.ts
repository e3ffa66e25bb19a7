import { expect } from 'chai';
import type { TestApp } from '../support/app.js';
import { buildApiTenant, expectError, expectInvalid, type ApiTenant, useTenantApp } from '../support/api.js';
import { buildKey } from '../support/factories.js';
import { addCustomer, addExpense, addVendor, archive, UUID, walkPages, withQuery } from '../support/register.js';

/**
 * GET /customers and GET /vendors: account-wide lists ordered by name (case-insensitively),
 * then id, with search, includeArchived and cursor paging. Each test builds its own account,
 * so every list it reads holds exactly the rows the test made.
 */

/** What the two lists have in common, so one set of tests covers both. */
interface NameList {
  path: string;
  field: 'customers' | 'vendors';
  table: 'customers' | 'vendors';
  /** Adds a row named `name` to the account and returns its id. */
  add(app: TestApp, tenantId: string, name: string): string;
}

const CUSTOMERS: NameList = {
  path: '/api/v1/customers',
  field: 'customers',
  table: 'customers',
  add: (app, tenantId, name) => addCustomer(app, tenantId, { name }),
};

const VENDORS: NameList = {
  path: '/api/v1/vendors',
  field: 'vendors',
  table: 'vendors',
  add: (app, tenantId, name) => addVendor(app, tenantId, name),
};

type Query = Record<string, string | number | boolean | undefined>;

describe('GET /customers', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useTenantApp((started) => ({ app, tenant } = started));

  it('answers {customers, nextCursor} with every field of a customer: id, name, email (string or null), currency, paymentTermsDays (integer or null)', async () => {
    const full = addCustomer(app, tenant.id, { name: 'Acme Roofing', email: 'ap@acme.example', currency: 'CAD', paymentTermsDays: 45, phone: '+1 555 0100', city: 'Springfield' });
    const bare = addCustomer(app, tenant.id, { name: 'Bare Name LLC' });
    const zero = addCustomer(app, tenant.id, { name: 'Zero Terms Co', currency: 'MXN', paymentTermsDays: 0 });

    const res = await app.get('/api/v1/customers', tenant.key);
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['customers', 'nextCursor']);
    expect(res.body.nextCursor).to.equal(null);
    expect(res.body.customers).to.deep.equal([
      { id: full, name: 'Acme Roofing', email: 'ap@acme.example', currency: 'CAD', paymentTermsDays: 45 },
      { id: bare, name: 'Bare Name LLC', email: null, currency: 'USD', paymentTermsDays: null },
      { id: zero, name: 'Zero Terms Co', email: null, currency: 'MXN', paymentTermsDays: 0 },
    ]);
    for (const customer of res.body.customers as Array<Record<string, unknown>>) {
      expect(Object.keys(customer).sort(), 'exactly the spec\'s fields').to.deep.equal(['currency', 'email', 'id', 'name', 'paymentTermsDays']);
      expect(customer.id).to.match(UUID);
      expect(customer.paymentTermsDays === null || Number.isInteger(customer.paymentTermsDays)).to.equal(true);
    }
  });

  it('answers an empty list with nextCursor null for an account with no customers (200)', async () => {
    const empty = buildApiTenant(app);
    const res = await app.get('/api/v1/customers', empty.key);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ customers: [], nextCursor: null });
  });

  it('breaks a tie between names equal but for case by id (an archived Émile Zola and a live émile zola, includeArchived=true)', async () => {
    const own = buildApiTenant(app);
    const upper = addCustomer(app, own.id, { name: 'Émile Zola' });
    archive(app, 'customers', upper);
    const lower = addCustomer(app, own.id, { name: 'émile zola' });
    const emil = addCustomer(app, own.id, { name: 'Emil' });
    const eric = addCustomer(app, own.id, { name: 'Éric Rohmer' });

    const res = await app.get('/api/v1/customers?includeArchived=true', own.key);
    expect(res.status).to.equal(200);
    expect((res.body.customers as Array<{ id: string }>).map((c) => c.id)).to.deep.equal([emil, ...[upper, lower].sort(), eric]);
  });
});

describe('GET /vendors', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useTenantApp((started) => ({ app, tenant } = started));

  it('answers {vendors, nextCursor} with every field of a vendor: id, name (canonical), is1099Eligible (boolean), and nothing else', async () => {
    const eligible = addVendor(app, tenant.id, 'Contractor Jane', { is1099Eligible: true });
    const plain = addVendor(app, tenant.id, 'Office Depot');

    const res = await app.get('/api/v1/vendors', tenant.key);
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['nextCursor', 'vendors']);
    expect(res.body).to.deep.equal({
      vendors: [
        { id: eligible, name: 'Contractor Jane', is1099Eligible: true },
        { id: plain, name: 'Office Depot', is1099Eligible: false },
      ],
      nextCursor: null,
    });
    for (const vendor of res.body.vendors as Array<Record<string, unknown>>) {
      expect(Object.keys(vendor).sort(), 'exactly the spec\'s fields (no archived flag)').to.deep.equal(['id', 'is1099Eligible', 'name']);
      expect(vendor.id).to.match(UUID);
    }
  });

  it('answers an empty list with nextCursor null for an account with no vendors (200)', async () => {
    const empty = buildApiTenant(app);
    const res = await app.get('/api/v1/vendors', empty.key);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ vendors: [], nextCursor: null });
  });

  it('breaks a tie between names equal but for case by id (Émile Zola and émile zola)', async () => {
    const own = buildApiTenant(app);
    const upper = addVendor(app, own.id, 'Émile Zola');
    const lower = addVendor(app, own.id, 'émile zola');
    const eric = addVendor(app, own.id, 'Éric Rohmer');
    const emil = addVendor(app, own.id, 'Emil');

    const res = await app.get('/api/v1/vendors', own.key);
    expect(res.status).to.equal(200);
    expect((res.body.vendors as Array<{ id: string }>).map((v) => v.id)).to.deep.equal([emil, ...[upper, lower].sort(), eric]);
  });

  it('matches search against the canonical name only: an expense memo holding the text does not match', async () => {
    const own = buildApiTenant(app);
    addExpense(app, own.business, { date: '2026-03-02', amountCents: 4200n, vendor: { name: 'Home Depot' }, memo: 'Roofing nails' });
    const roofer = addVendor(app, own.id, 'Peak Roofing');

    const res = await app.get('/api/v1/vendors?search=roofing', own.key);
    expect(res.status).to.equal(200);
    expect(res.body.vendors).to.deep.equal([{ id: roofer, name: 'Peak Roofing', is1099Eligible: false }]);
  });
});

for (const list of [CUSTOMERS, VENDORS]) {
  describe(`GET ${list.path.replace('/api/v1', '')}: account-wide, order, search, includeArchived, paging`, () => {
    let app: TestApp;
    let tenant: ApiTenant;
    useTenantApp((started) => ({ app, tenant } = started));

    const names = (rows: Array<{ name: string }>) => rows.map((row) => row.name);
    const get = (key: string, query: Query = {}) => app.get(withQuery(list.path, query), key);
    /** A fresh account holding exactly `rowNames`; returns it and the ids by name. */
    const accountWith = (rowNames: string[], options: { businesses?: number } = {}) => {
      const account = buildApiTenant(app, { plan: 'large', businesses: options.businesses ?? 1 });
      const ids = new Map(rowNames.map((name) => [name, list.add(app, account.id, name)]));
      return { account, ids };
    };
    const searchFor = async (key: string, search: string): Promise<string[]> => {
      const res = await get(key, { search });
      expect(res.status, `search ${search}: ${res.text.slice(0, 200)}`).to.equal(200);
      return names(res.body[list.field]);
    };

    describe('visibility (read rule 5)', () => {
      it(`shows a key limited to one business every ${list.field.slice(0, -1)} of its account, and none of another account`, async () => {
        const { account, ids } = accountWith(['North Co', 'South Co'], { businesses: 2 });
        const other = accountWith(['Elsewhere Inc', 'North Co']);
        const limited = buildKey(app.db, app.clock, { tenantId: account.id, businessIds: [account.businesses[1]!.id] });

        const res = await get(limited.key);
        expect(res.status, res.text).to.equal(200);
        expect((res.body[list.field] as Array<{ id: string }>).map((row) => row.id)).to.deep.equal([ids.get('North Co'), ids.get('South Co')]);
        const unlimited = await get(account.key);
        expect(unlimited.body).to.deep.equal(res.body);

        const theirs = await get(other.account.key);
        expect((theirs.body[list.field] as Array<{ id: string }>).map((row) => row.id)).to.deep.equal([
          other.ids.get('Elsewhere Inc'),
          other.ids.get('North Co'),
        ]);
      });

      it('refuses an entityId: the list belongs to the account, not a business ("entityId:", 422)', async () => {
        expectInvalid(await get(tenant.key, { entityId: tenant.business.id }), 'entityId');
      });
    });

    describe('order', () => {
      it('orders by name case-insensitively: apple before Banana before cherry, émile before Éric', async () => {
        const { account } = accountWith(['cherry Pie', 'Éric Rohmer', 'Banana Bread', 'émile zola', 'apple Farm', 'Apricot Co', 'banana Boat']);
        const res = await get(account.key);
        expect(res.status).to.equal(200);
        const served = names(res.body[list.field]);
        expect(served).to.have.length(7);
        expect(served.filter((name) => /^[A-Za-z]/.test(name))).to.deep.equal(['apple Farm', 'Apricot Co', 'banana Boat', 'Banana Bread', 'cherry Pie']);
        expect(served.filter((name) => /^[ÉéEe]/.test(name))).to.deep.equal(['émile zola', 'Éric Rohmer']);
      });
    });

    describe('search', () => {
      let key: string;
      before(() => {
        key = accountWith(['ABC Roofing', 'Axc', 'Ac', 'Abbc', 'Bright Abc Ltd', 'Zulu', '100% Cotton', 'snake_case Studio', 'Émile Zola', 'ΟΔΥΣΣΕΑΣ Travel']).account.key;
      });

      it('matches a substring anywhere in the name, case-insensitively', async () => {
        expect(await searchFor(key, 'roof')).to.deep.equal(['ABC Roofing']);
        expect(await searchFor(key, 'ABC')).to.deep.equal(['ABC Roofing', 'Bright Abc Ltd']);
        expect(await searchFor(key, 'c ro')).to.deep.equal(['ABC Roofing']);
        expect(await searchFor(key, 'LTD')).to.deep.equal(['Bright Abc Ltd']);
        expect(await searchFor(key, 'zz')).to.deep.equal([]);
      });

      it('matches beyond ASCII in either case (ÉMILE and émile find Émile Zola)', async () => {
        expect(await searchFor(key, 'ÉMILE')).to.deep.equal(['Émile Zola']);
        expect(await searchFor(key, 'émile z')).to.deep.equal(['Émile Zola']);
        expect(await searchFor(key, 'E\u0301MILE'), 'a combining accent matches its composed form').to.deep.equal(['Émile Zola']);
      });

      it('matches a Greek name by a substring ending in capital sigma, even in the name\'s own case (ΟΔΥΣ and οδυσ find ΟΔΥΣΣΕΑΣ Travel)', async () => {
        expect(await searchFor(key, 'οδυσσεας'), 'the whole word').to.deep.equal(['ΟΔΥΣΣΕΑΣ Travel']);
        expect(await searchFor(key, 'οδυσ'), 'lower case').to.deep.equal(['ΟΔΥΣΣΕΑΣ Travel']);
        expect(await searchFor(key, 'ΟΔΥΣ'), 'the name\'s own upper case').to.deep.equal(['ΟΔΥΣΣΕΑΣ Travel']);
      });

      it('treats % and _ as wildcards: a_c% matches ABC Roofing, Axc and Bright Abc Ltd', async () => {
        expect(await searchFor(key, 'a_c%')).to.deep.equal(['ABC Roofing', 'Axc', 'Bright Abc Ltd']);
        expect(await searchFor(key, 'a%g')).to.deep.equal(['ABC Roofing']);
        expect(await searchFor(key, '%')).to.have.length(10);
      });

      it('lets _ match exactly one character (a_c: not Ac, not Abbc; a__c: Abbc; _mile: Émile)', async () => {
        const oneChar = await searchFor(key, 'a_c');
        expect(oneChar).to.include.members(['ABC Roofing', 'Axc', 'Bright Abc Ltd']);
        expect(oneChar).to.not.include('Ac');
        expect(oneChar).to.not.include('Abbc');
        expect(await searchFor(key, 'a__c')).to.deep.equal(['Abbc']);
        expect(await searchFor(key, '_mile')).to.deep.equal(['Émile Zola']);
      });

      it('accepts a search of 200 characters (200) and refuses 201 ("search:", 422)', async () => {
        const res = await get(key, { search: 'x'.repeat(200) });
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal({ [list.field]: [], nextCursor: null });
        expect((await get(key, { search: 'é'.repeat(200) })).status, '200 characters, not bytes').to.equal(200);
        expectInvalid(await get(key, { search: 'x'.repeat(201) }), 'search');
      });
    });

    describe('includeArchived', () => {
      let key: string;
      let ids: Map<string, string>;
      before(() => {
        const built = accountWith(['Active One', 'Archived Two', 'Active Three']);
        key = built.account.key;
        ids = built.ids;
        archive(app, list.table, ids.get('Archived Two')!);
      });

      it('hides archived rows by default and with includeArchived=false', async () => {
        const byDefault = await get(key);
        expect(names(byDefault.body[list.field])).to.deep.equal(['Active One', 'Active Three']);
        const explicit = await get(key, { includeArchived: 'false' });
        expect(explicit.status).to.equal(200);
        expect(explicit.body).to.deep.equal(byDefault.body);
        expect(await searchFor(key, 'archived')).to.deep.equal([]);
      });

      it('shows archived rows with includeArchived=true, in name order', async () => {
        const res = await get(key, { includeArchived: 'true' });
        expect(res.status).to.equal(200);
        expect(names(res.body[list.field])).to.deep.equal(['Active One', 'Active Three', 'Archived Two']);
        const searched = await get(key, { includeArchived: 'true', search: 'two' });
        expect((searched.body[list.field] as Array<{ id: string }>).map((row) => row.id)).to.deep.equal([ids.get('Archived Two')]);
      });

      for (const value of ['1', 'yes', 'TRUE', '0', '']) {
        it(`refuses includeArchived=${JSON.stringify(value)} ("includeArchived:", 422)`, async () => {
          expectInvalid(await get(key, { includeArchived: value }), 'includeArchived');
        });
      }
    });

    describe('paging', () => {
      const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix} ${String(i + 1).padStart(3, '0')}`);

      it('serves 50 rows by default: 55 rows come as a page of 50 with a nextCursor, then 5 with nextCursor null', async () => {
        const all = numbered('Row', 55);
        const { account } = accountWith([...all].reverse());
        const first = await get(account.key);
        expect(first.status).to.equal(200);
        expect(names(first.body[list.field])).to.deep.equal(all.slice(0, 50));
        expect(first.body.nextCursor).to.be.a('string');
        const second = await get(account.key, { cursor: first.body.nextCursor });
        expect(second.status).to.equal(200);
        expect(names(second.body[list.field])).to.deep.equal(all.slice(50));
        expect(second.body.nextCursor).to.equal(null);
      });

      it('takes limit from 1 to 100 (limit=1 serves one row, limit=100 all 55)', async () => {
        const { account } = accountWith(numbered('Lim', 55));
        const one = await get(account.key, { limit: 1 });
        expect(names(one.body[list.field])).to.deep.equal(['Lim 001']);
        expect(one.body.nextCursor).to.be.a('string');
        const hundred = await get(account.key, { limit: 100 });
        expect(hundred.body[list.field]).to.have.length(55);
        expect(hundred.body.nextCursor).to.equal(null);
      });

      for (const limit of ['0', '101', 'abc', '1.5', '-1', '', '05', '1e1']) {
        it(`refuses limit=${JSON.stringify(limit)} ("limit:", 422)`, async () => {
          expectInvalid(await get(tenant.key, { limit }), 'limit');
        });
      }

      it('returns every row exactly once, in order, following nextCursor with limit=3', async () => {
        const all = numbered('Walk', 11);
        const { account, ids } = accountWith([...all].reverse());
        const walk = await walkPages<{ id: string; name: string }>(app, account.key, list.path, list.field, { limit: 3 });
        expect(walk.pages.map((page) => page.length)).to.deep.equal([3, 3, 3, 2]);
        expect(names(walk.rows)).to.deep.equal(all);
        expect(walk.rows.map((row) => row.id)).to.deep.equal(all.map((name) => ids.get(name)));
      });

      it('pages past the longest names in any script (a cursor holds the last name served)', async () => {
        // 200 characters each (199 and a digit); emoji are two UTF-16 units, ΐ folds to three characters.
        const longest = ['😀', 'ΐ', '中', 'a'].map((char, index) => `${char.repeat(199)}${index}`);
        const { account } = accountWith(longest);
        const walk = await walkPages<{ name: string }>(app, account.key, list.path, list.field, { limit: 1 });
        expect(walk.rows).to.have.length(4);
        expect([...names(walk.rows)].sort()).to.deep.equal([...longest].sort());
        expect(Math.max(...walk.responses.map((res) => String(res.body.nextCursor ?? '').length))).to.be.greaterThan(1000);
      });

      it('returns nextCursor null when the last page is exactly full (6 rows, limit=3: two pages, no empty third)', async () => {
        const all = numbered('Full', 6);
        const { account } = accountWith(all);
        const walk = await walkPages<{ name: string }>(app, account.key, list.path, list.field, { limit: 3 });
        expect(walk.pages.map(names)).to.deep.equal([all.slice(0, 3), all.slice(3)]);
        expect(walk.responses[1]!.body.nextCursor).to.equal(null);

        const exactlyOne = await get(account.key, { limit: 6 });
        expect(exactlyOne.body[list.field]).to.have.length(6);
        expect(exactlyOne.body.nextCursor).to.equal(null);
      });

      it('neither repeats nor skips a row when rows are inserted before and after the position between page requests', async () => {
        const all = ['Kilo 01', 'Kilo 03', 'Kilo 05', 'Kilo 07', 'Kilo 09', 'Kilo 11', 'Kilo 13', 'Kilo 15', 'Kilo 17'];
        const { account, ids } = accountWith(all);
        const inserted: string[][] = [
          ['Alpha New', 'Kilo 02', 'Kilo 06', 'Zulu New'],
          ['Kilo 04', 'Kilo 10', 'Kilo 12'],
          ['Kilo 00', 'Kilo 16'],
        ];
        const walk = await walkPages<{ id: string; name: string }>(app, account.key, list.path, list.field, { limit: 3 }, (pageIndex) => {
          for (const name of inserted[pageIndex] ?? []) list.add(app, account.id, name);
        });
        const servedIds = walk.rows.map((row) => row.id);
        expect(new Set(servedIds).size, 'no row served twice').to.equal(servedIds.length);
        const original = walk.rows.filter((row) => all.includes(row.name));
        expect(original.map((row) => row.id), 'every row that existed, once, in order').to.deep.equal(all.map((name) => ids.get(name)));
        const served = names(walk.rows);
        expect(served, 'the pages read as one list in name order').to.deep.equal([...served].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
      });

      it('pages through rows whose names are equal but for case without a repeat or a skip (by id)', async () => {
        const account = buildApiTenant(app, { plan: 'large' });
        const made: string[] = [];
        for (const name of ['Same Name', 'SAME NAME', 'same name', 'Same name', 'sAME NAME']) {
          const id = list.add(app, account.id, name);
          made.push(id);
          // Customers match by name: archive each so the next of the same name is new.
          if (list.table === 'customers') archive(app, 'customers', id);
        }
        const walk = await walkPages<{ id: string }>(app, account.key, list.path, list.field, { limit: 2, includeArchived: 'true' });
        expect(walk.rows.map((row) => row.id)).to.deep.equal([...made].sort());
      });

      describe('cursors the server did not issue for this list (422 "cursor:")', () => {
        let account: ApiTenant;
        let cursor: string;
        before(async () => {
          account = accountWith(numbered('Cur', 7)).account;
          const first = await get(account.key, { limit: 2 });
          cursor = first.body.nextCursor as string;
          expect(cursor).to.be.a('string');
        });

        it('serves the genuine cursor (control)', async () => {
          const res = await get(account.key, { limit: 2, cursor });
          expect(res.status).to.equal(200);
          expect(names(res.body[list.field])).to.deep.equal(['Cur 003', 'Cur 004']);
        });

        for (const forged of ['abc', 'eyJ2IjoxfQ', 'eyJ2IjoxfQ.c2ln', '..', '.']) {
          it(`refuses random text (${JSON.stringify(forged)})`, async () => {
            expectInvalid(await get(account.key, { cursor: forged }), 'cursor');
          });
        }

        it('refuses an empty cursor', async () => {
          expectInvalid(await get(account.key, { cursor: '' }), 'cursor');
        });

        it('refuses the real cursor with any one character changed (every position)', async () => {
          const accepted: string[] = [];
          for (let at = 0; at < cursor.length; at++) {
            const replacement = cursor[at] === 'A' ? 'B' : 'A';
            const changed = `${cursor.slice(0, at)}${replacement}${cursor.slice(at + 1)}`;
            const res = await get(account.key, { limit: 2, cursor: changed });
            if (res.status !== 422) accepted.push(`position ${at} (${cursor[at]} -> ${replacement}): ${res.status}`);
            else expectInvalid(res, 'cursor');
          }
          expect(accepted, 'altered cursors that were served').to.deep.equal([]);
        });

        it('refuses the real cursor with its last character changed to any other base64url character', async () => {
          const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
          const last = cursor[cursor.length - 1]!;
          const accepted: string[] = [];
          for (const replacement of alphabet) {
            if (replacement === last) continue;
            const res = await get(account.key, { limit: 2, cursor: `${cursor.slice(0, -1)}${replacement}` });
            if (res.status !== 422) accepted.push(`${last} -> ${replacement}: ${res.status}`);
          }
          expect(accepted, 'altered cursors that were served').to.deep.equal([]);
        });

        it('refuses the real cursor with a character added or removed', async () => {
          expectInvalid(await get(account.key, { limit: 2, cursor: `${cursor}A` }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, cursor: cursor.slice(0, -1) }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, cursor: cursor.slice(1) }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, cursor: `${cursor}.` }), 'cursor');
        });

        it(`refuses a cursor issued by the other list (${list === CUSTOMERS ? 'GET /vendors' : 'GET /customers'})`, async () => {
          const other = list === CUSTOMERS ? VENDORS : CUSTOMERS;
          const own = buildApiTenant(app, { plan: 'large' });
          for (const name of numbered('Both', 4)) {
            list.add(app, own.id, name);
            other.add(app, own.id, name);
          }
          const foreign = await app.get(withQuery(other.path, { limit: 2 }), own.key);
          expect(foreign.body.nextCursor).to.be.a('string');
          expectInvalid(await get(own.key, { limit: 2, cursor: foreign.body.nextCursor }), 'cursor');
        });

        it('refuses a cursor issued under another search', async () => {
          const searched = await get(account.key, { limit: 2, search: 'cur' });
          expect(searched.body.nextCursor).to.be.a('string');
          expectInvalid(await get(account.key, { limit: 2, cursor: searched.body.nextCursor }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, search: 'CUR 0', cursor: searched.body.nextCursor }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, search: 'cur', cursor }), 'cursor');
          const same = await get(account.key, { limit: 2, search: 'cur', cursor: searched.body.nextCursor });
          expect(names(same.body[list.field]), 'the same search goes on').to.deep.equal(['Cur 003', 'Cur 004']);
        });

        it('refuses a cursor issued under another includeArchived', async () => {
          const withArchived = await get(account.key, { limit: 2, includeArchived: 'true' });
          expect(withArchived.body.nextCursor).to.be.a('string');
          expectInvalid(await get(account.key, { limit: 2, cursor: withArchived.body.nextCursor }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, includeArchived: 'false', cursor: withArchived.body.nextCursor }), 'cursor');
          expectInvalid(await get(account.key, { limit: 2, includeArchived: 'true', cursor }), 'cursor');
          const explicitFalse = await get(account.key, { limit: 2, includeArchived: 'false', cursor });
          expect(explicitFalse.status, 'includeArchived=false is the default the cursor was issued under').to.equal(200);
        });

        it('refuses a cursor of another account\'s list', async () => {
          const other = accountWith(numbered('Cur', 7)).account;
          const theirs = await get(other.key, { limit: 2 });
          expect(theirs.body.nextCursor).to.be.a('string');
          expectInvalid(await get(account.key, { limit: 2, cursor: theirs.body.nextCursor }), 'cursor');
          expectInvalid(await get(other.key, { limit: 2, cursor }), 'cursor');
        });

        it('serves a cursor with another limit: the limit is not a filter', async () => {
          const res = await get(account.key, { limit: 4, cursor });
          expect(res.status).to.equal(200);
          expect(names(res.body[list.field])).to.deep.equal(['Cur 003', 'Cur 004', 'Cur 005', 'Cur 006']);
        });
      });
    });

    describe('parameters', () => {
      for (const name of ['sort', 'name', 'offset', 'page']) {
        it(`refuses an unknown query parameter ${name} (422 naming it)`, async () => {
          const res = await get(tenant.key, { [name]: 'x' });
          expectInvalid(res, name);
          expect(res.body.error.message).to.contain(name);
        });
      }

      it('refuses a parameter given twice ("search:", 422)', async () => {
        expectInvalid(await app.get(`${list.path}?search=a&search=b`, tenant.key), 'search');
      });

      it('serves a Read only key (200) and refuses a request without a key (401 invalid_key)', async () => {
        const readOnly = buildKey(app.db, app.clock, { tenantId: tenant.id, access: 'read' });
        expect((await get(readOnly.key)).status).to.equal(200);
        expectError(await app.get(list.path, null), 401, 'invalid_key');
      });
    });
  });
}
