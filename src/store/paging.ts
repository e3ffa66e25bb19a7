import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { all } from '../db/statements.js';
import { serverSecret } from './secrets.js';
import { validationFailed } from '../errors.js';
import { searchForm } from '../names.js';

/**
 * Cursor paging for every paged list. A cursor is opaque to clients but holds the sort
 * position of the last row served (keyset paging, never an offset), so rows inserted between
 * two page requests are neither repeated nor skipped. It also names its list and a hash of
 * the filters it was issued for, and it is signed with a secret the books keep, so a cursor
 * the server did not issue, or one issued for another list or other filters, is refused.
 */

/** A page of rows and the cursor of the next one (null: the list is complete). */
export interface Page<T> {
  rows: T[];
  nextCursor: string | null;
}

/** Which page a client asked for: the cursor a previous page returned (none: the first), and its size. */
export interface PageRequest {
  cursor?: string | undefined;
  limit: number;
}

/** A list's identity: its name and the filters a cursor is bound to. */
export interface ListScope {
  list: string;
  /** Every filter that shapes the list (not the cursor or the page size), and whose rows they are. */
  filters: Record<string, unknown>;
}

const CURSOR_VERSION = 1;

interface CursorPayload {
  v: number;
  list: string;
  filters: string;
  after: string[];
}

/** Where the page starts: null for the first page, else the sort position the cursor carries. */
export function pageStart(db: Db, scope: ListScope, request: PageRequest): string[] | null {
  return request.cursor === undefined ? null : openCursor(db, scope, request.cursor);
}

/**
 * Serves a page from up to `limit + 1` rows fetched in list order: the extra row only tells
 * that more follow, so a next cursor never leads to an empty page.
 */
export function pageOf<T>(db: Db, scope: ListScope, request: PageRequest, rows: T[], positionOf: (row: T) => string[]): Page<T> {
  if (rows.length <= request.limit) return { rows, nextCursor: null };
  const served = rows.slice(0, request.limit);
  return { rows: served, nextCursor: sealCursor(db, scope, positionOf(served[served.length - 1]!)) };
}

function sealCursor(db: Db, scope: ListScope, after: string[]): string {
  const payload: CursorPayload = { v: CURSOR_VERSION, list: scope.list, filters: filtersHash(scope.filters), after };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${signature(db, body).toString('base64url')}`;
}

function openCursor(db: Db, scope: ListScope, cursor: string): string[] {
  const [body, mac, ...rest] = cursor.split('.');
  if (!body || !mac || rest.length > 0 || !isGenuine(db, body, mac)) {
    throw validationFailed('cursor', 'was not issued by this server; pass nextCursor exactly as a list returned it');
  }
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  if (payload.v !== CURSOR_VERSION || !Array.isArray(payload.after)) {
    throw validationFailed('cursor', 'is from an older version; start the list again without a cursor');
  }
  if (payload.list !== scope.list) throw validationFailed('cursor', 'belongs to another list');
  if (payload.filters !== filtersHash(scope.filters)) {
    throw validationFailed('cursor', 'was issued for other filters; send the same filters as for the first page');
  }
  return payload.after;
}

function signature(db: Db, body: string): Buffer {
  return createHmac('sha256', serverSecret(db, 'cursor_signing')).update(body).digest();
}

/**
 * Compares the signature as the text the server wrote: decoding it first would accept other
 * spellings of the same bytes (the last base64url character carries unused bits).
 */
function isGenuine(db: Db, body: string, mac: string): boolean {
  const presented = Buffer.from(mac, 'utf8');
  const expected = Buffer.from(signature(db, body).toString('base64url'), 'utf8');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Filters in a canonical order, hashed: undefined and absent are the same filter. */
function filtersHash(filters: Record<string, unknown>): string {
  const present = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(present)).digest('base64url');
}

/**
 * A free-text search as a LIKE pattern: the spec makes `%` and `_` wildcards, and the text
 * matches anywhere in the value. The search is put in the form of name_key (searchForm), so the
 * match is case-insensitive in any script and finds what the text reads as.
 */
export function containsPattern(search: string): string {
  return `%${searchForm(search)}%`;
}

/** A search as the cursor binds it: folded, so `ACME` and `acme` (the same search) share cursors. */
export function searchKey(search: string | undefined): string | undefined {
  return search === undefined ? undefined : searchForm(search);
}

/** Filters of a tenant-wide list ordered by name (customers, vendors). */
export interface NameListFilters {
  /** Matched anywhere in the name, case-insensitively; `%` and `_` are wildcards. */
  search?: string;
  includeArchived?: boolean;
}

/** A table listed by its case-folded name: it has tenant_id, name_key, archived and id columns. */
export interface NameListSource {
  list: string;
  table: 'customers' | 'vendors';
  /** The columns to select; name_key and id among them. */
  columns: string;
}

/** The query of one page of a name-ordered list: served by the table's (tenant_id, name_key, id) index. */
export function nameListQuery(
  source: NameListSource,
  tenantId: string,
  filters: NameListFilters,
  after: readonly string[] | null,
  limit: number,
): { sql: string; params: unknown[] } {
  const where = ['tenant_id = ?'];
  const params: unknown[] = [tenantId];
  if (!filters.includeArchived) where.push('archived = 0');
  if (filters.search !== undefined) {
    where.push('name_key LIKE ?');
    params.push(containsPattern(filters.search));
  }
  if (after) {
    where.push('(name_key, id) > (?, ?)');
    params.push(...after);
  }
  return {
    sql: `SELECT ${source.columns} FROM ${source.table} WHERE ${where.join(' AND ')} ORDER BY name_key, id LIMIT ?`,
    params: [...params, limit + 1],
  };
}

/** One page of a tenant's rows by case-folded name, then id. */
export function pageByName<R extends { id: string; name_key: string }>(
  db: Db,
  source: NameListSource,
  tenantId: string,
  filters: NameListFilters,
  request: PageRequest,
): Page<R> {
  const scope: ListScope = { list: source.list, filters: { tenantId, search: searchKey(filters.search), includeArchived: filters.includeArchived ?? false } };
  const query = nameListQuery(source, tenantId, filters, pageStart(db, scope, request), request.limit);
  const rows = all<R>(db, query.sql, ...query.params);
  return pageOf(db, scope, request, rows, (row) => [row.name_key, row.id]);
}
