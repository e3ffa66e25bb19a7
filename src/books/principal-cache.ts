import type { Db } from '../db/connection.js';
import { stmt } from '../db/statements.js';
import type { Principal } from './keys.js';

/**
 * The principals of recently presented keys, so an authenticated request costs one small
 * statement instead of three look-ups. An entry holds only while the books are exactly as they
 * were when it was made: SQLite's data_version moves when any other connection (a `daybook key
 * revoke` in another process, say) commits, and total_changes when this connection writes
 * anything. Either one moving empties the cache, so a revocation, a plan change or a new grant
 * applies on the very next request. Expiry depends on the day, not the data: the caller checks
 * it on every request.
 */

export interface KnownKey {
  principal: Principal;
  expiresOn: string | null;
}

interface Cache {
  version: string;
  byFingerprint: Map<string, KnownKey>;
}

/** Keys remembered per connection; past this many the cache starts over. */
const MAX_KEYS = 1000;

const caches = new WeakMap<Db, Cache>();

/** Two small statements: the pragma run as a pragma costs about 60 % of a SELECT reading it as a table. */
function booksVersion(db: Db): string {
  const version = (stmt(db, 'PRAGMA data_version').get() as { data_version: bigint | number }).data_version;
  const changes = (stmt(db, 'SELECT total_changes() AS changes').get() as { changes: bigint | number }).changes;
  return `${version}:${changes}`;
}

/** The cache for `db` as of now: emptied first when the books changed since it was filled. */
function currentCache(db: Db): Cache {
  const version = booksVersion(db);
  let cache = caches.get(db);
  if (!cache || cache.version !== version) {
    cache = { version, byFingerprint: new Map() };
    caches.set(db, cache);
  }
  return cache;
}

/** The key remembered under `fingerprint`, else `lookUp`'s answer (remembered when there is one). */
export function knownKey(db: Db, fingerprint: string, lookUp: () => KnownKey | null): KnownKey | null {
  const cache = currentCache(db);
  const remembered = cache.byFingerprint.get(fingerprint);
  if (remembered) return remembered;
  const found = lookUp();
  if (!found) return null;
  if (cache.byFingerprint.size >= MAX_KEYS) cache.byFingerprint.clear();
  const kept = frozen(found);
  cache.byFingerprint.set(fingerprint, kept);
  return kept;
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
  Object.freeze(principal);
  return Object.freeze(known);
}
