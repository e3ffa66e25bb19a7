import type { Db } from './connection.js';
import { stmt } from './statements.js';

/**
 * Values worked out from the access records (keys, accounts, businesses, a key's grants),
 * remembered while those records are exactly as they were when each was worked out. Any
 * change to them, by this connection or another (a `daybook key revoke` in another process,
 * plain SQL), moves the one number in `access_version` (triggers, migration 0018), and the
 * number moving empties the cache, so a change applies on the very next look-up. A write to the
 * books (an expense, a payment) leaves it standing. The principal of a presented API key, with
 * the businesses it reaches, is kept this way (books/keys.ts), so an authenticated request
 * reads one small row instead of the key, its account, its grants and the businesses.
 */

interface Cache {
  version: bigint | number;
  byKey: Map<string, unknown>;
}

/** Values remembered per connection and cache name; past this many the cache starts over. */
const MAX_ENTRIES = 1000;

const caches = new WeakMap<Db, Map<string, Cache>>();

function accessVersion(db: Db): bigint | number {
  const row = stmt(db, 'SELECT version FROM access_version WHERE id = 1').get() as { version: bigint | number } | undefined;
  if (!row) throw new Error('access_version has no row: the books are not migrated');
  return row.version;
}

/** The cache `name` of `db` as of now: emptied first when the access records changed since it was filled. */
function currentCache(db: Db, name: string): Cache {
  const version = accessVersion(db);
  let named = caches.get(db);
  if (!named) caches.set(db, (named = new Map()));
  let cache = named.get(name);
  if (!cache || cache.version !== version) {
    cache = { version, byKey: new Map() };
    named.set(name, cache);
  }
  return cache;
}

/**
 * The value remembered in cache `name` under `key`, else `lookUp`'s answer, remembered when
 * there is one. `lookUp` may read only the access records (what moves the version); one
 * remembered value serves every later caller, so none may change it: `freeze` makes a change
 * throw instead.
 */
export function rememberedWhileAccessUnchanged<T>(db: Db, name: string, key: string, lookUp: () => T | null, freeze: (value: T) => T): T | null {
  const cache = currentCache(db, name);
  const remembered = cache.byKey.get(key) as T | undefined;
  if (remembered !== undefined) return remembered;
  const found = lookUp();
  if (found === null) return null;
  // Inside a transaction the version may yet be rolled back and then reused: nothing is kept.
  if (db.inTransaction) return freeze(found);
  if (cache.byKey.size >= MAX_ENTRIES) cache.byKey.clear();
  const kept = freeze(found);
  cache.byKey.set(key, kept);
  return kept;
}
