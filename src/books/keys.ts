import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Clock } from '../clock.js';
import { nowIso, todayUtc } from '../clock.js';
import { isIsoDate } from '../dates.js';
import { assertName } from '../names.js';
import type { Db } from '../db/connection.js';
import { inTransaction } from '../db/connection.js';
import { all, one, run } from '../db/statements.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { type Tenant, countActiveKeys, findTenant, getTenant } from './tenants.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { type Business, findBusiness, listBusinesses } from './businesses.js';
import { newId } from '../ids.js';
import { rememberedWhileAccessUnchanged } from '../db/access-cache.js';
import { PLANS } from './plans.js';

/**
 * API keys look like `dbk_<43 base62 chars of 32 random bytes><6 base62 chars of CRC32>`.
 * The fixed prefix lets secret scanners find leaked keys and the checksum lets them (and us)
 * reject typos without a database look-up. Only the SHA-256 fingerprint is stored.
 */
export const KEY_PREFIX = 'dbk_';
const BODY_CHARS = 43;
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_CHARS}}[0-9A-Za-z]{${CHECKSUM_CHARS}}$`);

export type KeyAccess = 'read' | 'read_write';

function base62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = BASE62[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  if (out.length > width) throw new Error(`base62: value needs more than ${width} characters`);
  return out.padStart(width, '0');
}

function checksum(prefixAndBody: string): string {
  return base62(BigInt(crc32(Buffer.from(prefixAndBody, 'ascii'))), CHECKSUM_CHARS);
}

/** A fresh key value: prefix, 32 random bytes in base62, CRC32 checksum. */
export function generateKeyValue(): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_CHARS);
  const prefixAndBody = KEY_PREFIX + body;
  return prefixAndBody + checksum(prefixAndBody);
}

/** True when the value has the key shape and its checksum matches (no database look-up). */
export function isWellFormedKey(value: string): boolean {
  if (!KEY_PATTERN.test(value)) return false;
  const split = value.length - CHECKSUM_CHARS;
  return checksum(value.slice(0, split)) === value.slice(split);
}

export function fingerprintKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export interface ApiKeyInfo {
  id: string;
  tenantId: string;
  name: string;
  access: KeyAccess;
  businessIds: string[] | null;
  expiresOn: string | null;
  revokedAt: string | null;
  createdAt: string;
}

interface KeyRow {
  id: string;
  tenant_id: string;
  name: string;
  fingerprint: string;
  access: KeyAccess;
  expires_on: string | null;
  revoked_at: string | null;
  created_at: string;
}

function grantedBusinessIds(db: Db, keyId: string): string[] | null {
  const rows = all<{ business_id: string }>(
    db,
    'SELECT business_id FROM api_key_businesses WHERE api_key_id = ? ORDER BY business_id',
    keyId,
  );
  return rows.length === 0 ? null : rows.map((row) => row.business_id);
}

function toKeyInfo(db: Db, row: KeyRow): ApiKeyInfo {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    access: row.access,
    businessIds: grantedBusinessIds(db, row.id),
    expiresOn: row.expires_on,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
  };
}

export interface CreateKeyInput {
  tenantId: string;
  name: string;
  access: KeyAccess;
  businessIds?: string[];
  expiresOn?: string | null;
}

export interface CreatedKey extends ApiKeyInfo {
  /** The key itself: shown once, never stored. */
  key: string;
  /** True when expiresOn is already past: the key exists but cannot authenticate. */
  alreadyExpired: boolean;
}

export function createKey(db: Db, clock: Clock, actor: Actor, input: CreateKeyInput): CreatedKey {
  assertName('name', input.name);
  if (input.expiresOn != null && !isIsoDate(input.expiresOn)) throw validationFailed('expires', 'must be a date YYYY-MM-DD');
  const businessIds = [...new Set(input.businessIds ?? [])];
  const value = generateKeyValue();
  const id = newId();
  return inTransaction(db, () => {
    const tenant = getTenant(db, input.tenantId);
    for (const businessId of businessIds) {
      if (findBusiness(db, businessId)?.tenantId !== tenant.id) {
        throw validationFailed('business', `${businessId} is not a business of account ${tenant.id}`);
      }
    }
    const allowed = PLANS[tenant.plan].activeKeys;
    if (countActiveKeys(db, tenant.id) >= allowed) {
      throw new ApiError('conflict', `the ${tenant.plan} plan allows ${allowed} active keys; revoke one first or change the plan`);
    }
    run(
      db,
      `INSERT INTO api_keys (id, tenant_id, name, fingerprint, access, expires_on, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      id,
      tenant.id,
      input.name,
      fingerprintKey(value),
      input.access,
      input.expiresOn ?? null,
      nowIso(clock),
    );
    for (const businessId of businessIds) {
      run(db, 'INSERT INTO api_key_businesses (api_key_id, business_id) VALUES (?, ?)', id, businessId);
    }
    recordAudit(db, clock, actor, {
      tenantId: tenant.id,
      action: 'api_key.create',
      subjectType: 'api_key',
      subjectId: id,
      detail: { name: input.name, access: input.access, businessIds, expiresOn: input.expiresOn ?? null },
    });
    const info = getKey(db, id);
    return { ...info, key: value, alreadyExpired: info.expiresOn !== null && info.expiresOn < todayUtc(clock) };
  });
}

export function getKey(db: Db, id: string): ApiKeyInfo {
  const row = one<KeyRow>(db, 'SELECT * FROM api_keys WHERE id = ?', id);
  if (!row) throw notFound('key');
  return toKeyInfo(db, row);
}

export function listKeys(db: Db, tenantId: string): ApiKeyInfo[] {
  getTenant(db, tenantId);
  return all<KeyRow>(db, 'SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id', tenantId).map((row) =>
    toKeyInfo(db, row),
  );
}

/** Revokes a key for every later request; a revoked key stays in history and cannot return. */
export function revokeKey(db: Db, clock: Clock, actor: Actor, id: string): ApiKeyInfo & { alreadyRevoked: boolean } {
  return inTransaction(db, () => {
    const key = getKey(db, id);
    if (key.revokedAt !== null) return { ...key, alreadyRevoked: true };
    run(db, 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', nowIso(clock), id);
    recordAudit(db, clock, actor, { tenantId: key.tenantId, action: 'api_key.revoke', subjectType: 'api_key', subjectId: id });
    return { ...getKey(db, id), alreadyRevoked: false };
  });
}

/** What a request knows about its caller once the key checked out. */
export interface Principal {
  keyId: string;
  keyName: string;
  access: KeyAccess;
  tenant: Tenant;
  /** null: every business of the tenant. */
  businessIds: string[] | null;
  /** The businesses the key reaches, by name, as they were when the key was looked up. */
  reachable: readonly Business[];
}

/**
 * Resolves a presented key to its principal, or null for every kind of failure alike:
 * malformed, unknown, revoked, expired (after the end of its day in UTC), or a tenant
 * without API access. Callers must not tell these apart.
 */
export function authenticateKey(db: Db, clock: Clock, presented: string): Principal | null {
  if (!isWellFormedKey(presented)) return null;
  const fingerprint = fingerprintKey(presented);
  const known = rememberedWhileAccessUnchanged(db, 'api keys', fingerprint, () => lookUpKey(db, fingerprint), frozen);
  if (!known) return null;
  if (known.expiresOn !== null && todayUtc(clock) > known.expiresOn) return null;
  return known.principal;
}

/** A presented key's principal, with the last day it works. */
interface KnownKey {
  principal: Principal;
  expiresOn: string | null;
}

/**
 * One remembered principal serves every request made with its key, so none may change it: a
 * change made for one request would be seen by the next. Frozen, a change throws instead.
 */
function frozen(known: KnownKey): KnownKey {
  const { principal } = known;
  Object.freeze(principal.tenant.rateLimit);
  Object.freeze(principal.tenant);
  if (principal.businessIds) Object.freeze(principal.businessIds);
  for (const business of principal.reachable) Object.freeze(business);
  Object.freeze(principal.reachable);
  Object.freeze(principal);
  return Object.freeze(known);
}

/** A key that is neither revoked nor of a tenant without API access, with its expiry. */
function lookUpKey(db: Db, fingerprint: string): KnownKey | null {
  const row = one<KeyRow>(db, 'SELECT * FROM api_keys WHERE fingerprint = ?', fingerprint);
  if (!row || row.revoked_at !== null) return null;
  const tenant = findTenant(db, row.tenant_id);
  if (!tenant || !tenant.apiAccess) return null;
  const businessIds = grantedBusinessIds(db, row.id);
  return {
    principal: { keyId: row.id, keyName: row.name, access: row.access, tenant, businessIds, reachable: listBusinesses(db, tenant.id, businessIds) },
    expiresOn: row.expires_on,
  };
}

/** Writes are recorded in the audit log under the key's name. */
export function actorOf(principal: Principal): Actor {
  return { type: 'api_key', id: principal.keyId, name: principal.keyName };
}
