import { type Business, findBusiness } from '../books/businesses.js';
import type { Principal } from '../books/keys.js';
import { findTenant } from '../books/tenants.js';
import type { Db } from '../db/connection.js';
import { one } from '../db/statements.js';
import { ApiError, notFound, validationFailed } from '../errors.js';

/**
 * Who may reach which records, and the one place that checks it. Every operation and every
 * write command declares the scope it works in (a business, an invoice, an account...); the
 * API pipeline and the write door resolve it here, once, before the work runs. A record a
 * caller cannot reach is answered exactly like one that does not exist.
 */

/** What a caller may reach. */
export type Reach =
  /** The server's operator: the admin CLI and the jobs reach every record. */
  | { kind: 'installation' }
  /** An API key: its account's businesses, or those it was limited to. */
  | { kind: 'key'; principal: Principal }
  /** The customer holding a pay link: that one invoice. */
  | { kind: 'pay-link'; invoiceId: string }
  /** A business's card processor (its signed webhook): that business's invoices. */
  | { kind: 'processor'; businessId: string }
  /** The account's Owner in the console: everything of that account, no business left out. */
  | { kind: 'console'; tenantId: string };

/** The record a piece of work is about, which the caller must reach. */
export type Scope =
  /** Installation-wide work (rates, restore, migrate): the operator's alone. */
  | { installation: true }
  | { account: string }
  /** A business by id; `undefined`: the only business the key reaches (spec: entityId may be omitted then). */
  | { business: string | undefined }
  | { invoice: string }
  | { bill: string }
  | { reviewItem: string }
  | { transaction: string }
  | { customer: string }
  | { vendor: string }
  | { ledgerAccount: string }
  | { apiKey: string };

/** What resolving a scope found: the account and, for a scope within one, the business. */
export interface Reached {
  /** Null for installation-wide work. */
  tenantId: string | null;
  business: Business | null;
}

export const INSTALLATION_REACH: Reach = { kind: 'installation' };

export function keyReach(principal: Principal): Reach {
  return { kind: 'key', principal };
}

/** Resolves `scope` for `reach`, or throws what the caller is told: not_found, entity_not_allowed or validation_failed. */
export function resolveScope(db: Db, reach: Reach, scope: Scope): Reached {
  if ('installation' in scope) {
    if (reach.kind !== 'installation') throw new Error('resolveScope: installation-wide work is the operator’s alone');
    return { tenantId: null, business: null };
  }
  if ('account' in scope) return { tenantId: reachableTenant(db, reach, scope.account), business: null };
  if ('business' in scope) return withBusiness(resolveBusiness(db, reach, scope.business));
  if ('invoice' in scope) return inBusinessOf(db, reach, 'invoice', 'SELECT business_id AS owner FROM invoices WHERE id = ?', scope.invoice);
  if ('bill' in scope) return inBusinessOf(db, reach, 'bill', 'SELECT business_id AS owner FROM bills WHERE id = ?', scope.bill);
  if ('reviewItem' in scope) return inBusinessOf(db, reach, 'review item', 'SELECT business_id AS owner FROM review_queue_items WHERE id = ?', scope.reviewItem);
  if ('transaction' in scope) return inBusinessOf(db, reach, 'transaction', 'SELECT business_id AS owner FROM transactions WHERE id = ?', scope.transaction);
  if ('ledgerAccount' in scope) return inBusinessOf(db, reach, 'ledger account', 'SELECT business_id AS owner FROM ledger_accounts WHERE id = ?', scope.ledgerAccount);
  if ('customer' in scope) return inTenantOf(db, reach, 'customer', 'SELECT tenant_id AS owner FROM customers WHERE id = ?', scope.customer);
  if ('vendor' in scope) return inTenantOf(db, reach, 'vendor', 'SELECT tenant_id AS owner FROM vendors WHERE id = ?', scope.vendor);
  return inTenantOf(db, reach, 'key', 'SELECT tenant_id AS owner FROM api_keys WHERE id = ?', scope.apiKey);
}

/** The businesses `reach` reaches in its account (a key's); the operator's reach names no single account. */
export function reachableBusinesses(principal: Principal): readonly Business[] {
  return principal.reachable;
}

function withBusiness(business: Business): Reached {
  return { tenantId: business.tenantId, business };
}

function reachableTenant(db: Db, reach: Reach, tenantId: string): string {
  if (reach.kind === 'pay-link' || reach.kind === 'processor') throw notFound('account');
  if (reach.kind === 'key' && reach.principal.tenant.id !== tenantId) throw notFound('account');
  if (reach.kind === 'console' && reach.tenantId !== tenantId) throw notFound('account');
  if (reach.kind === 'installation' && !findTenant(db, tenantId)) throw notFound('account');
  return tenantId;
}

/**
 * The business a call is about. A named business the key was not given is entity_not_allowed;
 * one that is not a business of the key's account is not_found. An omitted one is allowed
 * only when the key reaches exactly one business.
 */
function resolveBusiness(db: Db, reach: Reach, businessId: string | undefined): Business {
  if (reach.kind === 'pay-link' || reach.kind === 'processor') throw notFound('business');
  if (reach.kind === 'installation' || reach.kind === 'console') {
    if (businessId === undefined) throw validationFailed('business', 'required');
    const business = findBusiness(db, businessId);
    if (!business || (reach.kind === 'console' && business.tenantId !== reach.tenantId)) throw notFound('business');
    return business;
  }
  const { principal } = reach;
  if (businessId !== undefined) {
    if (principal.businessIds && !principal.businessIds.includes(businessId)) {
      throw new ApiError('entity_not_allowed', 'entityId: this key is not allowed to use that business.');
    }
    const business = principal.reachable.find((reachable) => reachable.id === businessId);
    if (!business) throw notFound('business');
    return business;
  }
  const reachable = reachableBusinesses(principal);
  if (reachable.length === 1) return reachable[0]!;
  if (reachable.length === 0) throw validationFailed('entityId', 'required; this key reaches no business');
  throw validationFailed('entityId', 'required when the key can reach more than one business');
}

/** A record of one business: reachable when its business is. Otherwise, as if it did not exist. */
function inBusinessOf(db: Db, reach: Reach, what: string, ownerSql: string, id: string): Reached {
  const owner = one<{ owner: string }>(db, ownerSql, id)?.owner;
  if (owner === undefined) throw notFound(what);
  if (reach.kind === 'pay-link') {
    if (what !== 'invoice' || id !== reach.invoiceId) throw notFound(what);
  } else if (reach.kind === 'processor') {
    if (what !== 'invoice' || owner !== reach.businessId) throw notFound(what);
  } else if (reach.kind === 'key' && reach.principal.businessIds && !reach.principal.businessIds.includes(owner)) {
    throw notFound(what);
  }
  const business = findBusiness(db, owner);
  if (!business || (reach.kind === 'key' && business.tenantId !== reach.principal.tenant.id) || (reach.kind === 'console' && business.tenantId !== reach.tenantId)) throw notFound(what);
  return withBusiness(business);
}

/** A record of one account (customers, vendors, keys): reachable by the operator and by that account's keys. */
function inTenantOf(db: Db, reach: Reach, what: string, ownerSql: string, id: string): Reached {
  const owner = one<{ owner: string }>(db, ownerSql, id)?.owner;
  if (owner === undefined || reach.kind === 'pay-link' || reach.kind === 'processor') throw notFound(what);
  if (reach.kind === 'key' && reach.principal.tenant.id !== owner) throw notFound(what);
  if (reach.kind === 'console' && reach.tenantId !== owner) throw notFound(what);
  return { tenantId: owner, business: null };
}
