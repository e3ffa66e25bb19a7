import { expect } from 'chai';
import { CUSTOMER_LIST } from '../../src/books/customers.js';
import { nameListQuery } from '../../src/store/paging.js';
import { IMPORTED_IN_DATES_SQL, ROWS_IN_DATES_SQL } from '../../src/books/import/bank-import.js';
import { BOOKED_PAYMENTS_SQL } from '../../src/books/recorded-match.js';
import { registerQuery, type TransactionFilters } from '../../src/books/transactions.js';
import { VENDOR_LIST } from '../../src/books/vendors.js';
import type { Db } from '../../src/db/connection.js';
import { freshDb, type TempDb } from '../support/db.js';

/**
 * Every paged query is served by an index in its own order: SQLite never sorts a whole list
 * to serve one page (no "USE TEMP B-TREE FOR ORDER BY"), whichever filters are combined.
 */

function plan(db: Db, query: { sql: string; params: unknown[] }): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(...query.params) as { detail: string }[]).map((row) => row.detail);
}

const ONE_OF_EACH: Required<TransactionFilters> = {
  dateFrom: '2026-01-01',
  dateTo: '2026-12-31',
  vendorId: '00000000-0000-4000-8000-000000000001',
  accountId: '00000000-0000-4000-8000-000000000002',
  text: 'acme',
  status: 'accepted',
  minCents: 100n,
  maxCents: 10_000n,
};

/** Every combination of the register's filters: 2^8 of them. */
function everyFilterCombination(): TransactionFilters[] {
  const names = Object.keys(ONE_OF_EACH) as (keyof TransactionFilters)[];
  return Array.from({ length: 2 ** names.length }, (_, mask) =>
    Object.fromEntries(names.filter((_, bit) => mask & (1 << bit)).map((name) => [name, ONE_OF_EACH[name]])),
  );
}

describe('query plans of the paged lists', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it('serves every filter combination of GET /transactions, first page and later ones, from a register index without sorting', () => {
    const after = ['2026-06-01', '2026-06-01T12:00:00.000Z', '00000000-0000-4000-8000-000000000009'];
    for (const filters of everyFilterCombination()) {
      for (const position of [null, after]) {
        const steps = plan(temp.db, registerQuery('b', filters, position, 50));
        const label = `${JSON.stringify(filters, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))} after=${String(position !== null)}`;
        expect(steps.some((step) => /TEMP B-TREE/.test(step)), `sorts for ${label}: ${steps.join(' | ')}`).to.equal(false);
        expect(steps[0], label).to.match(/^SEARCH t USING INDEX transactions_register(_vendor|_account|_status)? \(business_id=\?/);
      }
    }
  });

  it('uses the narrowest index for a vendor, an account or a status', () => {
    expect(plan(temp.db, registerQuery('b', { vendorId: 'v' }, null, 50))[0]).to.contain('transactions_register_vendor');
    expect(plan(temp.db, registerQuery('b', { accountId: 'a' }, null, 50))[0]).to.contain('transactions_register_account');
    expect(plan(temp.db, registerQuery('b', { status: 'pending' }, null, 50))[0]).to.contain('transactions_register_status');
  });

  for (const source of [CUSTOMER_LIST, VENDOR_LIST]) {
    it(`serves GET /${source.list} from its (tenant_id, name_key, id) index without sorting, with any filters`, () => {
      for (const filters of [{}, { search: 'a_c%' }, { includeArchived: true }, { search: 'x', includeArchived: true }]) {
        for (const position of [null, ['acme', '00000000-0000-4000-8000-000000000001']]) {
          const steps = plan(temp.db, nameListQuery(source, 't', filters, position, 50));
          expect(steps.join(' | ')).to.match(new RegExp(`^SEARCH ${source.table} USING (COVERING )?INDEX ${source.table}_tenant_name \\(tenant_id=\\?`));
          expect(steps.some((step) => /TEMP B-TREE/.test(step))).to.equal(false);
        }
      }
    });
  }
});

describe('query plans of the import\'s fingerprints and the "already recorded" measure', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it('reads the latest payments down the register index, never the whole table, and never sorts them', () => {
    const steps = plan(temp.db, { sql: BOOKED_PAYMENTS_SQL, params: ['b', 4000] });
    expect(steps.join('\n')).to.match(/SEARCH transactions USING INDEX transactions_register \(business_id=\?\)/);
    expect(steps.join('\n')).not.to.match(/SCAN transactions|TEMP B-TREE FOR ORDER BY/);
  });

  it('counts, then reads the fingerprints of, an import\'s dates down the register index (the count from the index alone)', () => {
    const steps = plan(temp.db, { sql: IMPORTED_IN_DATES_SQL, params: ['b', '2026-01-01', '2026-03-31'] });
    expect(steps.join('\n')).to.match(/SEARCH transactions USING INDEX transactions_register \(business_id=\? AND txn_date>\? AND txn_date<\?\)/);
    const count = plan(temp.db, { sql: ROWS_IN_DATES_SQL, params: ['b', '2026-01-01', '2026-03-31'] });
    expect(count.join('\n')).to.match(/SEARCH transactions USING COVERING INDEX transactions_register \(business_id=\? AND txn_date>\? AND txn_date<\?\)/);
  });
});
