import { Type } from '@sinclair/typebox';
import { listVendors as listTenantVendors } from '../../books/vendors.js';
import { nameListFilters, pageRequestOf } from './paging.js';
import { defineRead } from '../../http/operation.js';
import { NameListQuery, Nullable, Strict, Uuid } from '../schemas/common.js';

export const VendorSchema = Strict(
  {
    id: Uuid,
    name: Type.String({ description: 'canonical name' }),
    is1099Eligible: Type.Boolean(),
  },
  { title: 'Vendor' },
);

export const listVendors = defineRead({
  id: 'vendors.list',
  method: 'GET',
  path: '/vendors',
  permission: 'vendors:read',
  summary: 'List the vendors of the account',
  description:
    'Vendors belong to the account, not to a business: every key sees them all. search matches the canonical name only. Ordered by name (case-insensitive); cursor-paged.',
  params: Strict({}),
  query: NameListQuery,
  body: Strict({}),
  responses: {
    200: { description: 'A page of vendors', schema: Strict({ vendors: Type.Array(VendorSchema), nextCursor: Nullable(Type.String()) }) },
  },
  errors: [],
  handle({ principal, services, query }) {
    const page = listTenantVendors(services.db, principal.tenant.id, nameListFilters(query), pageRequestOf(query));
    const vendors = page.rows.map(({ id, name, is1099Eligible }) => ({ id, name, is1099Eligible }));
    return { status: 200, body: { vendors, nextCursor: page.nextCursor } };
  },
});
