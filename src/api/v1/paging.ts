import type { NameListFilters, PageRequest } from '../../store/paging.js';
import { DEFAULT_PAGE_SIZE } from '../schemas/common.js';

/** The page a list request asks for: its cursor, and its size (50 unless given). */
export function pageRequestOf(query: { cursor?: string; limit?: number }): PageRequest {
  return { cursor: query.cursor, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

/** The filters of GET /customers and GET /vendors. */
export function nameListFilters(query: { search?: string; includeArchived?: boolean }): NameListFilters {
  return { search: query.search, includeArchived: query.includeArchived };
}
