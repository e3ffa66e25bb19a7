import type { Db } from '../db/connection.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { type Business, findBusiness, listBusinesses } from './businesses.js';
import type { Principal } from './keys.js';

/** The businesses a key can reach: all of its tenant's, or only those it was limited to. */
export function reachableBusinesses(db: Db, principal: Principal): Business[] {
  return listBusinesses(db, principal.tenant.id, principal.businessIds);
}

/**
 * The business a call is about. A named entityId the key was not given is entity_not_allowed;
 * one that is not a business of the key's tenant is not_found. An omitted entityId is
 * allowed only when the key reaches exactly one business.
 */
export function resolveBusiness(db: Db, principal: Principal, entityId: string | undefined): Business {
  if (entityId !== undefined) {
    if (principal.businessIds && !principal.businessIds.includes(entityId)) {
      throw new ApiError('entity_not_allowed', 'entityId: this key is not allowed to use that business.');
    }
    const business = findBusiness(db, entityId);
    if (!business || business.tenantId !== principal.tenant.id) throw notFound('business');
    return business;
  }
  const reachable = reachableBusinesses(db, principal);
  if (reachable.length === 1) return reachable[0]!;
  if (reachable.length === 0) throw validationFailed('entityId', 'required; this key reaches no business');
  throw validationFailed('entityId', 'required when the key can reach more than one business');
}


/**
 * Whether a single row of business `businessId` is the key's to see. A row the key cannot
 * reach answers not_found, exactly like one that does not exist (spec, Endpoints).
 */
export function canReach(db: Db, principal: Principal, businessId: string): boolean {
  if (principal.businessIds && !principal.businessIds.includes(businessId)) return false;
  return findBusiness(db, businessId)?.tenantId === principal.tenant.id;
}
