import type { Db } from './connection.js';
import { stmt } from './statements.js';

/**
 * Values worked out from the books, remembered while the books are exactly as they were when
 * each was worked out: SQLite's data_version moves when any other connection (a `daybook key
 * revoke` in another process, say) commits, and total_changes when this connection writes
 * anything. Either one moving empties the cache, so a change applies on the very next look-up.
 * The principal of a presented API key is kept this way (books/keys.ts), so an authenticated
 * request costs one small statement instead of three look-ups.
 */

interface Cache {
  version: string;
  byKey: Map<string, unknown>;
}

/** Values remembered per connection and cache name; past this many the cache starts over. */
const MAX_ENTRIES = 1000;

const caches = new WeakMap<Db, Map<string, Cache>>();

/** Two small statements: the pragma run as a pragma costs about 60 % of a SELECT reading it as a table. */
function booksVersion(db: Db): string {
  const version = (stmt(db, 'PRAGMA data_version').get() as { data_version: bigint | number }).data_version;
  const changes = (stmt(db, 'SELECT total_changes() AS changes').get() as { changes: bigint | number }).changes;
  return `${version}:${changes}`;
}

/** The cache `name` of `db` as of now: emptied first when the books changed since it was filled. */
function currentCache(db: Db, name: string): Cache {
  const version = booksVersion(db);
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
 * there is one. One remembered value serves every later caller, so none may change it: `freeze`
 * makes a change throw instead.
 */
export function rememberedWhileUnchanged<T>(db: Db, name: string, key: string, lookUp: () => T | null, freeze: (value: T) => T): T | null {
  const cache = currentCache(db, name);
  const remembered = cache.byKey.get(key) as T | undefined;
  if (remembered !== undefined) return remembered;
  const found = lookUp();
  if (found === null) return null;
  if (cache.byKey.size >= MAX_ENTRIES) cache.byKey.clear();
  const kept = freeze(found);
  cache.byKey.set(key, kept);
  return kept;
}
