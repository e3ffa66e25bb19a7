import { Type } from '@sinclair/typebox';
import { ACCOUNT_TYPES, listPostableAccounts } from '../../books/chart.js';
import { defineRead } from '../../http/operation.js';
import { EntityId, StringEnum, Strict, Uuid } from '../schemas/common.js';

export const AccountSchema = Strict(
  {
    id: Uuid,
    code: Type.String(),
    name: Type.String(),
    type: StringEnum(ACCOUNT_TYPES),
    path: Type.String({ description: 'full path through the chart, parent names joined by " > "' }),
  },
  { title: 'Account' },
);

export const listAccounts = defineRead({
  id: 'accounts.list',
  method: 'GET',
  path: '/accounts',
  permission: 'accounts:read',
  summary: 'List the postable accounts of a business',
  description: 'Postable leaves of the chart of accounts; headings and archived accounts are never returned. Not paged.',
  params: Strict({}),
  query: Strict({ entityId: Type.Optional(EntityId), type: Type.Optional(StringEnum(ACCOUNT_TYPES)) }),
  body: Strict({}),
  responses: {
    200: { description: 'Every postable account, ordered by code', schema: Strict({ accounts: Type.Array(AccountSchema) }) },
  },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, query, reached }) {
    const business = reached.business!;
    return { status: 200, body: { accounts: listPostableAccounts(services.db, business.id, query.type) } };
  },
});
