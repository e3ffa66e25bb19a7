import type { Clock } from '../clock.js';
import { nowIso } from '../clock.js';
import { assertInTransaction, type Db } from '../db/connection.js';
import { all, flag, one, run } from '../db/statements.js';
import { conflict, notFound } from '../errors.js';
import { type Actor, recordAudit } from '../store/audit.js';
import { newId } from '../ids.js';

export const ACCOUNT_TYPES = ['asset', 'liability', 'equity', 'revenue', 'expense'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

export const SYSTEM_ROLES = [
  'bank',
  'accounts_receivable',
  'accounts_payable',
  'sales_tax_payable',
  'owner_equity',
  'retained_earnings',
  'sales',
  'uncategorized_expense',
  'fx_gain_loss',
  'card_clearing',
  'payment_fees',
  'customer_deposits',
] as const;
export type SystemRole = (typeof SYSTEM_ROLES)[number];

/**
 * The system accounts an expense may be booked to, by hand or from the review queue: they are
 * expenses Daybook also posts to itself (processor fees it takes from card payments; fees it
 * bills apart, such as a monthly charge, are the firm's to book). Every other system account
 * holds a balance Daybook keeps (the bank, receivables, payables, tax, equity, realised FX).
 */
export const EXPENSE_SYSTEM_ROLES: ReadonlySet<SystemRole> = new Set(['uncategorized_expense', 'payment_fees']);

/** Whether an account of this system role (null: none) may take an expense. */
export function takesExpenses(role: SystemRole | null): boolean {
  return role === null || EXPENSE_SYSTEM_ROLES.has(role);
}

/** Parent names are joined with this to form an account's `path`. */
export const PATH_SEPARATOR = ' > ';

interface ChartTemplate {
  code: string;
  name: string;
  role?: SystemRole;
  children?: ChartTemplate[];
}

/** The standard small-business chart every new business starts with. */
export const STANDARD_CHART: Record<AccountType, ChartTemplate> = {
  asset: {
    code: '1000',
    name: 'Assets',
    children: [
      {
        code: '1100',
        name: 'Cash and Bank',
        children: [
          { code: '1110', name: 'Business Checking', role: 'bank' },
          { code: '1120', name: 'Business Savings' },
          { code: '1130', name: 'Card Payments Clearing', role: 'card_clearing' },
        ],
      },
      { code: '1200', name: 'Accounts Receivable', role: 'accounts_receivable' },
      { code: '1300', name: 'Prepaid Expenses' },
      { code: '1500', name: 'Equipment' },
    ],
  },
  liability: {
    code: '2000',
    name: 'Liabilities',
    children: [
      { code: '2100', name: 'Accounts Payable', role: 'accounts_payable' },
      { code: '2200', name: 'Sales Tax Payable', role: 'sales_tax_payable' },
      { code: '2300', name: 'Business Credit Card' },
      { code: '2400', name: 'Customer Deposits', role: 'customer_deposits' },
    ],
  },
  equity: {
    code: '3000',
    name: 'Equity',
    children: [
      { code: '3100', name: "Owner's Equity", role: 'owner_equity' },
      { code: '3200', name: "Owner's Draws" },
      { code: '3900', name: 'Retained Earnings', role: 'retained_earnings' },
    ],
  },
  revenue: {
    code: '4000',
    name: 'Revenue',
    children: [
      { code: '4100', name: 'Sales', role: 'sales' },
      { code: '4200', name: 'Service Revenue' },
      { code: '4900', name: 'Other Income' },
    ],
  },
  expense: {
    code: '6000',
    name: 'Expenses',
    children: [
      {
        code: '6100',
        name: 'Operating Expenses',
        children: [
          { code: '6110', name: 'Advertising and Marketing' },
          { code: '6120', name: 'Bank Fees' },
          { code: '6125', name: 'Payment Processing Fees', role: 'payment_fees' },
          { code: '6130', name: 'Contractors' },
          { code: '6140', name: 'Insurance' },
          { code: '6150', name: 'Meals' },
          { code: '6160', name: 'Office Supplies' },
          { code: '6170', name: 'Professional Fees' },
          { code: '6180', name: 'Rent' },
          { code: '6190', name: 'Software and Subscriptions' },
          { code: '6200', name: 'Travel' },
          { code: '6210', name: 'Utilities' },
          { code: '6990', name: 'Uncategorized Expense', role: 'uncategorized_expense' },
        ],
      },
      {
        code: '7000',
        name: 'Other Expenses',
        children: [{ code: '7100', name: 'Realized FX Gain or Loss', role: 'fx_gain_loss' }],
      },
    ],
  },
};

/** Writes the standard chart for a new business; the caller holds the transaction. */
export function createStandardChart(db: Db, clock: Clock, businessId: string): void {
  assertInTransaction(db, 'createStandardChart');
  const createdAt = nowIso(clock);
  const insert = (node: ChartTemplate, type: AccountType, parentId: string | null): void => {
    const id = newId();
    const isHeading = (node.children?.length ?? 0) > 0;
    run(
      db,
      `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
      id,
      businessId,
      parentId,
      node.code,
      node.name,
      type,
      isHeading ? 1 : 0,
      node.role ?? null,
      createdAt,
    );
    for (const child of node.children ?? []) insert(child, type, id);
  };
  for (const type of ACCOUNT_TYPES) insert(STANDARD_CHART[type], type, null);
}

/** A postable leaf of the chart, as the API shows it. */
export interface LedgerAccount {
  id: string;
  code: string;
  name: string;
  type: AccountType;
  path: string;
}

interface ChartRow {
  id: string;
  parent_id: string | null;
  code: string;
  name: string;
  type: AccountType;
  is_heading: bigint;
  archived: bigint;
}

/** One account of a business's chart, placed in the tree. */
export interface ChartNode {
  id: string;
  parentId: string | null;
  code: string;
  name: string;
  type: AccountType;
  isHeading: boolean;
  archived: boolean;
  /** 0 for a top-level account, 1 for its children, and so on. */
  depth: number;
  /** Every name from the top of the tree down to this account, joined by PATH_SEPARATOR. */
  path: string;
}

/**
 * The whole chart of a business as a depth-first walk: each parent before its children,
 * siblings by code. Statements follow this order; a cycle or a parent in another business is
 * a corrupt chart and fails loudly.
 */
export function chartTree(db: Db, businessId: string): ChartNode[] {
  const rows = all<ChartRow>(
    db,
    'SELECT id, parent_id, code, name, type, is_heading, archived FROM ledger_accounts WHERE business_id = ? ORDER BY code, id',
    businessId,
  );
  const childrenOf = new Map<string | null, ChartRow[]>();
  const ids = new Set(rows.map((row) => row.id));
  for (const row of rows) {
    const parent = row.parent_id !== null && ids.has(row.parent_id) ? row.parent_id : null;
    if (row.parent_id !== null && parent === null) throw new Error(`chart of business ${businessId}: ${row.id} has a parent outside the chart`);
    childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), row]);
  }
  const nodes: ChartNode[] = [];
  const visit = (row: ChartRow, depth: number, parentPath: string | null): void => {
    const path = parentPath === null ? row.name : `${parentPath}${PATH_SEPARATOR}${row.name}`;
    nodes.push({
      id: row.id,
      parentId: row.parent_id,
      code: row.code,
      name: row.name,
      type: row.type,
      isHeading: flag(row.is_heading),
      archived: flag(row.archived),
      depth,
      path,
    });
    for (const child of childrenOf.get(row.id) ?? []) visit(child, depth + 1, path);
  };
  for (const top of childrenOf.get(null) ?? []) visit(top, 0, null);
  // Rows never reached from a top-level account sit on a cycle.
  if (nodes.length !== rows.length) throw new Error(`chart of business ${businessId} has a cycle`);
  return nodes;
}

/** Postable, non-archived leaves with their full path, ordered by code. */
export function listPostableAccounts(db: Db, businessId: string, type?: AccountType): LedgerAccount[] {
  return chartTree(db, businessId)
    .filter((node) => !node.isHeading && !node.archived && (type === undefined || node.type === type))
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : a.id < b.id ? -1 : 1))
    .map(({ id, code, name, type: accountType, path }) => ({ id, code, name, type: accountType, path }));
}

export interface PostingTarget {
  id: string;
  businessId: string;
  type: AccountType;
  isHeading: boolean;
  archived: boolean;
  /** The role Daybook gives the account (bank, receivables, ...), or null for an ordinary one. */
  systemRole: SystemRole | null;
}

export function findLedgerAccount(db: Db, id: string): PostingTarget | undefined {
  const row = one<{ id: string; business_id: string; type: AccountType; is_heading: bigint; archived: bigint; system_role: SystemRole | null }>(
    db,
    'SELECT id, business_id, type, is_heading, archived, system_role FROM ledger_accounts WHERE id = ?',
    id,
  );
  return (
    row && {
      id: row.id,
      businessId: row.business_id,
      type: row.type,
      isHeading: flag(row.is_heading),
      archived: flag(row.archived),
      systemRole: row.system_role,
    }
  );
}

/** The id of the account holding a system role (receivables, bank, ...) in a business. */
export function systemAccountId(db: Db, businessId: string, role: SystemRole): string {
  const row = one<{ id: string }>(db, 'SELECT id FROM ledger_accounts WHERE business_id = ? AND system_role = ?', businessId, role);
  if (!row) throw new Error(`business ${businessId} has no ${role} account`);
  return row.id;
}

/** A ledger account's archive state, as the admin command shows it. */
export interface LedgerAccountArchiveState {
  id: string;
  tenantId: string;
  businessId: string;
  code: string;
  name: string;
  type: AccountType;
  archived: boolean;
}

/** How many invoice numbers a refusal names before it says "and N more". */
const NAMED_INVOICES = 5;

/**
 * Archives or unarchives a ledger account (`daybook ledger-account archive|unarchive`), audited
 * under the actor even when it already was so, and returns its new state. An archived account
 * leaves `GET /accounts` and is refused for new postings; its history stays in every report.
 * Archiving is refused (409) for a system account (Daybook posts to it itself), a heading, and
 * an account that lines of an invoice not yet paid or void use (sending or paying it would
 * then fail). Found by id alone; an unknown id is a 404. The caller holds the transaction.
 */
export function setLedgerAccountArchived(db: Db, clock: Clock, actor: Actor, id: string, archived: boolean): LedgerAccountArchiveState {
  assertInTransaction(db, 'setLedgerAccountArchived');
  const before = one<{ business_id: string; tenant_id: string; code: string; name: string; type: AccountType; is_heading: bigint; archived: bigint; system_role: SystemRole | null }>(
    db,
    `SELECT a.business_id, b.tenant_id, a.code, a.name, a.type, a.is_heading, a.archived, a.system_role
       FROM ledger_accounts a JOIN businesses b ON b.id = a.business_id WHERE a.id = ?`,
    id,
  );
  if (!before) throw notFound('ledger account');
  const label = `ledger account ${before.code} ${before.name}`;
  if (archived) {
    if (before.system_role !== null) throw conflict(`${label} is a system account (${before.system_role}); Daybook posts to it itself, so it cannot be archived`);
    if (flag(before.is_heading)) throw conflict(`${label} is a heading; archive the accounts under it instead`);
    const open = all<{ number: string }>(
      db,
      `SELECT DISTINCT i.number FROM invoices i JOIN invoice_lines l ON l.invoice_id = i.id
        WHERE l.ledger_account_id = ? AND i.status NOT IN ('paid', 'void') ORDER BY i.number`,
      id,
    );
    if (open.length > 0) {
      const named = open.slice(0, NAMED_INVOICES).map((row) => row.number).join(', ');
      const more = open.length > NAMED_INVOICES ? ` and ${open.length - NAMED_INVOICES} more` : '';
      throw conflict(`${label} is used by open invoices (${named}${more}); void them or let them be paid first`);
    }
  }
  run(db, 'UPDATE ledger_accounts SET archived = ? WHERE id = ?', archived ? 1 : 0, id);
  recordAudit(db, clock, actor, {
    tenantId: before.tenant_id,
    businessId: before.business_id,
    action: archived ? 'ledger_account.archive' : 'ledger_account.unarchive',
    subjectType: 'ledger_account',
    subjectId: id,
    detail: { code: before.code, name: before.name, wasArchived: flag(before.archived) },
  });
  return { id, tenantId: before.tenant_id, businessId: before.business_id, code: before.code, name: before.name, type: before.type, archived };
}
