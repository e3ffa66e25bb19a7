import { type Clock, fixedClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connection.js';
import { type Tenant, type CreateTenantInput, createTenant } from '../../src/books/tenants.js';
import { type Actor, CLI_ACTOR } from '../../src/store/audit.js';
import { type Business, type CreateBusinessInput, createBusiness } from '../../src/books/businesses.js';
import { type CreatedKey, type CreateKeyInput, createKey } from '../../src/books/keys.js';
import { listPostableAccounts, systemAccountId, type SystemRole } from '../../src/books/chart.js';
import { type JournalEntry, postEntry } from '../../src/books/ledger.js';

/** Test factories: each builds a valid record through the same books functions the CLI uses. */

export const TEST_ACTOR: Actor = CLI_ACTOR;

export function testClock(at = '2026-03-15T12:00:00.000Z') {
  return fixedClock(at);
}

let counter = 0;
const next = () => ++counter;

export function buildTenant(db: Db, clock: Clock, overrides: Partial<CreateTenantInput> = {}): Tenant {
  return createTenant(db, clock, TEST_ACTOR, { name: `Test Firm ${next()}`, plan: 'small', ...overrides });
}

export function buildBusiness(db: Db, clock: Clock, overrides: Partial<CreateBusinessInput> & { tenantId?: string } = {}): Business {
  const tenantId = overrides.tenantId ?? buildTenant(db, clock).id;
  return createBusiness(db, clock, TEST_ACTOR, { name: `Test Business ${next()}`, basis: 'accrual', ...overrides, tenantId });
}

export function buildKey(db: Db, clock: Clock, overrides: Partial<CreateKeyInput> & { tenantId: string }): CreatedKey {
  return createKey(db, clock, TEST_ACTOR, { name: `test key ${next()}`, access: 'read_write', ...overrides });
}

/** The id of a postable account by its system role, or by name when no role is given. */
export function accountIdByRole(db: Db, businessId: string, role: SystemRole): string {
  return systemAccountId(db, businessId, role);
}

export function accountIdByName(db: Db, businessId: string, name: string): string {
  const found = listPostableAccounts(db, businessId).find((account) => account.name === name);
  if (!found) throw new Error(`no postable account named ${name}`);
  return found.id;
}

/** Any account by name, headings and archived ones included (accountIdByName lists only postable ones). */
export function anyAccountIdByName(db: Db, businessId: string, name: string): string {
  const found = db.prepare('SELECT id FROM ledger_accounts WHERE business_id = ? AND name = ?').get(businessId, name) as { id: string } | undefined;
  if (!found) throw new Error(`no account named ${name}`);
  return found.id;
}

/** Posts an owner's deposit: the bank debited, owner's equity credited, `amountCents` each. */
export function postDeposit(db: Db, clock: Clock, businessId: string, date: string, amountCents: bigint): JournalEntry {
  return postEntry(db, clock, TEST_ACTOR, {
    businessId,
    date,
    sourceType: 'manual',
    lines: [
      { accountId: systemAccountId(db, businessId, 'bank'), direction: 'debit', amountCents },
      { accountId: systemAccountId(db, businessId, 'owner_equity'), direction: 'credit', amountCents },
    ],
  });
}
