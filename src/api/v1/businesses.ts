import { Type } from '@sinclair/typebox';
import { reachableBusinesses } from '../../door/reach.js';
import { defineRead } from '../../http/operation.js';
import { Strict, Uuid } from '../schemas/common.js';

export const BusinessSchema = Strict({ id: Uuid, name: Type.String() }, { title: 'Business' });

export const listBusinesses = defineRead({
  id: 'businesses.list',
  method: 'GET',
  path: '/businesses',
  permission: 'businesses:read',
  summary: 'List the businesses the key can reach',
  description: 'A key limited to chosen businesses sees only those. The account name comes alongside.',
  params: Strict({}),
  query: Strict({}),
  body: Strict({}),
  responses: {
    200: {
      description: 'The account name and the reachable businesses',
      schema: Strict({ accountName: Type.String(), businesses: Type.Array(BusinessSchema) }),
    },
  },
  errors: [],
  handle({ principal }) {
    const businesses = reachableBusinesses(principal).map(({ id, name }) => ({ id, name }));
    return { status: 200, body: { accountName: principal.tenant.name, businesses } };
  },
});
