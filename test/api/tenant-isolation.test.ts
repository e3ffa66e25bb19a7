import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { operations } from '../../src/api/v1/index.js';
import { createBill } from '../../src/books/bills.js';
import type { Business } from '../../src/books/businesses.js';
import { type CreatedKey, KEY_PREFIX, revokeKey } from '../../src/books/keys.js';
import { payToken } from '../../src/books/pay-links.js';
import { databaseFiles, inTransaction } from '../../src/db/connection.js';
import { OPERATION_IDS, type OperationId } from '../../src/api/v1/operation-ids.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { expectError, type SpecErrorCode, uuidsIn, withoutRequestId } from '../support/api.js';
import { accountIdByName, buildBusiness, buildKey, buildTenant, TEST_ACTOR } from '../support/factories.js';
import { invoiceBody, invoiceLine } from '../support/invoicing.js';
import {
  type AuditedWrite,
  auditedWrite,
  auditRowsAfter,
  booksSnapshot,
  idOwners,
  lastAuditId,
  type Owner,
  rowCounts,
  type Secret,
  secretsIn,
  storedPlacesContaining,
  tableNames,
} from '../support/isolation.js';
import { type HeldRateProvider, startHeldRateProvider } from '../support/rate-provider.js';
import { addVendor, withQuery } from '../support/register.js';
import { queueReviewItem } from '../support/review.js';

/**
 * Tenant isolation, proved cell by cell: two accounts with real books (A, the victim, with two
 * businesses; B, the other account), and four attacker keys that try every id and entityId of
 * the side they must not reach, on every one of the 22 operations:
 *
 * - a key of account B (unlimited), and a key of B limited to one of B's businesses;
 * - a key of account A limited to business A1, against A2;
 * - a Read only key of account A, against all of A (every read 200, every write 403).
 *
 * Every answer is scanned for the other side's ids, names, numbers and emails, every UUID a
 * successful answer holds must belong to the key's reach, and every refused write must leave
 * every table exactly as it was, with no audit row.
 */

const START = '2026-03-15T12:00:00.000Z';

interface Named {
  id: string;
  name: string;
}

/** An account of a victim business used as a reference in a body or a filter. */
interface VictimAccount {
  id: string;
  business: Business;
  role: 'expense' | 'revenue';
}

/** A nextCursor the victim's own key was given, with the list and filters it was issued for. */
interface VictimCursor {
  label: string;
  operation: 'customers.list' | 'vendors.list' | 'transactions.list' | 'invoices.list';
  tenantId: string;
  /** The business its list was of; null for the account-wide lists. */
  businessId: string | null;
  cursor: string;
}

interface Side {
  tenantId: string;
  tenantName: string;
  businesses: Business[];
  customers: Named[];
  vendors: Named[];
}

type AttackerId = 'otherAccount' | 'otherAccountLimited' | 'sameAccountLimited' | 'readOnly';

interface AttackerDef {
  id: AttackerId;
  label: string;
  /** The spec rule its cells prove, named in every title. */
  rule: string;
}

const ATTACKER_DEFS: readonly AttackerDef[] = [
  {
    id: 'otherAccount',
    label: 'a key of another account (B, unlimited)',
    rule:
      "Endpoints entity rule and Errors not_found (a key belongs to exactly one account): another account's entityId and rows answer 404 not_found, never data",
  },
  {
    id: 'otherAccountLimited',
    label: "a key of another account (B) limited to one of B's businesses",
    rule: 'Endpoints entity rule: an entityId the key was not given answers 403 entity_not_allowed; a row it cannot reach answers 404 not_found',
  },
  {
    id: 'sameAccountLimited',
    label: 'a key of the same account (A) limited to business A1',
    rule:
      'Authentication rule 5 and Read-specific rule 5: entityId A2 answers 403 entity_not_allowed, rows of A2 404 not_found, lists show A1 only, customers and vendors stay visible',
  },
  {
    id: 'readOnly',
    label: 'a Read only key of the same account (A)',
    rule: 'Authentication rule 3: a Read only key reads (200) and every write answers 403 insufficient_scope',
  },
];

interface Attacker {
  def: AttackerDef;
  key: CreatedKey;
  tenantId: string;
  tenantName: string;
  readOnly: boolean;
  limited: boolean;
  /** The businesses the key reaches. */
  reach: Business[];
  /** The entityId the key sends for its own business: undefined when it reaches one and omits it. */
  ownEntityId: string | undefined;
  ownBusiness: Business;
  ownCustomerId: string;
  ownVendorId: string;
  /** A review item of the own business still waiting. */
  ownPendingItemId: string;
  targets: {
    businesses: Business[];
    transactions: string[];
    invoices: string[];
    reviewItems: string[];
    accounts: VictimAccount[];
    /** Customers and vendors of another account (none for a key of the same account: they are its own). */
    customers: Named[];
    vendors: Named[];
    /** Customers and vendors searched for and filtered on, and whether the key is to see them (Read-specific rule 5). */
    listed: { customers: Named[]; vendors: Named[]; visible: boolean };
    cursors: VictimCursor[];
    /** The victim's keyed writes, replayed word for word with the victim's Idempotency-Key value. */
    keyedWrites: VictimKeyedWrite[];
  };
  /** What the key must never be shown. */
  forbidden: Secret[];
}

type Outcome =
  | { kind: 'served'; check?: (res: TestResponse) => void }
  | { kind: 'refused'; status: number; code: SpecErrorCode; field?: string };

interface Cell {
  target: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  outcome: Outcome;
}

/** A write the victim's own key made under an Idempotency-Key: the same request, the same header value, from another key. */
interface VictimKeyedWrite {
  operation: OperationId;
  path: string;
  body: unknown;
  idempotencyKey: string;
  businessId: string;
}

const served = (check?: (res: TestResponse) => void): Outcome => ({ kind: 'served', ...(check ? { check } : {}) });
const NOT_FOUND: Outcome = { kind: 'refused', status: 404, code: 'not_found' };
const ENTITY_NOT_ALLOWED: Outcome = { kind: 'refused', status: 403, code: 'entity_not_allowed' };
const INSUFFICIENT_SCOPE: Outcome = { kind: 'refused', status: 403, code: 'insufficient_scope' };
const CURSOR_REFUSED: Outcome = { kind: 'refused', status: 422, code: 'validation_failed', field: 'cursor' };

const REPORT_QUERIES: Partial<Record<OperationId, Record<string, string>>> = {
  'reports.profitAndLoss': { periodStart: '2026-01-01', periodEnd: '2026-03-31' },
  'reports.balanceSheet': { asOf: '2026-03-15' },
  'reports.trialBalance': { asOf: '2026-03-15' },
  'reports.arAging': { asOf: '2026-03-15' },
  'reports.apAging': {},
};

/** The route table: every operation's method and path as the app mounts it. */
const ROUTES = new Map(operations.map((operation) => [operation.id as OperationId, { method: operation.method, path: operation.path }]));

function pathOf(op: OperationId, id?: string): string {
  const route = ROUTES.get(op);
  if (!route) throw new Error(`no route for ${op}`);
  if (route.path.includes(':id') !== (id !== undefined)) throw new Error(`${op}: ${route.path} and id ${String(id)} do not fit`);
  return `/api/v1${id === undefined ? route.path : route.path.replace(':id', id)}`;
}

describe('Tenant isolation: two accounts, four attacker keys, every operation', () => {
  let app: TestApp;
  let provider: HeldRateProvider;
  const setupWrites: AuditedWrite[] = [];
  let a: Side;
  let b: Side;
  let keys: Record<'aRw' | 'aLimited' | 'aReadOnly' | 'aExpiring' | 'aExpiringAll' | 'bRw' | 'bLimited', CreatedKey>;
  const attackers = new Map<AttackerId, Attacker>();
  let victimCursors: VictimCursor[];
  const victimKeyedWrites: VictimKeyedWrite[] = [];
  /** Secrets by side, each value with where it comes from. */
  let secrets: { tenant: Map<string, Secret[]>; business: Map<string, Secret[]> };
  let owners: Map<string, Owner>;

  const cellCounts = new Map<AttackerId, number>();
  let scannedAnswers = 0;
  let refusedWrites = 0;
  /** Successful writes per attacker key id (each must leave one audit row; refused ones none). */
  const servedWrites = new Map<string, number>();
  let countsBeforeMatrix: Record<string, number>;
  let auditMarkBeforeMatrix: number;

  const office = (business: Business) => accountIdByName(app.db, business.id, 'Office Supplies');
  const serviceRevenue = (business: Business) => accountIdByName(app.db, business.id, 'Service Revenue');

  before(async function () {
    this.timeout(20_000);
    provider = await startHeldRateProvider();
    // No scheduled job may write to the books while a refused write's tables are compared.
    app = await startTestApp(START, { config: { fxProviderUrl: provider.url, jobOutbox: null, jobOverdue: null, jobHousekeeping: null } });
    const { db, clock } = app;

    // ---- Account A, the victim: two businesses, numbered apart from everyone else's invoices.
    const aTenant = buildTenant(db, clock, { name: 'Vellichor Atelier Group', plan: 'large' });
    const a1 = buildBusiness(db, clock, { tenantId: aTenant.id, name: 'Quillon Bindery North' });
    const a2 = buildBusiness(db, clock, { tenantId: aTenant.id, name: 'Marrowgate Foundry South' });
    // Invoice numbers of their own, so each one is a secret no other business shares.
    db.prepare('UPDATE businesses SET next_invoice_number = ? WHERE id = ?').run(7301, a1.id);
    db.prepare('UPDATE businesses SET next_invoice_number = ? WHERE id = ?').run(8401, a2.id);
    const aRw = buildKey(db, clock, { tenantId: aTenant.id, name: 'victim-ledger-sync' });
    const aLimited = buildKey(db, clock, { tenantId: aTenant.id, name: 'victim-north-only', businessIds: [a1.id] });
    const aReadOnly = buildKey(db, clock, { tenantId: aTenant.id, name: 'victim-reporting', access: 'read' });
    // Expiring within the Today window: its name shows on A2's Today only.
    const aExpiring = buildKey(db, clock, { tenantId: aTenant.id, name: 'victim-expiring-south', access: 'read', businessIds: [a2.id], expiresOn: '2026-03-20' });
    // And one for every business of A: its name shows on A1's and A2's Today, never on B's.
    const aExpiringAll = buildKey(db, clock, { tenantId: aTenant.id, name: 'victim-expiring-everywhere', access: 'read', expiresOn: '2026-03-22' });

    // ---- Account B, the other side: two businesses too.
    const bTenant = buildTenant(db, clock, { name: 'Petrichor Ledger Co', plan: 'large' });
    const b1 = buildBusiness(db, clock, { tenantId: bTenant.id, name: 'Halcyon Kiln East' });
    const b2 = buildBusiness(db, clock, { tenantId: bTenant.id, name: 'Brindle Wharf West' });
    db.prepare('UPDATE businesses SET next_invoice_number = ? WHERE id = ?').run(5101, b2.id);
    const bRw = buildKey(db, clock, { tenantId: bTenant.id, name: 'attacker-sync' });
    const bLimited = buildKey(db, clock, { tenantId: bTenant.id, name: 'attacker-east-only', businessIds: [b1.id] });
    keys = { aRw, aLimited, aReadOnly, aExpiring, aExpiringAll, bRw, bLimited };

    // Vendors have no POST; they are made as the bank import and the CLI make them.
    const vA1 = addVendor(app, aTenant.id, 'Obsidian Lantern Supply');
    const vA2 = addVendor(app, aTenant.id, 'Sable Thistle Paper');
    const vB = addVendor(app, bTenant.id, 'Cobalt Heron Freight');

    // ---- Every write of the set-up goes through the API with a legitimate key, audited one by one.
    const write = (
      what: string,
      key: CreatedKey,
      operationId: OperationId,
      path: string,
      body: unknown,
      action: string,
      subjectOf: (res: TestResponse) => string,
      idempotencyKey?: string,
    ) =>
      auditedWrite(app, setupWrites, {
        what,
        key,
        operationId,
        path,
        body,
        action,
        subjectOf,
        ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
      });
    /** A write of the victim's under an Idempotency-Key, remembered so the attackers can send it again with the same key value. */
    const keyedWrite = async (
      what: string,
      operationId: OperationId,
      path: string,
      body: unknown,
      action: string,
      subjectOf: (res: TestResponse) => string,
      businessId: string,
    ) => {
      const idempotencyKey = `victim-${operationId}-0001`;
      const res = await write(what, aRw, operationId, path, body, action, subjectOf, idempotencyKey);
      // The key works for its own key: the same request again is the stored answer, replayed.
      const replay = await app.request('POST', path, { key: aRw.key, body, headers: { 'idempotency-key': idempotencyKey } });
      expect(replay.headers['idempotent-replayed'], `${what}: replayed for its own key`).to.equal('true');
      expect(replay.text).to.equal(res.text);
      victimKeyedWrites.push({ operation: operationId, path, body, idempotencyKey, businessId });
      return res;
    };
    const createdId = (res: TestResponse) => String(res.body.id);
    const createdExpense = (res: TestResponse) => String(res.body.expenseId);
    const createdInvoice = (res: TestResponse) => String(res.body.invoiceId);

    const newCustomer = async (key: CreatedKey, name: string, email: string): Promise<Named> => {
      const res = await write(`customer ${name}`, key, 'customers.create', pathOf('customers.create'), { name, email }, 'customer.create', createdId);
      expect(res.status).to.equal(201);
      return { id: res.body.id, name };
    };
    const zanzibar = await newCustomer(aRw, 'Zanzibar Quill Holdings', 'accounts@zanzibar-quill.example');
    const orrery = await newCustomer(aRw, 'Orrery Lumen Partners', 'ap@orrery-lumen.example');
    const gossamer = await newCustomer(bRw, 'Gossamer Tide Traders', 'billing@gossamer-tide.example');

    // The set-up names every entityId: omitting it is what the matrix tries.
    const newExpense = (key: CreatedKey, business: Business, vendorId: string, date: string, amountCents: string, memo: string) =>
      write(
        `expense ${memo}`,
        key,
        'expenses.create',
        pathOf('expenses.create'),
        { entityId: business.id, date, amountCents, vendorId, accountId: office(business), memo },
        'expense.create',
        createdExpense,
      );
    await newExpense(aRw, a1, vA1, '2026-03-10', '4250', 'north-ink-restock-7781');
    await keyedWrite(
      'expense south-casting-sand-9934',
      'expenses.create',
      pathOf('expenses.create'),
      { entityId: a2.id, date: '2026-03-11', amountCents: '9130', vendorId: vA2, accountId: office(a2), memo: 'south-casting-sand-9934' },
      'expense.create',
      createdExpense,
      a2.id,
    );
    await newExpense(aLimited, a1, vA1, '2026-03-12', '2290', 'north-limited-vellum-2290');
    await newExpense(bRw, b1, vB, '2026-03-10', '3310', 'east-kiln-firewood-3310');
    await newExpense(bLimited, b1, vB, '2026-03-12', '1188', 'east-limited-kiln-bricks-1188');

    const newInvoice = async (
      key: CreatedKey,
      business: Business,
      customer: Named,
      description: string,
      unitPriceCents: string,
      dates: { issueDate?: string; dueDate?: string } = {},
    ): Promise<string> => {
      const body = invoiceBody(app, business.id, customer.id, {
        entityId: business.id,
        lines: [invoiceLine(app, business.id, { description, quantity: '1', unitPriceCents })],
        memo: `memo of ${description}`,
        ...dates,
      });
      const res = await write(`invoice ${description}`, key, 'invoices.create', pathOf('invoices.create'), body, 'invoice.create', createdInvoice);
      return String(res.body.invoiceId);
    };
    const send = (key: CreatedKey, invoiceId: string) =>
      write(`send ${invoiceId}`, key, 'invoices.send', pathOf('invoices.send', invoiceId), undefined, 'invoice.send', () => invoiceId);

    await newInvoice(aRw, a1, zanzibar, 'North folio binding retainer', '120000');
    const a1Sent = await newInvoice(aRw, a1, orrery, 'North gilt lettering commission', '64000', { issueDate: '2026-03-10', dueDate: '2026-03-20' });
    await send(aRw, a1Sent);
    await newInvoice(aRw, a2, orrery, 'South bronze casting deposit', '310000');
    const a2Overdue = await newInvoice(aRw, a2, zanzibar, 'South anvil restoration', '45000', { issueDate: '2026-02-02', dueDate: '2026-02-12' });
    await send(aRw, a2Overdue);
    await write(`remind ${a2Overdue}`, aRw, 'invoices.remind', pathOf('invoices.remind', a2Overdue), undefined, 'invoice.remind', () => a2Overdue);
    const a2Partial = await newInvoice(aRw, a2, zanzibar, 'South bellows repair', '80000', { issueDate: '2026-03-01', dueDate: '2026-03-31' });
    await send(aRw, a2Partial);
    await keyedWrite(
      `payment on ${a2Partial}`,
      'invoices.recordPayment',
      pathOf('invoices.recordPayment', a2Partial),
      { amountCents: '25000', method: 'check', paidAt: '2026-03-12' },
      'invoice.payment',
      (res) => String(res.body.paymentId),
      a2.id,
    );
    const b1Sent = await newInvoice(bRw, b1, gossamer, 'East glaze firing batch', '52000', { issueDate: '2026-03-05', dueDate: '2026-03-25' });
    await send(bRw, b1Sent);
    await newInvoice(bRw, b2, gossamer, 'West mooring survey', '99000');

    // Review-queue items as the bank import leaves them; one of each account accepted through the API.
    queueReviewItem(app, a1, { date: '2026-03-08', amountCents: 3300n, vendorId: vA1, description: 'north-bank-row-5512' });
    const a1Accepted = queueReviewItem(app, a1, { date: '2026-03-09', amountCents: 1450n, vendorId: vA1, description: 'north-bank-row-5513' });
    queueReviewItem(app, a2, { date: '2026-03-07', amountCents: 6600n, vendorId: vA2, description: 'south-bank-row-6623', confidence: 0.4 });
    queueReviewItem(app, b1, { date: '2026-03-08', amountCents: 2207n, vendorId: vB, description: 'east-bank-row-2207' });
    const b1Accepted = queueReviewItem(app, b1, { date: '2026-03-09', amountCents: 2208n, vendorId: vB, description: 'east-bank-row-2208' });
    for (const [key, item] of [
      [aRw, a1Accepted],
      [bRw, b1Accepted],
    ] as const) {
      await write(`accept ${item.itemId}`, key, 'review.accept', pathOf('review.accept', item.itemId), {}, 'review.accept', () => item.itemId);
    }

    // Bills, for the payables aging (the CLI records them).
    inTransaction(db, () => {
      createBill(db, clock, TEST_ACTOR, {
        businessId: a2.id,
        vendorName: 'Obsidian Lantern Supply',
        number: 'OLS-BILL-4471',
        issueDate: '2026-03-01',
        dueDate: '2026-03-31',
        amountCents: 77000n,
        accountId: office(a2),
      });
      createBill(db, clock, TEST_ACTOR, {
        businessId: b1.id,
        vendorName: 'Cobalt Heron Freight',
        number: 'CHF-BILL-9902',
        issueDate: '2026-03-02',
        dueDate: '2026-04-01',
        amountCents: 41000n,
        accountId: office(b1),
      });
    });

    a = {
      tenantId: aTenant.id,
      tenantName: aTenant.name,
      businesses: [a1, a2],
      customers: [zanzibar, orrery],
      vendors: [
        { id: vA1, name: 'Obsidian Lantern Supply' },
        { id: vA2, name: 'Sable Thistle Paper' },
      ],
    };
    b = { tenantId: bTenant.id, tenantName: bTenant.name, businesses: [b1, b2], customers: [gossamer], vendors: [{ id: vB, name: 'Cobalt Heron Freight' }] };

    // ---- The victim's own cursors (page size 1, so each list has a next page).
    victimCursors = [];
    const cursorOf = async (label: string, operation: VictimCursor['operation'], businessId: string | null) => {
      const res = await app.get(withQuery(pathOf(operation), { ...(businessId ? { entityId: businessId } : {}), limit: 1 }), aRw.key);
      expect(res.status, `${label}: ${res.text.slice(0, 200)}`).to.equal(200);
      expect(res.body.nextCursor, `${label} has a next page`).to.be.a('string');
      victimCursors.push({ label, operation, tenantId: a.tenantId, businessId, cursor: res.body.nextCursor });
    };
    await cursorOf("A's customers", 'customers.list', null);
    await cursorOf("A's vendors", 'vendors.list', null);
    for (const business of [a1, a2]) {
      await cursorOf(`${business.name}'s transactions`, 'transactions.list', business.id);
      await cursorOf(`${business.name}'s invoices`, 'invoices.list', business.id);
    }

    // ---- The secrets of each side, read from the books: ids, names, numbers, emails, texts.
    secrets = { tenant: new Map(), business: new Map() };
    for (const side of [a, b]) {
      secrets.tenant.set(side.tenantId, tenantSecrets(side.tenantId));
      for (const business of side.businesses) secrets.business.set(business.id, businessSecrets(business.id));
    }

    // ---- The attackers.
    const pendingItem = (business: Business) =>
      (
        db.prepare('SELECT id FROM review_queue_items WHERE business_id = ? AND accepted_at IS NULL ORDER BY created_at, id LIMIT 1').get(business.id) as {
          id: string;
        }
      ).id;
    const idsOf = (table: string, businesses: Business[]) =>
      businesses.flatMap((business) =>
        (db.prepare(`SELECT id FROM ${table} WHERE business_id = ? ORDER BY created_at, id`).all(business.id) as { id: string }[]).map((row) => row.id),
      );
    const accountsOf = (businesses: Business[]): VictimAccount[] =>
      businesses.flatMap((business) => [
        { id: office(business), business, role: 'expense' as const },
        { id: serviceRevenue(business), business, role: 'revenue' as const },
      ]);
    const rowsOf = (businesses: Business[]) => ({
      businesses,
      transactions: idsOf('transactions', businesses),
      invoices: idsOf('invoices', businesses),
      reviewItems: idsOf('review_queue_items', businesses),
      accounts: accountsOf(businesses),
    });
    const forbiddenFor = (tenantIds: string[], businesses: Business[]) => [
      ...tenantIds.flatMap((id) => secrets.tenant.get(id)!),
      ...businesses.flatMap((business) => secrets.business.get(business.id)!),
    ];
    const fromB = (key: CreatedKey, def: AttackerDef, limited: boolean): Attacker => ({
      def,
      key,
      tenantId: b.tenantId,
      tenantName: b.tenantName,
      readOnly: false,
      limited,
      reach: limited ? [b1] : [b1, b2],
      ownEntityId: limited ? undefined : b1.id,
      ownBusiness: b1,
      ownCustomerId: gossamer.id,
      ownVendorId: vB,
      ownPendingItemId: pendingItem(b1),
      targets: {
        ...rowsOf(a.businesses),
        customers: a.customers,
        vendors: a.vendors,
        listed: { customers: a.customers, vendors: a.vendors, visible: false },
        cursors: victimCursors,
        keyedWrites: victimKeyedWrites,
      },
      forbidden: forbiddenFor([a.tenantId], limited ? [a1, a2, b2] : [a1, a2]),
    });
    const def = (id: AttackerId) => ATTACKER_DEFS.find((candidate) => candidate.id === id)!;
    attackers.set('otherAccount', fromB(bRw, def('otherAccount'), false));
    attackers.set('otherAccountLimited', fromB(bLimited, def('otherAccountLimited'), true));
    attackers.set('sameAccountLimited', {
      def: def('sameAccountLimited'),
      key: aLimited,
      tenantId: a.tenantId,
      tenantName: a.tenantName,
      readOnly: false,
      limited: true,
      reach: [a1],
      ownEntityId: undefined,
      ownBusiness: a1,
      ownCustomerId: zanzibar.id,
      ownVendorId: vA1,
      ownPendingItemId: pendingItem(a1),
      targets: {
        ...rowsOf([a2]),
        customers: [],
        vendors: [],
        listed: { customers: a.customers, vendors: a.vendors, visible: true },
        cursors: victimCursors.filter((cursor) => cursor.businessId === null || cursor.businessId === a2.id),
        keyedWrites: victimKeyedWrites.filter((keyed) => keyed.businessId === a2.id),
      },
      forbidden: forbiddenFor([b.tenantId], [b1, b2, a2]),
    });
    attackers.set('readOnly', {
      def: def('readOnly'),
      key: aReadOnly,
      tenantId: a.tenantId,
      tenantName: a.tenantName,
      readOnly: true,
      limited: false,
      reach: [a1, a2],
      ownEntityId: a1.id,
      ownBusiness: a1,
      ownCustomerId: zanzibar.id,
      ownVendorId: vA1,
      ownPendingItemId: pendingItem(a1),
      targets: {
        ...rowsOf(a.businesses),
        customers: a.customers,
        vendors: a.vendors,
        listed: { customers: a.customers, vendors: a.vendors, visible: true },
        cursors: victimCursors,
        keyedWrites: victimKeyedWrites,
      },
      forbidden: forbiddenFor([b.tenantId], [b1, b2]),
    });
    owners = idOwners(db);
  });

  after(async () => {
    const total = [...cellCounts.values()].reduce((sum, n) => sum + n, 0);
    const byAttacker = ATTACKER_DEFS.map((def) => `${def.id} ${cellCounts.get(def.id) ?? 0}`).join(', ');
    console.log(`\n  tenant isolation: ${total} cells (${byAttacker}); ${scannedAnswers} answers scanned, ${refusedWrites} refused writes compared table by table`);
    await app?.close();
    await provider?.close();
  });

  /** What one account holds that no other account may see. */
  function tenantSecrets(tenantId: string): Secret[] {
    const found: Secret[] = [];
    const add = (value: unknown, what: string) => {
      if (typeof value === 'string' && value.length >= 6) found.push({ value, what });
    };
    const tenant = app.db.prepare('SELECT name FROM tenants WHERE id = ?').get(tenantId) as { name: string };
    add(tenant.name, 'account name');
    for (const row of app.db.prepare('SELECT id, name, email FROM customers WHERE tenant_id = ?').all(tenantId) as Record<string, string>[]) {
      add(row.id, `customer id (${row.name})`);
      add(row.name, 'customer name');
      add(row.email, 'customer email');
    }
    for (const row of app.db.prepare('SELECT id, name FROM vendors WHERE tenant_id = ?').all(tenantId) as Record<string, string>[]) {
      add(row.id, `vendor id (${row.name})`);
      add(row.name, 'vendor name');
    }
    for (const row of app.db.prepare('SELECT id, name, expires_on FROM api_keys WHERE tenant_id = ?').all(tenantId) as Record<string, string | null>[]) {
      add(row.id, `key id (${row.name})`);
      add(row.name, row.expires_on === null ? 'key name' : 'name of an expiring key');
    }
    return found;
  }

  /** What one business holds that a key not reaching it may not see. */
  function businessSecrets(businessId: string): Secret[] {
    const found: Secret[] = [];
    const add = (value: unknown, what: string) => {
      if (typeof value === 'string' && value.length >= 6) found.push({ value, what });
    };
    const all = (sql: string) => app.db.prepare(sql).all(businessId) as Record<string, string | null>[];
    const business = app.db.prepare('SELECT id, name FROM businesses WHERE id = ?').get(businessId) as { id: string; name: string };
    add(business.id, `business id (${business.name})`);
    add(business.name, 'business name');
    for (const row of all('SELECT id, name FROM ledger_accounts WHERE business_id = ?')) add(row.id, `ledger account id (${row.name})`);
    for (const row of all('SELECT id, number, memo FROM invoices WHERE business_id = ?')) {
      add(row.id, `invoice id (${row.number})`);
      add(row.number, 'invoice number');
      add(row.memo, 'invoice memo');
      add(payToken(app.db, row.id!), `pay token of ${row.number}`);
    }
    for (const row of all('SELECT l.description FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id WHERE i.business_id = ?')) add(row.description, 'invoice line');
    for (const row of all('SELECT p.id FROM invoice_payments p JOIN invoices i ON i.id = p.invoice_id WHERE i.business_id = ?')) add(row.id, 'payment id');
    for (const row of all('SELECT id, description FROM transactions WHERE business_id = ?')) {
      add(row.id, 'transaction id');
      add(row.description, 'transaction description');
    }
    for (const row of all('SELECT id FROM review_queue_items WHERE business_id = ?')) add(row.id, 'review item id');
    for (const row of all('SELECT id, memo FROM expenses WHERE business_id = ?')) {
      add(row.id, 'expense id');
      add(row.memo, 'expense memo');
    }
    for (const row of all('SELECT id, number FROM bills WHERE business_id = ?')) {
      add(row.id, 'bill id');
      add(row.number, 'bill number');
    }
    for (const row of all('SELECT id FROM journal_entries WHERE business_id = ?')) add(row.id, 'journal entry id');
    for (const row of all('SELECT k.name, k.expires_on FROM api_keys k JOIN api_key_businesses g ON g.api_key_id = k.id WHERE g.business_id = ?')) {
      add(row.name, row.expires_on === null ? 'name of a key limited to it' : 'name of an expiring key limited to it');
    }
    return found;
  }

  function ownerOf(id: string): Owner | undefined {
    if (!owners.has(id)) owners = idOwners(app.db);
    return owners.get(id);
  }

  /** The decoded bodies of the cursors an answer hands out (base64url JSON before the signature). */
  function decodedCursors(res: TestResponse): string[] {
    const cursor = res.body?.nextCursor;
    if (typeof cursor !== 'string') return [];
    return [Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8')];
  }

  /** No secret of the other side in the answer (its text, and what its cursor carries). */
  function expectNothingLeaked(at: Attacker, res: TestResponse, context: string): void {
    scannedAnswers += 1;
    const leaked = secretsIn([res.text, ...decodedCursors(res)].join('\n'), at.forbidden);
    expect(
      leaked.map((secret) => `${secret.what}: ${secret.value}`),
      `${context}: the answer shows what the key must not see (${res.text.slice(0, 300)})`,
    ).to.deep.equal([]);
  }

  /** Every UUID of a successful answer names a row of the key's own account, in a business it reaches. */
  function expectWithinReach(at: Attacker, res: TestResponse, context: string): void {
    const reach = at.reach.map((business) => business.id);
    for (const id of uuidsIn([res.text, ...decodedCursors(res)].join('\n'))) {
      const owner = ownerOf(id);
      expect(owner, `${context}: ${id} in the answer names no stored row`).to.not.equal(undefined);
      expect(owner!.tenantId, `${context}: ${id} (${owner!.table}) belongs to another account`).to.equal(at.tenantId);
      if (owner!.businessId !== null) expect(reach, `${context}: ${id} (${owner!.table}) belongs to a business the key cannot reach`).to.include(owner!.businessId);
    }
  }

  /** Every cell of one operation for one attacker, from its targets. */
  function cellsFor(op: OperationId, at: Attacker): Cell[] {
    const t = at.targets;
    const own: Record<string, string> = at.ownEntityId === undefined ? {} : { entityId: at.ownEntityId };
    const read = (target: string, query: Record<string, string | number>, outcome: Outcome, id?: string): Cell => ({
      target,
      method: 'GET',
      path: withQuery(pathOf(op, id), query),
      outcome,
    });
    const write = (target: string, body: unknown, outcome: Outcome, id?: string): Cell => ({
      target,
      method: 'POST',
      path: pathOf(op, id),
      ...(body === undefined ? {} : { body }),
      outcome,
    });
    // The business of an entityId the key does not reach: 403 for a limited key (checked first), else 404.
    const entityRefused = (isWrite: boolean, check?: (res: TestResponse) => void): Outcome =>
      at.readOnly ? (isWrite ? INSUFFICIENT_SCOPE : served(check)) : at.limited ? ENTITY_NOT_ALLOWED : NOT_FOUND;
    // A single row, or a reference in a body, the key cannot reach: 404 not_found.
    const rowRefused = (isWrite: boolean, check?: (res: TestResponse) => void): Outcome => (at.readOnly ? (isWrite ? INSUFFICIENT_SCOPE : served(check)) : NOT_FOUND);
    const sameId = (id: string) => (res: TestResponse) => expect(res.body.id).to.equal(id);
    const reachNames = at.reach.map((business) => business.name);
    const entityNamed = (name?: string) => (res: TestResponse) => {
      if (name) expect(res.body.entity).to.equal(name);
      else expect(reachNames).to.include(res.body.entity);
    };
    const reportCheck = ['reports.profitAndLoss', 'reports.balanceSheet', 'reports.trialBalance'].includes(op);

    /** An entity-scoped read: the key's own business (entityId omitted when it reaches one), then each victim business. */
    const entityReads = (query: Record<string, string> = {}): Cell[] => [
      ...(at.readOnly
        ? []
        : [
            read(
              `its own business (${at.ownEntityId ? 'entityId named' : 'entityId omitted'})`,
              { ...own, ...query },
              served(reportCheck ? entityNamed(at.ownBusiness.name) : undefined),
            ),
          ]),
      ...t.businesses.map((business) =>
        read(`entityId of ${business.name}`, { entityId: business.id, ...query }, entityRefused(false, reportCheck ? entityNamed(business.name) : undefined)),
      ),
    ];
    const cursorCells = (operation: VictimCursor['operation']): Cell[] =>
      t.cursors
        .filter((cursor) => cursor.operation === operation)
        .map((cursor) => {
          const query: Record<string, string> = cursor.businessId === null ? {} : at.readOnly ? { entityId: cursor.businessId } : own;
          const sameList = at.tenantId === cursor.tenantId && (cursor.businessId === null || at.readOnly || cursor.businessId === at.ownBusiness.id);
          return read(`${cursor.label}'s nextCursor`, { ...query, limit: 1, cursor: cursor.cursor }, sameList ? served() : CURSOR_REFUSED);
        });
    const listedCheck = (field: 'customers' | 'vendors', id: string) => (res: TestResponse) => {
      const ids = (res.body[field] as { id: string }[]).map((row) => row.id);
      if (t.listed.visible) expect(ids, 'customers and vendors are account-wide (Read-specific rule 5)').to.include(id);
      else expect(ids).to.not.include(id);
    };
    const nameList = (field: 'customers' | 'vendors', listed: Named[]): Cell[] => [
      read('the whole list', {}, served()),
      read('the whole list, archived included', { includeArchived: 'true' }, served()),
      read('search "%" (a wildcard)', { search: '%' }, served()),
      read('search "_" (a wildcard)', { search: '_' }, served()),
      ...listed.map((row) => read(`search for "${row.name}"`, { search: row.name }, served(listedCheck(field, row.id)))),
      ...cursorCells(op as VictimCursor['operation']),
    ];
    // The victim's own request and Idempotency-Key value: Idempotency rule 5 (stored per API key) means no replay of the victim's answer.
    const keyedReplays = (): Cell[] =>
      t.keyedWrites
        .filter((keyed) => keyed.operation === op)
        .map((keyed) => ({
          target: `the victim's own request, sent with its Idempotency-Key "${keyed.idempotencyKey}"`,
          method: 'POST' as const,
          path: keyed.path,
          body: keyed.body,
          headers: { 'idempotency-key': keyed.idempotencyKey },
          outcome: op === 'expenses.create' ? entityRefused(true) : rowRefused(true),
        }));
    const expenseBody = (entity: Record<string, string>, vendorId: string, accountId: string) => ({
      ...entity,
      date: '2026-03-13',
      amountCents: '1999',
      vendorId,
      accountId,
      memo: 'attempt across the boundary',
    });

    switch (op) {
      case 'businesses.list':
        return [
          read('the businesses it lists', {}, served((res) => {
            expect(res.body.accountName).to.equal(at.tenantName);
            expect((res.body.businesses as Named[]).map((business) => business.id)).to.have.members(at.reach.map((business) => business.id));
            expect(res.body.businesses).to.have.length(at.reach.length);
          })),
        ];
      case 'accounts.list':
        return entityReads();
      case 'customers.list':
        return nameList('customers', t.listed.customers);
      case 'vendors.list':
        return nameList('vendors', t.listed.vendors);
      case 'transactions.list':
        return [
          ...entityReads(),
          ...t.listed.vendors.map((vendor) => read(`its own register filtered on vendorId ${vendor.name}`, { ...own, vendorId: vendor.id }, served())),
          ...t.accounts.map((account) => read(`its own register filtered on accountId of ${account.business.name}`, { ...own, accountId: account.id }, served())),
          ...t.listed.vendors.map((vendor) => read(`its own register, text "${vendor.name}"`, { ...own, text: vendor.name }, served())),
          read('its own register, text "%" (a wildcard)', { ...own, text: '%' }, served()),
          read('its own register, text "_" (a wildcard)', { ...own, text: '_' }, served()),
          ...cursorCells('transactions.list'),
        ];
      case 'transactions.get':
        return t.transactions.map((id) => read(`transaction ${id}`, {}, rowRefused(false, sameId(id)), id));
      case 'invoices.list':
        return [
          ...entityReads(),
          ...t.listed.customers.map((customer) => read(`its own invoices filtered on customerId ${customer.name}`, { ...own, customerId: customer.id }, served())),
          ...cursorCells('invoices.list'),
        ];
      case 'invoices.get':
        return t.invoices.map((id) => read(`invoice ${id}`, {}, rowRefused(false, sameId(id)), id));
      case 'review.list':
        return [
          read('the queue without entityId', {}, served()),
          ...t.businesses.map((business) => read(`entityId of ${business.name}`, { entityId: business.id }, entityRefused(false))),
        ];
      case 'today.get':
        return entityReads();
      case 'reports.profitAndLoss':
      case 'reports.balanceSheet':
      case 'reports.trialBalance':
      case 'reports.arAging':
      case 'reports.apAging':
        return entityReads(REPORT_QUERIES[op]);
      case 'customers.create':
        return t.listed.customers.map((customer) => {
          if (at.readOnly) return write(`a customer named ${customer.name}`, { name: customer.name }, INSUFFICIENT_SCOPE);
          if (at.tenantId === a.tenantId) {
            // The same account: the existing customer, unchanged (customers are account-wide).
            return write(`the name of its own account's customer ${customer.name}`, { name: customer.name }, served((res) => {
              expect(res.status).to.equal(200);
              expect(res.body).to.deep.equal({ id: customer.id, created: false });
            }));
          }
          // Another account's customer name (case-folded alike): a customer of the key's own account, never the victim's.
          return write(`another account's customer name ${customer.name} (in capitals)`, { name: customer.name.toUpperCase() }, served((res) => {
            expect(res.status).to.be.oneOf([200, 201]);
            expect(res.body.id).to.not.equal(customer.id);
            expect(ownerOf(res.body.id)?.tenantId).to.equal(at.tenantId);
          }));
        });
      case 'expenses.create':
        return [
          ...t.businesses.map((business) =>
            write(`entityId of ${business.name}`, expenseBody({ entityId: business.id }, at.ownVendorId, office(business)), entityRefused(true)),
          ),
          ...t.vendors.map((vendor) => write(`vendorId of ${vendor.name}`, expenseBody(own, vendor.id, office(at.ownBusiness)), rowRefused(true))),
          ...t.accounts
            .filter((account) => account.role === 'expense')
            .map((account) => write(`accountId of ${account.business.name}`, expenseBody(own, at.ownVendorId, account.id), rowRefused(true))),
          ...keyedReplays(),
        ];
      case 'invoices.create':
        return [
          ...t.businesses.map((business) =>
            write(`entityId of ${business.name}`, invoiceBody(app, business.id, at.ownCustomerId, { entityId: business.id }), entityRefused(true)),
          ),
          ...t.customers.map((customer) => write(`customerId of ${customer.name}`, invoiceBody(app, at.ownBusiness.id, customer.id, own), rowRefused(true))),
          ...t.accounts
            .filter((account) => account.role === 'revenue')
            .map((account) =>
              write(
                `line accountId of ${account.business.name}`,
                invoiceBody(app, at.ownBusiness.id, at.ownCustomerId, { ...own, lines: [invoiceLine(app, at.ownBusiness.id, { accountId: account.id })] }),
                rowRefused(true),
              ),
            ),
        ];
      case 'invoices.send':
      case 'invoices.remind':
        return t.invoices.map((id) => write(`invoice ${id}`, undefined, rowRefused(true), id));
      case 'invoices.recordPayment':
        return [...t.invoices.map((id) => write(`invoice ${id}`, { amountCents: '100', method: 'check' }, rowRefused(true), id)), ...keyedReplays()];
      case 'review.accept':
        return [
          ...t.reviewItems.map((id) => write(`review item ${id}`, {}, rowRefused(true), id)),
          ...t.accounts
            .filter((account) => account.role === 'expense')
            .map((account) => write(`its own item booked to accountId of ${account.business.name}`, { accountId: account.id }, rowRefused(true), at.ownPendingItemId)),
        ];
      default: {
        const unhandled: never = op;
        throw new Error(`no cells for ${String(unhandled)}`);
      }
    }
  }

  async function runCell(at: Attacker, op: OperationId, cell: Cell): Promise<void> {
    const context = `${at.def.label} → ${op} (${cell.target})`;
    const route = ROUTES.get(op)!;
    expect(cell.method, `${context}: the route's method`).to.equal(route.method);
    const refusedWrite = cell.method === 'POST' && cell.outcome.kind === 'refused';
    const before = refusedWrite ? booksSnapshot(app.db) : undefined;
    const auditMark = lastAuditId(app.db);

    const res = await app.request(cell.method, cell.path, {
      key: at.key.key,
      ...(cell.body === undefined ? {} : { body: cell.body }),
      ...(cell.headers ? { headers: cell.headers } : {}),
    });

    expectNothingLeaked(at, res, context);
    expect(res.headers['idempotent-replayed'], `${context}: nothing stored for another key is replayed`).to.equal(undefined);
    if (cell.outcome.kind === 'refused') {
      expect(res.status, `${context}: status (body: ${res.text.slice(0, 300)})`).to.equal(cell.outcome.status);
      expectError(res, cell.outcome.status, cell.outcome.code, cell.outcome.field === undefined ? undefined : `${cell.outcome.field}:`);
    } else {
      expect(res.status, `${context}: status (body: ${res.text.slice(0, 300)})`).to.be.within(200, 299);
      expectWithinReach(at, res, context);
      try {
        cell.outcome.check?.(res);
      } catch (error) {
        (error as Error).message = `${context}: ${(error as Error).message}`;
        throw error;
      }
    }
    const auditRows = auditRowsAfter(app.db, auditMark);
    if (refusedWrite) {
      refusedWrites += 1;
      const after = booksSnapshot(app.db);
      expect(rowCounts(after), `${context}: row counts of every table after the refused write`).to.deep.equal(rowCounts(before!));
      for (const table of Object.keys(after)) {
        expect(after[table]!.contents === before![table]!.contents, `${context}: table ${table} changed under a refused write`).to.equal(true);
      }
      expect(auditRows, `${context}: a refused write leaves no audit row`).to.deep.equal([]);
    } else if (cell.method === 'POST') {
      servedWrites.set(at.key.id, (servedWrites.get(at.key.id) ?? 0) + 1);
      expect(auditRows.map((row) => [row.actor_id, row.actor_name]), `${context}: the write's one audit row names the key`).to.deep.equal([[at.key.id, at.key.name]]);
    } else {
      expect(auditRows, `${context}: a read leaves no audit row`).to.deep.equal([]);
    }
    cellCounts.set(at.def.id, (cellCounts.get(at.def.id) ?? 0) + 1);
  }

  describe('the matrix', () => {
    before(() => {
      countsBeforeMatrix = rowCounts(booksSnapshot(app.db));
      auditMarkBeforeMatrix = lastAuditId(app.db);
    });

    it('covers every operation the API serves: the route table is the 22 operations of OPERATION_IDS', () => {
      expect([...ROUTES.keys()].sort()).to.deep.equal([...OPERATION_IDS].sort());
      expect(ROUTES.size).to.equal(22);
      expect([...ROUTES.values()].filter((route) => route.method === 'POST')).to.have.length(7);
    });

    for (const def of ATTACKER_DEFS) {
      describe(def.label, () => {
        for (const op of OPERATION_IDS) {
          it(`${def.rule} — ${op}`, async () => {
            const at = attackers.get(def.id)!;
            const cells = cellsFor(op, at);
            expect(cells.length, `${op} has cells for ${def.label}`).to.be.greaterThan(0);
            for (const cell of cells) await runCell(at, op, cell);
          });
        }
      });
    }
  });

  describe('what the matrix left behind', () => {
    it('counted: every operation has cells for every attacker key', () => {
      for (const def of ATTACKER_DEFS) expect(cellCounts.get(def.id) ?? 0, def.label).to.be.greaterThan(OPERATION_IDS.length);
      expect(scannedAnswers).to.be.greaterThan(300);
      expect(refusedWrites).to.be.greaterThan(100);
    });

    it("refused writes change nothing: every table (sqlite_master) holds as many rows as before the matrix, but for the attackers' own customers and their audit rows", () => {
      const after = rowCounts(booksSnapshot(app.db));
      const created = app.db.prepare("SELECT count(*) AS n FROM audit_log WHERE id > ? AND action = 'customer.create'").get(auditMarkBeforeMatrix) as { n: bigint };
      const newCustomers = Number(created.n);
      const servedTotal = [...servedWrites.values()].reduce((sum, n) => sum + n, 0);
      expect(newCustomers, "customers made by another account's key, in its own account").to.equal(2);
      const expected = { ...countsBeforeMatrix, customers: countsBeforeMatrix.customers! + newCustomers, audit_log: countsBeforeMatrix.audit_log! + servedTotal };
      // Reading Today refreshes the business's signals (Read-specific rule 4): the one table a read writes.
      delete (expected as Record<string, number>).today_signals;
      delete (after as Record<string, number>).today_signals;
      expect(after).to.deep.equal(expected);
      expect(Object.keys(after)).to.include.members([
        'invoices',
        'journal_entries',
        'journal_lines',
        'expenses',
        'review_queue_items',
        'email_outbox',
        'invoice_payments',
        'invoice_reminders',
        'idempotency_records',
      ]);
    });

    it("Authentication rule 9: refused attacker writes left no audit row; the only rows naming an attacker key are its successful writes", () => {
      for (const at of attackers.values()) {
        const rows = auditRowsAfter(app.db, auditMarkBeforeMatrix).filter((row) => row.actor_id === at.key.id);
        expect(rows.length, at.def.label).to.equal(servedWrites.get(at.key.id) ?? 0);
        for (const row of rows) expect(row.action, at.def.label).to.be.oneOf(['customer.create', 'customer.match']);
      }
      expect(servedWrites.get(keys.aReadOnly.id) ?? 0, 'a Read only key wrote nothing').to.equal(0);
    });

    it('Authentication rule 9: each write of the set-up, made through the API by a legitimate key (all 7 write operations), left exactly one audit row naming that key', () => {
      const writeOps = [...ROUTES.entries()].filter(([, route]) => route.method === 'POST').map(([id]) => id);
      expect([...new Set(setupWrites.map((w) => w.operationId))].sort()).to.deep.equal(writeOps.sort());
      expect(new Set(setupWrites.map((w) => w.key.id)).size, 'writes by four different keys').to.equal(4);
      for (const w of setupWrites) {
        expect(w.rows, w.what).to.deep.equal([
          { tenant_id: w.key.tenantId, actor_type: 'api_key', actor_id: w.key.id, actor_name: w.key.name, action: w.expected.action, subject_id: w.expected.subjectId },
        ]);
      }
    });

    it("nothing leaks, and the scan would see it if it did: the victim's own key is shown the very ids, names, numbers and emails no attacker ever was", async () => {
      const texts: string[] = [];
      const read = async (path: string) => {
        const res = await app.get(path, keys.aRw.key);
        expect(res.status, `${path}: ${res.text.slice(0, 200)}`).to.equal(200);
        texts.push(res.text);
        return res;
      };
      for (const path of ['/api/v1/businesses', '/api/v1/customers', '/api/v1/vendors']) await read(path);
      for (const business of a.businesses) {
        const views = ['accounts', 'transactions', 'invoices', 'review-queue', 'today', 'reports/ar-aging', 'reports/ap-aging'];
        for (const view of views) await read(withQuery(`/api/v1/${view}`, { entityId: business.id }));
        await read(withQuery('/api/v1/reports/trial-balance', { entityId: business.id, asOf: '2026-03-15' }));
      }
      for (const id of attackers.get('otherAccount')!.targets.invoices) await read(`/api/v1/invoices/${id}`);
      for (const id of attackers.get('otherAccount')!.targets.transactions) await read(`/api/v1/transactions/${id}`);
      const shown = texts.join('\n');
      const expectedShown = [...secrets.tenant.get(a.tenantId)!, ...a.businesses.flatMap((business) => secrets.business.get(business.id)!)].filter((secret) =>
        /^(account name|customer (id|name|email)|vendor (id|name)|business (id|name)|invoice (id|number|line|memo)|pay token|transaction (id|description)|expense memo|bill number|name of an expiring key)/.test(
          secret.what,
        ),
      );
      expect(expectedShown.length).to.be.greaterThan(40);
      expect(expectedShown.filter((secret) => secretsIn(shown, [secret]).length === 0).map((secret) => `${secret.what}: ${secret.value}`)).to.deep.equal([]);
    });
  });

  describe('the pay page (the link is the key)', () => {
    interface Issued {
      id: string;
      number: string;
      businessId: string;
      status: string;
      sentAt: string | null;
      token: string;
    }
    const issued = (): Issued[] =>
      (app.db.prepare('SELECT id, number, business_id, status, sent_at FROM invoices ORDER BY number').all() as Record<string, string | null>[]).map((row) => ({
        id: row.id!,
        number: row.number!,
        businessId: row.business_id!,
        status: row.status!,
        sentAt: row.sent_at ?? null,
        token: payToken(app.db, row.id!),
      }));

    it("GET /pay/{token} shows that one invoice: no other invoice's number, no other business, nothing of another account", async () => {
      const invoices = issued();
      const sent = invoices.filter((invoice) => invoice.sentAt !== null);
      expect(sent.length).to.be.greaterThan(3);
      for (const invoice of sent) {
        const res = await app.get(`/pay/${invoice.token}`, null);
        expect(res.status, invoice.number).to.equal(200);
        expect(res.text, invoice.number).to.include(`Invoice ${invoice.number}`);
        const others = invoices.filter((other) => other.id !== invoice.id);
        const otherSecrets: Secret[] = [
          ...others.map((other) => ({ value: other.number, what: 'another invoice number' })),
          ...others.map((other) => ({ value: other.token, what: "another invoice's token" })),
          ...[...a.businesses, ...b.businesses].filter((business) => business.id !== invoice.businessId).map((business) => ({ value: business.name, what: 'another business' })),
          ...[...secrets.tenant.entries()].filter(([tenantId]) => tenantId !== ownerOf(invoice.id)?.tenantId).flatMap(([, list]) => list),
        ];
        expect(secretsIn(res.text, otherSecrets).map((secret) => `${secret.what}: ${secret.value}`), invoice.number).to.deep.equal([]);
      }
    });

    it("a draft's token, and every token of account A's invoices mutated (a character changed, case swapped, cut, lengthened, spliced with account B's), get the one plain 404 page that reveals nothing", async () => {
      const invoices = issued();
      const unknown = await app.get(`/pay/${randomBytes(32).toString('base64url')}`, null);
      expect(unknown.status).to.equal(404);
      const bToken = invoices.find((invoice) => ownerOf(invoice.id)?.tenantId === b.tenantId && invoice.sentAt !== null)!.token;
      const everything = [...secrets.tenant.values(), ...secrets.business.values()].flat();
      const paths: Array<[string, string]> = [];
      for (const invoice of invoices.filter((candidate) => ownerOf(candidate.id)?.tenantId === a.tenantId)) {
        const t = invoice.token;
        if (invoice.sentAt === null) {
          paths.push([`${invoice.number}: a draft's own token`, t]);
          continue;
        }
        const swap = (ch: string) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase());
        const letterAt = [...t].findIndex((ch) => /[A-Za-z]/.test(ch));
        paths.push(
          [`${invoice.number}: first character changed`, (t[0] === 'A' ? 'B' : 'A') + t.slice(1)],
          [`${invoice.number}: last character changed`, t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A')],
          [`${invoice.number}: case of one letter swapped`, t.slice(0, letterAt) + swap(t[letterAt]!) + t.slice(letterAt + 1)],
          [`${invoice.number}: one character short`, t.slice(0, -1)],
          [`${invoice.number}: one character long`, `${t}A`],
          [`${invoice.number}: spliced with account B's token`, t.slice(0, 22) + bToken.slice(22)],
          [`${invoice.number}: reversed`, [...t].reverse().join('')],
        );
      }
      expect(paths.length).to.be.greaterThan(20);
      for (const [what, token] of paths) {
        const res = await app.get(`/pay/${token}`, null);
        expect(res.status, what).to.equal(404);
        expect(res.text, `${what}: the same bytes as an unknown token`).to.equal(unknown.text);
        expect(secretsIn(res.text, everything).map((secret) => secret.what), what).to.deep.equal([]);
      }
    });
  });

  describe('Authentication rule 7: revocation applies to the next request; requests already running finish', () => {
    it('three sends caught in flight (awaiting an exchange rate) finish 200 under the key revoked meanwhile, whose very next request answers 401 invalid_key', async () => {
      const [a1] = a.businesses as [Business, Business];
      const inflight = buildKey(app.db, app.clock, { tenantId: a.tenantId, name: 'victim-inflight-sender' });
      const drafts: string[] = [];
      for (const [currency, issueDate] of [
        ['EUR', '2026-03-02'],
        ['GBP', '2026-03-04'],
        ['CAD', '2026-03-06'],
      ] as const) {
        const res = await app.post(pathOf('invoices.create'), inflight.key, invoiceBody(app, a1.id, a.customers[0]!.id, { entityId: a1.id, currency, issueDate }));
        expect(res.status, res.text).to.equal(201);
        drafts.push(res.body.invoiceId);
      }
      expect((await app.get('/api/v1/businesses', inflight.key)).status).to.equal(200);
      const mark = lastAuditId(app.db);

      const sends = drafts.map((id) => app.post(pathOf('invoices.send', id), inflight.key));
      await provider.waitUntilHeld(3);
      const revoked = revokeKey(app.db, app.clock, TEST_ACTOR, inflight.id);
      expect(revoked.revokedAt).to.equal(START);

      expectError(await app.get('/api/v1/businesses', inflight.key), 401, 'invalid_key');
      expectError(await app.post(pathOf('customers.create'), inflight.key, { name: 'After Revocation Co' }), 401, 'invalid_key');
      expect(provider.held(), 'the three sends are still waiting').to.equal(3);

      provider.releaseAll();
      const finished = await Promise.all(sends);
      for (const [index, res] of finished.entries()) {
        expect(res.status, `send ${index}: ${res.text.slice(0, 300)}`).to.equal(200);
        expect(res.body.id).to.equal(drafts[index]);
        expect(res.body.status).to.equal('sent');
      }
      // Each send that ran is on record under the key's name (rule 9), and nothing else is in
      // the account's trail; the rates a send looked up are the installation's rows.
      const rows = auditRowsAfter(app.db, mark).filter((row) => row.actor_type === 'api_key' && row.tenant_id !== null);
      expect(rows.map((row) => [row.action, row.subject_id, row.actor_id, row.actor_name]).sort()).to.deep.equal(
        drafts.map((id) => ['invoice.send', id, inflight.id, 'victim-inflight-sender']).sort(),
      );
      expectError(await app.get('/api/v1/businesses', inflight.key), 401, 'invalid_key');
      expect(
        Number((app.db.prepare("SELECT count(*) AS n FROM customers WHERE name = 'After Revocation Co'").get() as { n: bigint }).n),
        'the refused write wrote nothing',
      ).to.equal(0);
    });
  });

  describe('Authentication rule 2: only a fingerprint of a key is kept', () => {
    it('no stored value in any table, nor any byte of the books and counter files, holds a key; the keys table holds its SHA-256 fingerprint, which is no key', async () => {
      const everyKey = app.db.prepare('SELECT id, fingerprint FROM api_keys').all() as { id: string; fingerprint: string }[];
      const known = [...Object.values(keys), ...[...attackers.values()].map((at) => at.key)];
      expect(everyKey.length).to.be.greaterThanOrEqual(new Set(known.map((key) => key.id)).size);
      expect(tableNames(app.db).length).to.be.greaterThan(20);
      const files = databaseFiles(app.dbPath).filter((path) => existsSync(path));
      expect(files).to.include(app.dbPath);
      const bytes = files.map((path) => [path, readFileSync(path)] as const);
      for (const key of known) {
        const body = key.key.slice(KEY_PREFIX.length);
        expect(storedPlacesContaining(app.db, key.key), `${key.name}: the key value`).to.deep.equal([]);
        expect(storedPlacesContaining(app.db, body), `${key.name}: the key without its prefix`).to.deep.equal([]);
        for (const [path, content] of bytes) expect(content.includes(body), `${key.name} in ${path}`).to.equal(false);
        const stored = everyKey.find((row) => row.id === key.id)!;
        expect(stored.fingerprint).to.equal(createHash('sha256').update(key.key, 'utf8').digest('hex'));
      }
      expectError(await app.get('/api/v1/businesses', everyKey[0]!.fingerprint), 401, 'invalid_key');
      expectError(await app.get('/api/v1/businesses', `${KEY_PREFIX}${everyKey[0]!.fingerprint.slice(0, 49)}`), 401, 'invalid_key');
    });
  });

  // (Mocha runs this before the nested suites; it uses only what the set-up made, and its writes are all refused.)
  it('Endpoints entity rule: a row, reference or business of another account answers exactly as a nonexistent id does (the same body, no tell)', async () => {
    const other = attackers.get('otherAccount')!;
    const limited = attackers.get('otherAccountLimited')!;
    const missing = '00000000-0000-4000-8000-000000000000';
    const [b1] = b.businesses as [Business, Business];
    const expense = (vendorId: string) => ({ entityId: b1.id, date: '2026-03-13', amountCents: '100', vendorId, accountId: office(b1) });
    const invoice = other.targets.invoices[0]!;
    const pairs: Array<{ what: string; foreignId: string; status: number; code: SpecErrorCode; send: (id: string) => Promise<TestResponse> }> = [
      { what: 'GET /invoices/{id}', foreignId: invoice, status: 404, code: 'not_found', send: (id) => app.get(pathOf('invoices.get', id), other.key.key) },
      {
        what: 'GET /transactions/{id}',
        foreignId: other.targets.transactions[0]!,
        status: 404,
        code: 'not_found',
        send: (id) => app.get(pathOf('transactions.get', id), other.key.key),
      },
      {
        what: 'entityId, unlimited key',
        foreignId: a.businesses[0]!.id,
        status: 404,
        code: 'not_found',
        send: (id) => app.get(withQuery(pathOf('accounts.list'), { entityId: id }), other.key.key),
      },
      {
        what: 'entityId, limited key',
        foreignId: a.businesses[0]!.id,
        status: 403,
        code: 'entity_not_allowed',
        send: (id) => app.get(withQuery(pathOf('accounts.list'), { entityId: id }), limited.key.key),
      },
      { what: 'POST /invoices/{id}/send', foreignId: invoice, status: 404, code: 'not_found', send: (id) => app.post(pathOf('invoices.send', id), other.key.key) },
      {
        what: 'POST /review-queue/{id}/accept',
        foreignId: other.targets.reviewItems[0]!,
        status: 404,
        code: 'not_found',
        send: (id) => app.post(pathOf('review.accept', id), other.key.key, {}),
      },
      {
        what: 'customerId in POST /invoices',
        foreignId: a.customers[0]!.id,
        status: 404,
        code: 'not_found',
        send: (id) => app.post(pathOf('invoices.create'), other.key.key, invoiceBody(app, b1.id, id, { entityId: b1.id })),
      },
      {
        what: 'vendorId in POST /expenses',
        foreignId: a.vendors[0]!.id,
        status: 404,
        code: 'not_found',
        send: (id) => app.post(pathOf('expenses.create'), other.key.key, expense(id)),
      },
    ];
    for (const pair of pairs) {
      const foreign = await pair.send(pair.foreignId);
      const none = await pair.send(missing);
      expectError(foreign, pair.status, pair.code);
      expectError(none, pair.status, pair.code);
      expect(withoutRequestId(foreign), pair.what).to.equal(withoutRequestId(none));
    }
  });
});
