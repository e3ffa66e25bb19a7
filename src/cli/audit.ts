import type { Command } from 'commander';
import { type AuditFilter, type AuditRow, describeActor, listAudit } from '../store/audit.js';
import { findBusiness, listBusinesses } from '../books/businesses.js';
import { getTenant } from '../books/tenants.js';
import type { Db } from '../db/connection.js';
import { id, integerIn, isoDate, name } from './args.js';
import { action, type CliIo, type CommandContext, withBooks } from './context.js';
import { UsageError } from './errors.js';
import { formatTable } from './output.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 100_000;

interface ListOptions {
  account?: string;
  installation?: boolean;
  business?: string;
  since?: string;
  key?: string;
  limit?: number;
}

const HELP_AFTER = `
Every write to the books appends a row: under the API key's name, the OS user and admin
command for the CLI, or the job's name. Rows are listed newest first. Exchange rates,
restores and migrations belong to no account: list them with --installation.

Examples:
  daybook audit list --account ACCOUNT_ID --since 2026-11-01
  daybook audit list --account ACCOUNT_ID --key "Bookkeeping app" --json
  daybook audit list --installation
`;

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

async function list(options: ListOptions, context: CommandContext): Promise<void> {
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

export function registerAuditCommands(program: Command, io: CliIo): void {
  const group = program.command('audit').description('the audit trail: who wrote what, and when');
  group
    .command('list')
    .description('list audit rows, newest first')
    .option('--account <id>', "the account whose trail to list", id)
    .option('--installation', 'list the installation-wide rows instead: exchange rates, restores, migrations')
    .option('--business <id>', 'only rows about this business', id)
    .option('--since <YYYY-MM-DD>', 'only rows written on or after this day (UTC)', isoDate)
    .option('--key <name>', 'only writes made with API keys of this name', name)
    .option('--limit <n>', `at most this many rows (default ${DEFAULT_LIMIT})`, integerIn(1, MAX_LIMIT))
    .addHelpText('after', HELP_AFTER)
    .action(action(io, list));
}
