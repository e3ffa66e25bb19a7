import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { inTransaction, openDb } from '../../src/db/connection.js';
import { TEST_ACTOR, testClock } from '../support/factories.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { migrateThrough } from '../support/db.js';

/** Migration 0004 on books that already hold vendors: their case-folded name keys are filled in. */
describe('migration 20261123_0004_paged_lists on existing books', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-migration-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('fills name_key for every vendor already there, and refolds every customer\'s, in any script', async () => {
    const path = join(dir, 'books.sqlite');
    await migrateThrough(path, '20261123_0003_ledger_guards');
    const before = openDb(path);
    before.exec(`INSERT INTO tenants (id, name, plan, created_at) VALUES ('t', 'Firm', 'small', '2026-01-01T00:00:00.000Z')`);
    const insert = before.prepare("INSERT INTO vendors (id, tenant_id, name, created_at) VALUES (?, 't', ?, '2026-01-01T00:00:00.000Z')");
    insert.run('v1', 'ÉCOLE Supplies');
    insert.run('v2', 'ACME');
    // A customer stored with the earlier folding (lower case only).
    before.exec(`INSERT INTO customers (id, tenant_id, name, name_key, created_at) VALUES ('c1', 't', 'Straße Bäckerei', 'straße bäckerei', '2026-01-01T00:00:00.000Z')`);
    before.close();

    expect((await migrateLatest(path)).applied).to.include('20261123_0004_paged_lists');
    const after = openDb(path);
    try {
      const keys = after.prepare('SELECT id, name_key FROM vendors ORDER BY id').all();
      expect(keys).to.deep.equal([
        { id: 'v1', name_key: 'école supplies' },
        { id: 'v2', name_key: 'acme' },
      ]);
      expect(after.prepare('SELECT name_key FROM customers').get()).to.deep.equal({ name_key: 'strasse bäckerei' });
    } finally {
      after.close();
    }
  });

  it('keeps two customers whose names now fold alike each reachable by its own exact name', async () => {
    const path = join(dir, 'collide.sqlite');
    await migrateThrough(path, '20261123_0003_ledger_guards');
    const before = openDb(path);
    before.exec(`INSERT INTO tenants (id, name, plan, created_at) VALUES ('t', 'Firm', 'small', '2026-01-01T00:00:00.000Z')`);
    const insert = before.prepare("INSERT INTO customers (id, tenant_id, name, name_key, created_at) VALUES (?, 't', ?, ?, ?)");
    insert.run('c1', 'Straße GmbH', 'straße gmbh', '2026-01-01T00:00:00.000Z');
    insert.run('c2', 'STRASSE GMBH', 'strasse gmbh', '2026-01-02T00:00:00.000Z');
    before.close();

    await migrateLatest(path);
    const after = openDb(path);
    try {
      const find = (name: string) => inTransaction(after, () => findOrCreateCustomer(after, testClock(), TEST_ACTOR, 't', { name }));
      expect(find('STRASSE GMBH')).to.deep.equal({ id: 'c2', created: false });
      expect(find('Straße GmbH')).to.deep.equal({ id: 'c1', created: false });
      // Any other spelling finds the oldest of the two.
      expect(find('strasse gmbh')).to.deep.equal({ id: 'c1', created: false });
    } finally {
      after.close();
    }
  });

  it('refuses a vendor written without its folded name key', async () => {
    const path = join(dir, 'fresh.sqlite');
    await migrateLatest(path);
    const db = openDb(path);
    try {
      db.exec(`INSERT INTO tenants (id, name, plan, created_at) VALUES ('t', 'Firm', 'small', '2026-01-01T00:00:00.000Z')`);
      expect(() => db.prepare("INSERT INTO vendors (id, tenant_id, name, created_at) VALUES ('v', 't', 'Acme', '2026-01-01T00:00:00.000Z')").run()).to.throw(
        /vendors\.name_key must be the folded name/,
      );
    } finally {
      db.close();
    }
  });
});

