import { expect } from 'chai';
import { ACTOR_TYPES } from '../../src/store/audit.js';
import { CARD_PROCESSORS } from '../../src/books/card-processors.js';
import { CARD_NOTICE_KINDS, CARD_PAYMENT_SOURCES, CARD_PAYMENT_STATES } from '../../src/books/card-payments.js';
import type { Basis } from '../../src/books/businesses.js';
import { ACCOUNT_TYPES, SYSTEM_ROLES } from '../../src/books/chart.js';
import type { RateSource } from '../../src/books/fx.js';
import { INVOICE_STATUSES, PAYMENT_METHODS } from '../../src/books/invoices.js';
import type { KeyAccess } from '../../src/books/keys.js';
import { type Direction, type LineBasis, SOURCE_TYPES } from '../../src/books/ledger.js';
import { PLAN_NAMES } from '../../src/books/plans.js';
import { BALANCE_SPANS } from '../../src/books/reports/balances.js';
import type { RateLimitSetting, Tenant } from '../../src/books/tenants.js';
import { SERVER_SECRET_NAMES } from '../../src/store/secrets.js';
import { EMAIL_KINDS, EMAIL_STATUSES } from '../../src/store/outbox.js';
import { JOB_NAMES } from '../../src/store/job-runs.js';
import { SIGNAL_SEVERITIES } from '../../src/books/today.js';
import { TRANSACTION_DIRECTIONS, TRANSACTION_SOURCES, TRANSACTION_STATUSES } from '../../src/books/transactions.js';
import type { Db } from '../../src/db/connection.js';
import { CURRENCIES, FOREIGN_CURRENCIES } from '../../src/money.js';
import { type TempDb, freshDb } from '../support/db.js';

/**
 * Every closed list lives twice: as a constant or type in code and as a CHECK (column IN (...))
 * in the schema. This reads the lists from the live schema of a freshly migrated file and
 * compares them with the code, so widening one without the other fails here.
 */

/**
 * The members of the string union T as a list, for the unions code has no array of yet. tsc
 * refuses a list that names a value outside T or misses one of T's, so the list cannot drift
 * from the type (npm run check).
 */
function everyMemberOf<T extends string>() {
  return <const L extends readonly T[]>(list: L & ([Exclude<T, L[number]>] extends [never] ? unknown : { missing: Exclude<T, L[number]> })) => list;
}

interface ClosedList {
  /** table.column */
  column: string;
  /** Where the code keeps the list. */
  code: string;
  values: readonly string[];
}

const CLOSED_LISTS: ClosedList[] = [
  { column: 'customers.currency', code: 'CURRENCIES', values: CURRENCIES },
  { column: 'invoices.currency', code: 'CURRENCIES', values: CURRENCIES },
  { column: 'exchange_rates.currency', code: 'FOREIGN_CURRENCIES', values: FOREIGN_CURRENCIES },
  { column: 'ledger_accounts.system_role', code: 'SYSTEM_ROLES', values: SYSTEM_ROLES },
  { column: 'ledger_accounts.type', code: 'ACCOUNT_TYPES', values: ACCOUNT_TYPES },
  { column: 'journal_entries.source_type', code: 'SOURCE_TYPES', values: SOURCE_TYPES },
  { column: 'tenants.plan', code: 'PLAN_NAMES', values: PLAN_NAMES },
  { column: 'transactions.status', code: 'TRANSACTION_STATUSES', values: TRANSACTION_STATUSES },
  { column: 'transactions.source', code: 'TRANSACTION_SOURCES', values: TRANSACTION_SOURCES },
  { column: 'transactions.direction', code: 'TRANSACTION_DIRECTIONS', values: TRANSACTION_DIRECTIONS },
  { column: 'server_secrets.name', code: 'SERVER_SECRET_NAMES', values: SERVER_SECRET_NAMES },
  { column: 'email_outbox.kind', code: 'EMAIL_KINDS', values: EMAIL_KINDS },
  { column: 'today_signals.severity', code: 'SIGNAL_SEVERITIES', values: SIGNAL_SEVERITIES },
  { column: 'email_outbox.status', code: 'EMAIL_STATUSES', values: EMAIL_STATUSES },
  { column: 'invoices.status', code: 'INVOICE_STATUSES', values: INVOICE_STATUSES },
  { column: 'invoice_payments.method', code: 'PAYMENT_METHODS', values: PAYMENT_METHODS },
  { column: 'job_runs.name', code: 'JOB_NAMES', values: JOB_NAMES },
  // Unions without an array in code: the list here is checked against the type by tsc.
  { column: 'businesses.basis', code: 'Basis', values: everyMemberOf<Basis>()(['accrual', 'cash']) },
  { column: 'journal_lines.direction', code: 'Direction', values: everyMemberOf<Direction>()(['debit', 'credit']) },
  { column: 'journal_lines.basis', code: 'LineBasis', values: everyMemberOf<LineBasis>()(['both', 'accrual', 'cash']) },
  { column: 'ledger_balances.basis', code: 'LineBasis', values: everyMemberOf<LineBasis>()(['both', 'accrual', 'cash']) },
  { column: 'ledger_balances.span', code: 'BALANCE_SPANS', values: BALANCE_SPANS },
  { column: 'api_keys.access', code: 'KeyAccess', values: everyMemberOf<KeyAccess>()(['read', 'read_write']) },
  { column: 'exchange_rates.source', code: 'RateSource', values: everyMemberOf<RateSource>()(['manual', 'frankfurter', 'ecb']) },
  { column: 'audit_log.actor_type', code: 'ACTOR_TYPES', values: ACTOR_TYPES },
  { column: 'card_processors.processor', code: 'CARD_PROCESSORS', values: CARD_PROCESSORS },
  { column: 'card_payments.currency', code: 'CURRENCIES', values: CURRENCIES },
  { column: 'card_payments.received_via', code: 'CARD_PAYMENT_SOURCES', values: CARD_PAYMENT_SOURCES },
  { column: 'card_payments.state', code: 'CARD_PAYMENT_STATES', values: CARD_PAYMENT_STATES },
  { column: 'card_notices.kind', code: 'CARD_NOTICE_KINDS', values: CARD_NOTICE_KINDS },
  { column: 'tenants.billing_state', code: "Tenant['billingState']", values: everyMemberOf<Tenant['billingState']>()(['active', 'past_due']) },
  { column: 'tenants.rate_limit_mode', code: "RateLimitSetting['mode']", values: everyMemberOf<RateLimitSetting['mode']>()(['plan', 'custom', 'off']) },
];

/** CHECK lists no code names yet; the next feature that uses one adds its constant above. */
const NO_CODE_LIST_YET = [
  'idempotency_records.state',
];

const IN_LIST = /CHECK \((\w+) IN \(('[^)]*)\)\)/g;

function tableSql(db: Db, table: string): string {
  const row = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string } | undefined;
  if (!row) throw new Error(`no table ${table} in the schema`);
  return row.sql;
}

function parseValues(list: string): string[] {
  return list.split(',').map((item) => {
    const quoted = /^'([^']*)'$/.exec(item.trim());
    if (!quoted) throw new Error(`not a quoted value: ${item}`);
    return quoted[1]!;
  });
}

/** The values of `table.column`'s CHECK (column IN (...)) in the live schema. */
function schemaList(db: Db, qualified: string): string[] {
  const [table, column] = qualified.split('.') as [string, string];
  const lists = [...tableSql(db, table).matchAll(IN_LIST)].filter((match) => match[1] === column);
  expect(lists, `${qualified} has exactly one CHECK IN list`).to.have.lengthOf(1);
  return parseValues(lists[0]![2]!);
}

/** Every table.column of the schema that has a CHECK list of quoted values. */
function everyListedColumn(db: Db): string[] {
  const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'knex_%' AND name NOT LIKE 'sqlite_%'").all() as {
    name: string;
    sql: string;
  }[];
  return tables.flatMap(({ name, sql }) => [...sql.matchAll(IN_LIST)].map((match) => `${name}.${match[1]}`));
}

describe('closed lists: code constants match the schema’s CHECK lists', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  for (const { column, code, values } of CLOSED_LISTS) {
    it(`${column} allows exactly ${code}`, () => {
      expect(schemaList(temp.db, column)).to.have.members([...values]);
    });
  }

  it('covers every CHECK IN list of the schema, or names it as having no code list yet', () => {
    const covered = new Set([...CLOSED_LISTS.map((list) => list.column), ...NO_CODE_LIST_YET]);
    const uncovered = everyListedColumn(temp.db).filter((column) => !covered.has(column));
    expect(uncovered).to.deep.equal([]);
  });
});
