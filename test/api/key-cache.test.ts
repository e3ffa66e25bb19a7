import { expect } from 'chai';
import { revokeKey } from '../../src/books/keys.js';
import { updateTenant } from '../../src/books/tenants.js';
import { openDb } from '../../src/db/connection.js';
import { type ApiTenant, expectError, useFreshTenantPerTest } from '../support/api.js';
import type { TestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/factories.js';

/**
 * Authenticated requests reuse the key's principal while the books are unchanged
 * (src/db/data-version-cache.ts, used by src/books/keys.ts). Whatever changes a key or its account must apply on the very
 * next request, whether this server made the change or another process did.
 */
describe('remembered keys: every change to a key or its account applies on the next request', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  useFreshTenantPerTest((started) => ({ app, tenant } = started), { tenant: { businesses: 2 } });

  const businesses = async () => app.get('/api/v1/businesses', tenant.key);

  /** Runs `change` through a second connection to the books file, as `daybook` in another process would. */
  const fromAnotherProcess = (change: (db: ReturnType<typeof openDb>) => void) => {
    const other = openDb(app.dbPath);
    try {
      change(other);
    } finally {
      other.close();
    }
  };

  it('a key revoked by another process is refused on the next request', async () => {
    expect((await businesses()).status).to.equal(200);
    expect((await businesses()).status).to.equal(200);
    fromAnotherProcess((db) => revokeKey(db, app.clock, TEST_ACTOR, tenant.keys[0]!.id));
    expectError(await businesses(), 401, 'invalid_key');
  });

  it("API access turned off through the server's own connection is refused on the next request", async () => {
    expect((await businesses()).status).to.equal(200);
    updateTenant(app.db, app.clock, TEST_ACTOR, tenant.id, { apiAccess: false });
    expectError(await businesses(), 401, 'invalid_key');
  });

  it('a key limited to one business by a plain SQL write elsewhere sees one business next', async () => {
    expect((await businesses()).body.businesses).to.have.lengthOf(2);
    fromAnotherProcess((db) => db.prepare('INSERT INTO api_key_businesses (api_key_id, business_id) VALUES (?, ?)').run(tenant.keys[0]!.id, tenant.businesses[1]!.id));
    expect((await businesses()).body.businesses.map((b: { id: string }) => b.id)).to.deep.equal([tenant.businesses[1]!.id]);
  });

  it('a key past its last day is refused although nothing in the books changed', async () => {
    fromAnotherProcess((db) => db.prepare('UPDATE api_keys SET expires_on = ? WHERE id = ?').run('2026-03-15', tenant.keys[0]!.id));
    expect((await businesses()).status).to.equal(200);
    app.clock.set('2026-03-16T00:00:01.000Z');
    expectError(await businesses(), 401, 'invalid_key');
  });
});
