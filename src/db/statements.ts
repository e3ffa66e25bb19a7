import type { Statement } from 'better-sqlite3';
import type { Db } from './connection.js';

const caches = new WeakMap<Db, Map<string, Statement>>();

/** A prepared statement, compiled once per connection and reused on every call. */
export function stmt(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    cache.set(sql, prepared);
  }
  return prepared;
}

export function one<T>(db: Db, sql: string, ...params: unknown[]): T | undefined {
  return stmt(db, sql).get(...params) as T | undefined;
}

export function all<T>(db: Db, sql: string, ...params: unknown[]): T[] {
  return stmt(db, sql).all(...params) as T[];
}

export function run(db: Db, sql: string, ...params: unknown[]): { changes: number } {
  const result = stmt(db, sql).run(...params);
  return { changes: Number(result.changes) };
}

/** SQLite INTEGER flags come back as bigint on the books connection. */
export function flag(value: bigint | number | null | undefined): boolean {
  return value === 1n || value === 1;
}

/** A small count or day number from an INTEGER column; asserts it fits a JS number exactly. */
export function int(value: bigint | number | null): number | null {
  if (value === null) return null;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`integer column out of safe range: ${String(value)}`);
  return n;
}
