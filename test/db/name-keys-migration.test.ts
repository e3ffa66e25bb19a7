import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nameKey as frozenNameKey } from '../../src/db/migrations/20261127_0009_name_keys.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { inTransaction, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { foldName, nameKey } from '../../src/names.js';
import { migrateThrough } from '../support/db.js';
import { TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * Migration 0009 on books written before it: every customer's and vendor's name_key, stored
 * as foldName made it (case only), is recomputed as nameKey (NFKC, invisible characters and
 * extra white space aside). Customers that now compare equal keep their ids and are listed in
 * the migration's one log line.
 */
describe('migration 20261127_0009_name_keys on existing books', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-migration-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the migrations still to run on `path`, returning what they wrote to stderr. */
  async function migrateCapturingStderr(path: string): Promise<{ applied: string[]; stderr: string }> {
    let stderr = '';
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    }) as typeof process.stderr.write;
    try {
      const { applied } = await migrateLatest(path);
      return { applied, stderr };
    } finally {
      process.stderr.write = write;
    }
  }

  /** Books through 0008 holding one account ('t', a second 'u'), customers and vendors keyed the old way. */
  async function oldBooks(name: string, customers: Array<[id: string, name: string, tenant?: string]>, vendors: Array<[id: string, name: string]> = []): Promise<string> {
    const path = join(dir, name);
    await migrateThrough(path, '20261123_0008_jobs');
    const db = openDb(path);
    try {
      db.exec(`INSERT INTO tenants (id, name, plan, created_at) VALUES ('t', 'Firm', 'small', '2026-01-01T00:00:00.000Z'), ('u', 'Other Firm', 'small', '2026-01-01T00:00:00.000Z')`);
      const customer = db.prepare('INSERT INTO customers (id, tenant_id, name, name_key, created_at) VALUES (?, ?, ?, ?, ?)');
      customers.forEach(([id, customerName, tenant = 't'], index) => customer.run(id, tenant, customerName, foldName(customerName), `2026-01-0${index + 1}T00:00:00.000Z`));
      const vendor = db.prepare("INSERT INTO vendors (id, tenant_id, name, name_key, created_at) VALUES (?, 't', ?, ?, '2026-01-01T00:00:00.000Z')");
      for (const [id, vendorName] of vendors) vendor.run(id, vendorName, foldName(vendorName));
    } finally {
      db.close();
    }
    return path;
  }

  const rows = (path: string, sql: string): unknown[] => {
    const db = openDb(path);
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  };

  it('recomputes every key, keeps every customer and id, and lists the look-alikes in one log line', async () => {
    const path = await oldBooks(
      'look-alikes.sqlite',
      [
        ['c1', 'Harbor Pine'],
        ['c2', 'Harbor\u00a0Pine'],
        ['c3', 'Ｈａｒｂｏｒ Ｐｉｎｅ'],
        ['c4', 'Har\u200bbor  Pine '],
        ['c5', 'Bay Street Deli'],
        ['c6', 'Harbor Pine', 'u'],
      ],
      [
        ['v1', 'Ｂｌｕｅ\u00a0Bottle'],
        ['v2', 'Acme'],
      ],
    );
    const before = rows(path, 'SELECT id, tenant_id, name, created_at FROM customers ORDER BY id');

    const { applied, stderr } = await migrateCapturingStderr(path);
    expect(applied).to.include('20261127_0009_name_keys');

    expect(rows(path, 'SELECT id, tenant_id, name, created_at FROM customers ORDER BY id'), 'no customer merged, renamed or deleted').to.deep.equal(before);
    expect(rows(path, 'SELECT id, name_key FROM customers ORDER BY id')).to.deep.equal([
      { id: 'c1', name_key: 'harbor pine' },
      { id: 'c2', name_key: 'harbor pine' },
      { id: 'c3', name_key: 'harbor pine' },
      { id: 'c4', name_key: 'harbor pine' },
      { id: 'c5', name_key: 'bay street deli' },
      { id: 'c6', name_key: 'harbor pine' },
    ]);
    expect(rows(path, 'SELECT id, name_key FROM vendors ORDER BY id')).to.deep.equal([
      { id: 'v1', name_key: 'blue bottle' },
      { id: 'v2', name_key: 'acme' },
    ]);

    const lines = stderr.trimEnd().split('\n');
    expect(lines, 'one log line').to.have.length(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).to.deep.include({
      level: 40,
      migration: '20261127_0009_name_keys',
      groups: 1,
      // Oldest first; c6 belongs to another account, so it is no look-alike of these.
      customers: [
        [
          { id: 'c1', name: 'Harbor Pine' },
          { id: 'c2', name: 'Harbor\u00a0Pine' },
          { id: 'c3', name: 'Ｈａｒｂｏｒ Ｐｉｎｅ' },
          { id: 'c4', name: 'Har\u200bbor  Pine ' },
        ],
      ],
    });
    expect(line.msg).to.match(/^customers whose names now compare equal/);
  });

  it('leaves each look-alike reachable by its own exact name, and any other spelling finds the oldest', async () => {
    const path = await oldBooks('reachable.sqlite', [
      ['c1', 'Harbor Pine'],
      ['c2', 'Harbor\u00a0Pine'],
    ]);
    await migrateCapturingStderr(path);
    const db = openDb(path);
    try {
      const find = (name: string) => inTransaction(db, () => findOrCreateCustomer(db, testClock(), TEST_ACTOR, 't', { name }));
      expect(find('Harbor\u00a0Pine')).to.deep.equal({ id: 'c2', created: false });
      expect(find('Harbor Pine')).to.deep.equal({ id: 'c1', created: false });
      expect(find('HARBOR  PINE\u200b')).to.deep.equal({ id: 'c1', created: false });
    } finally {
      db.close();
    }
  });

  it('writes no log line when no customers compare equal, rekeying them all the same', async () => {
    const path = await oldBooks('distinct.sqlite', [
      ['c1', 'Harbor Pine'],
      ['c2', 'Ｂａｙ\u00a0Street Deli'],
    ]);
    const { stderr } = await migrateCapturingStderr(path);
    expect(stderr).to.equal('');
    expect(rows(path, 'SELECT id, name_key FROM customers ORDER BY id')).to.deep.equal([
      { id: 'c1', name_key: 'harbor pine' },
      { id: 'c2', name_key: 'bay street deli' },
    ]);
  });

  it('keys as src/names.ts nameKey does today (a change to either needs a migration of its own)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (name) => frozenNameKey(name) === nameKey(name)),
      { numRuns: 5000 },
    );
    for (const name of ['STRAẞE', 'ΟΔΥΣ', 'ﬁsh\u00ad', 'Ｈａｒｂｏｒ\u3000Pine\u2800', '\ufdfa']) expect(frozenNameKey(name), name).to.equal(nameKey(name));
  });
});
