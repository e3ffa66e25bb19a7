import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { updateTenant } from '../../src/books/tenants.js';
import {
  KEY_PREFIX,
  authenticateKey,
  createKey,
  fingerprintKey,
  generateKeyValue,
  getKey,
  isWellFormedKey,
  listKeys,
  revokeKey,
} from '../../src/books/keys.js';
import { PLANS, type Plan } from '../../src/books/plans.js';
import { type FixedClock, fixedClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { ApiError } from '../../src/errors.js';
import { type TempDb, freshDb } from '../support/db.js';
import { TEST_ACTOR, buildTenant, buildBusiness, buildKey, testClock } from '../support/factories.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function keyRowCount(db: Db): bigint {
  return (db.prepare('SELECT count(*) AS n FROM api_keys').get() as { n: bigint }).n;
}

function apiErrorOf(work: () => unknown): ApiError {
  try {
    work();
  } catch (error) {
    expect(error).to.be.instanceOf(ApiError);
    return error as ApiError;
  }
  expect.fail('expected an ApiError');
}

describe('API keys', () => {
  describe('key values', () => {
    it('have the dbk_ prefix, 53 characters and a valid checksum', () => {
      const seen = new Set<string>();
      for (let i = 0; i < 200; i += 1) {
        const key = generateKeyValue();
        expect(key.startsWith(KEY_PREFIX)).to.equal(true);
        expect(KEY_PREFIX).to.equal('dbk_');
        expect(key).to.have.lengthOf(53);
        expect(key).to.match(/^dbk_[0-9A-Za-z]{49}$/);
        expect(isWellFormedKey(key)).to.equal(true);
        seen.add(key);
      }
      expect(seen.size).to.equal(200);
    });

    it('any one-character change fails the checksum', () => {
      const key = generateKeyValue();
      let tried = 0;
      for (let position = 0; position < key.length; position += 1) {
        for (const replacement of BASE62 + '_') {
          if (replacement === key[position]) continue;
          const changed = key.slice(0, position) + replacement + key.slice(position + 1);
          expect(isWellFormedKey(changed), `position ${position} -> ${replacement}`).to.equal(false);
          tried += 1;
        }
      }
      expect(tried).to.equal(53 * 62);
    });

    it('refuses other shapes', () => {
      const key = generateKeyValue();
      for (const bad of ['', 'dbk_', key.slice(0, -1), `${key}0`, ` ${key}`, `${key} `, `Bearer ${key}`, key.toUpperCase(), `DBK_${key.slice(4)}`, `sk_${key.slice(3)}`]) {
        expect(isWellFormedKey(bad), JSON.stringify(bad)).to.equal(false);
      }
    });

    it('fingerprintKey is the SHA-256 hex of the key', () => {
      expect(fingerprintKey('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
      const key = generateKeyValue();
      expect(fingerprintKey(key)).to.equal(createHash('sha256').update(key).digest('hex'));
      expect(fingerprintKey(key)).to.match(/^[0-9a-f]{64}$/);
    });
  });

  describe('createKey', () => {
    let temp: TempDb;
    let db: Db;
    let clock: FixedClock;

    beforeEach(async () => {
      temp = await freshDb();
      db = temp.db;
      clock = testClock();
    });

    afterEach(() => temp.close());

    it('stores only the fingerprint: the key appears nowhere in the database file', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id, name: 'Accounting app' });
      db.pragma('wal_checkpoint(TRUNCATE)');
      const bytes = Buffer.concat([readFileSync(temp.path), existsSync(`${temp.path}-wal`) ? readFileSync(`${temp.path}-wal`) : Buffer.alloc(0)]);
      // The fingerprint is there (the search works), the key and its random body are not.
      expect(bytes.includes(fingerprintKey(created.key))).to.equal(true);
      expect(bytes.includes(created.key)).to.equal(false);
      expect(bytes.includes(created.key.slice(KEY_PREFIX.length, -6))).to.equal(false);
      expect(bytes.includes(created.key.slice(10, 30))).to.equal(false);

      const row = db.prepare('SELECT * FROM api_keys WHERE id = ?').get(created.id) as Record<string, unknown>;
      expect(row.fingerprint).to.equal(fingerprintKey(created.key));
      // Only the fingerprint: no column holds any part of the key (spec, Authentication rule 2).
      for (const value of Object.values(row)) {
        if (typeof value === 'string' && value !== row.fingerprint) expect(created.key.includes(value) && value.length >= 4).to.equal(false);
      }
    });

    it('returns the key once with its details', () => {
      const account = buildTenant(db, clock);
      const created = createKey(db, clock, TEST_ACTOR, { tenantId: account.id, name: 'Reports', access: 'read', expiresOn: '2026-12-31' });
      expect(isWellFormedKey(created.key)).to.equal(true);
      expect(created).to.deep.include({
        tenantId: account.id,
        name: 'Reports',
        access: 'read',
        businessIds: null,
        expiresOn: '2026-12-31',
        revokedAt: null,
        createdAt: '2026-03-15T12:00:00.000Z',
        alreadyExpired: false,
      });
      const { key: _key, alreadyExpired: _expired, ...info } = created;
      expect(getKey(db, created.id)).to.deep.equal(info);
      expect(listKeys(db, account.id)).to.deep.equal([info]);
    });

    it('says when an expiry date is already past', () => {
      const account = buildTenant(db, clock);
      expect(buildKey(db, clock, { tenantId: account.id, expiresOn: '2026-03-14' }).alreadyExpired).to.equal(true);
      expect(buildKey(db, clock, { tenantId: account.id, expiresOn: '2026-03-15' }).alreadyExpired).to.equal(false);
    });

    it('refuses a bad name or expiry date', () => {
      const account = buildTenant(db, clock);
      expect(apiErrorOf(() => buildKey(db, clock, { tenantId: account.id, name: ' ' })).message).to.match(/^name:/);
      expect(apiErrorOf(() => buildKey(db, clock, { tenantId: account.id, name: 'x'.repeat(201) })).code).to.equal('validation_failed');
      expect(apiErrorOf(() => buildKey(db, clock, { tenantId: account.id, expiresOn: '2026-02-30' })).code).to.equal('validation_failed');
      expect(keyRowCount(db)).to.equal(0n);
    });

    for (const plan of ['small', 'middle', 'large'] as Plan[]) {
      it(`the ${plan} plan allows ${PLANS[plan].activeKeys} active keys; revoking one frees a slot (409 conflict beyond)`, () => {
        const account = buildTenant(db, clock, { plan });
        const keys = Array.from({ length: PLANS[plan].activeKeys }, () => buildKey(db, clock, { tenantId: account.id }));
        const before = keyRowCount(db);
        const error = apiErrorOf(() => buildKey(db, clock, { tenantId: account.id }));
        expect(error.code).to.equal('conflict');
        expect(error.status).to.equal(409);
        expect(keyRowCount(db)).to.equal(before);

        revokeKey(db, clock, TEST_ACTOR, keys[0]!.id);
        const replacement = buildKey(db, clock, { tenantId: account.id });
        expect(isWellFormedKey(replacement.key)).to.equal(true);
        expect(apiErrorOf(() => buildKey(db, clock, { tenantId: account.id })).code).to.equal('conflict');
        expect(listKeys(db, account.id)).to.have.lengthOf(PLANS[plan].activeKeys + 1);
      });
    }

    it('counts the limit per account', () => {
      const first = buildTenant(db, clock, { plan: 'small' });
      const second = buildTenant(db, clock, { plan: 'small' });
      buildKey(db, clock, { tenantId: first.id });
      buildKey(db, clock, { tenantId: first.id });
      expect(buildKey(db, clock, { tenantId: second.id }).tenantId).to.equal(second.id);
    });

    it('a plan change may not leave more active keys than the new plan allows', () => {
      const account = buildTenant(db, clock, { plan: 'middle' });
      const keys = Array.from({ length: 3 }, () => buildKey(db, clock, { tenantId: account.id }));
      expect(apiErrorOf(() => updateTenant(db, clock, TEST_ACTOR, account.id, { plan: 'small' })).code).to.equal('conflict');
      revokeKey(db, clock, TEST_ACTOR, keys[0]!.id);
      expect(updateTenant(db, clock, TEST_ACTOR, account.id, { plan: 'small' }).plan).to.equal('small');
    });

    it('limits a key to businesses of its own account, listed as businessIds', () => {
      const account = buildTenant(db, clock);
      const a = buildBusiness(db, clock, { tenantId: account.id });
      const b = buildBusiness(db, clock, { tenantId: account.id });
      const limited = buildKey(db, clock, { tenantId: account.id, businessIds: [b.id, a.id, a.id] });
      expect(limited.businessIds).to.deep.equal([a.id, b.id].sort());
      expect(authenticateKey(db, clock, limited.key)?.businessIds).to.deep.equal([a.id, b.id].sort());
    });

    it('refuses a business of another account, and writes nothing', () => {
      const account = buildTenant(db, clock);
      const foreign = buildBusiness(db, clock);
      const error = apiErrorOf(() => buildKey(db, clock, { tenantId: account.id, businessIds: [foreign.id] }));
      expect(error.code).to.equal('validation_failed');
      expect(error.message).to.match(/^business: /);
      expect(apiErrorOf(() => buildKey(db, clock, { tenantId: account.id, businessIds: ['00000000-0000-4000-8000-000000000000'] })).code).to.equal(
        'validation_failed',
      );
      expect(keyRowCount(db)).to.equal(0n);
      expect((db.prepare('SELECT count(*) AS n FROM api_key_businesses').get() as { n: bigint }).n).to.equal(0n);
    });

    it('refuses an unknown account (404 not_found)', () => {
      expect(apiErrorOf(() => buildKey(db, clock, { tenantId: '00000000-0000-4000-8000-000000000000' })).code).to.equal('not_found');
    });

    it('records the creation and revocation in the audit log', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id });
      revokeKey(db, clock, TEST_ACTOR, created.id);
      const actions = db.prepare("SELECT action FROM audit_log WHERE subject_id = ? ORDER BY id").all(created.id) as { action: string }[];
      expect(actions.map((row) => row.action)).to.deep.equal(['api_key.create', 'api_key.revoke']);
    });
  });

  describe('authenticateKey', () => {
    let temp: TempDb;
    let db: Db;
    let clock: FixedClock;

    beforeEach(async () => {
      temp = await freshDb();
      db = temp.db;
      clock = testClock();
    });

    afterEach(() => temp.close());

    it('resolves a working key to its principal', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id, name: 'Ledger sync', access: 'read' });
      const principal = authenticateKey(db, clock, created.key);
      expect(principal).to.not.equal(null);
      expect(principal).to.deep.include({ keyId: created.id, keyName: 'Ledger sync', access: 'read', businessIds: null });
      expect(principal?.tenant.id).to.equal(account.id);
    });

    it('hands every request with a key the one remembered principal, which nothing may change', () => {
      const account = buildTenant(db, clock);
      const business = buildBusiness(db, clock, { tenantId: account.id });
      const created = buildKey(db, clock, { tenantId: account.id, businessIds: [business.id] });
      const first = authenticateKey(db, clock, created.key)!;
      const again = authenticateKey(db, clock, created.key)!;
      expect(again).to.equal(first);
      expect(() => {
        (first as { access: string }).access = 'read_write';
      }).to.throw(TypeError);
      expect(() => {
        (first.tenant as { plan: string }).plan = 'large';
      }).to.throw(TypeError);
      expect(() => (first.businessIds as string[]).push('another')).to.throw(TypeError);
      expect(() => {
        (first.tenant.rateLimit as { mode: string }).mode = 'off';
      }).to.throw(TypeError);
      expect(authenticateKey(db, clock, created.key)).to.deep.include({ access: first.access, businessIds: [business.id] });
    });

    it('returns null for a malformed key', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id });
      const last = created.key.at(-1) === 'a' ? 'b' : 'a';
      for (const bad of ['', 'dbk_', 'not a key', created.key.slice(0, -1) + last, `${created.key}\n`, created.key.toLowerCase()]) {
        if (bad === created.key) continue;
        expect(authenticateKey(db, clock, bad), JSON.stringify(bad)).to.equal(null);
      }
    });

    it('returns null for a well-formed key nobody created', () => {
      buildKey(db, clock, { tenantId: buildTenant(db, clock).id });
      expect(authenticateKey(db, clock, generateKeyValue())).to.equal(null);
    });

    it('returns null for a revoked key, from the next request on, and it cannot return', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id });
      expect(authenticateKey(db, clock, created.key)?.keyId).to.equal(created.id);
      const revoked = revokeKey(db, clock, TEST_ACTOR, created.id);
      expect(revoked).to.include({ alreadyRevoked: false, revokedAt: '2026-03-15T12:00:00.000Z' });
      expect(authenticateKey(db, clock, created.key)).to.equal(null);
      clock.advanceDays(1);
      const again = revokeKey(db, clock, TEST_ACTOR, created.id);
      expect(again).to.include({ alreadyRevoked: true, revokedAt: '2026-03-15T12:00:00.000Z' });
      expect(authenticateKey(db, clock, created.key)).to.equal(null);
    });

    it('a key expiring 2026-03-15 works through the end of that day in UTC', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id, expiresOn: '2026-03-15' });
      const at = fixedClock('2026-03-15T00:00:00.000Z');
      expect(authenticateKey(db, at, created.key)?.keyId).to.equal(created.id);
      at.set('2026-03-15T23:59:59.999Z');
      expect(authenticateKey(db, at, created.key)?.keyId).to.equal(created.id);
      at.set('2026-03-16T00:00:00.000Z');
      expect(authenticateKey(db, at, created.key)).to.equal(null);
      at.advanceDays(30);
      expect(authenticateKey(db, at, created.key)).to.equal(null);
    });

    it('a key created already expired never authenticates', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id, expiresOn: '2026-01-01' });
      expect(created.alreadyExpired).to.equal(true);
      expect(authenticateKey(db, clock, created.key)).to.equal(null);
    });

    it('returns null while the account has no API access', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id });
      updateTenant(db, clock, TEST_ACTOR, account.id, { apiAccess: false });
      expect(authenticateKey(db, clock, created.key)).to.equal(null);
      updateTenant(db, clock, TEST_ACTOR, account.id, { apiAccess: true });
      expect(authenticateKey(db, clock, created.key)?.keyId).to.equal(created.id);

      const closed = buildTenant(db, clock, { apiAccess: false });
      expect(authenticateKey(db, clock, buildKey(db, clock, { tenantId: closed.id }).key)).to.equal(null);
    });

    it('still authenticates while billing is past due (reads keep working)', () => {
      const account = buildTenant(db, clock);
      const created = buildKey(db, clock, { tenantId: account.id });
      updateTenant(db, clock, TEST_ACTOR, account.id, { billingState: 'past_due' });
      expect(authenticateKey(db, clock, created.key)?.tenant.billingState).to.equal('past_due');
    });
  });
});
