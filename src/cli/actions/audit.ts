import { type AuditFilter, type AuditRow, describeActor, listAudit } from '../../store/audit.js';
import { findBusiness, listBusinesses } from '../../books/businesses.js';
import { getTenant } from '../../books/tenants.js';
import type { Db } from '../../db/connection.js';
import { type CommandContext, withBooks } from '../context.js';
import { UsageError } from '../errors.js';
import { formatTable } from '../output.js';

const DEFAULT_LIMIT = 100;

interface ListOptions {
  account?: string;
  installation?: boolean;
  business?: string;
  since?: string;
  key?: string;
  limit?: number;
}

/** The rows asked for, one more than the limit to know whether others remain, and the business names to print. */
function readAudit(db: Db, options: ListOptions): { rows: AuditRow[]; businessNames: Map<string, string> } {
  const scope = scopeOf(options);
  if (scope !== 'installation') {
    const account = getTenant(db, scope.accountId);
    if (options.business !== undefined && findBusiness(db, options.business)?.tenantId !== account.id) {
      throw new UsageError(`business ${options.business} is not one of account ${account.id}'s businesses`);
    }
  }
  const filter: AuditFilter = {
    scope,
    limit: (options.limit ?? DEFAULT_LIMIT) + 1,
    ...(options.business !== undefined ? { businessId: options.business } : {}),
    ...(options.since !== undefined ? { since: options.since } : {}),
    ...(options.key !== undefined ? { keyName: options.key } : {}),
  };
  const businesses = scope === 'installation' ? [] : listBusinesses(db, scope.accountId);
  return { rows: listAudit(db, filter), businessNames: new Map(businesses.map((business) => [business.id, business.name])) };
}

function scopeOf(options: ListOptions): AuditFilter['scope'] {
  if (options.installation === true) {
    if (options.account !== undefined) throw new UsageError('give --account ID or --installation, not both');
    if (options.business !== undefined || options.key !== undefined) {
      throw new UsageError('installation-wide rows belong to no business and no key: --business and --key need --account');
    }
    return 'installation';
  }
  if (options.account === undefined) throw new UsageError('say whose trail: --account ID, or --installation for rates, restores and migrations');
  return { accountId: options.account };
}

function describeRecord(row: AuditRow): string {
  if (row.subjectType === null) return '';
  return row.subjectId === null ? row.subjectType : `${row.subjectType} ${row.subjectId}`;
}

export async function list(options: ListOptions, context: CommandContext): Promise<void> {
  const limit = options.limit ?? DEFAULT_LIMIT;
  const { rows: read, businessNames } = await withBooks(context, (db) => readAudit(db, options));
  const rows = read.slice(0, limit);
  if (read.length > limit) context.out.note(`showing the newest ${limit} rows; older ones remain (raise --limit, or narrow with --since)`);
  const table = formatTable(
    ['WHEN', 'WHO', 'WHAT', 'RECORD', 'BUSINESS'],
    rows.map((row) => [
      row.at,
      describeActor(row.actor),
      row.action,
      describeRecord(row),
      row.businessId === null ? '' : (businessNames.get(row.businessId) ?? row.businessId),
    ]),
  );
  context.out.result({ rows, more: read.length > limit }, rows.length === 0 ? ['No audit rows.'] : table);
}

