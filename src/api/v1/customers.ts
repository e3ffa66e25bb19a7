import { Type } from '@sinclair/typebox';
import { listCustomers as listTenantCustomers } from '../../books/customers.js';
import { findOrCreateCustomerCommand } from '../../door/commands/parties.js';
import { nameListFilters, pageRequestOf } from './paging.js';
import { defineRead, defineWrite } from '../../http/operation.js';
import { CurrencyCode, EmailAddress, Name, NameListQuery, Nullable, Strict, Text, Uuid } from '../schemas/common.js';

export const CustomerSchema = Strict(
  {
    id: Uuid,
    name: Type.String(),
    email: Nullable(Type.String()),
    currency: CurrencyCode,
    paymentTermsDays: Nullable(Type.Integer()),
  },
  { title: 'Customer' },
);

export const listCustomers = defineRead({
  id: 'customers.list',
  method: 'GET',
  path: '/customers',
  permission: 'customers:read',
  summary: 'List the customers of the account',
  description:
    'Customers belong to the account, not to a business: every key sees them all, a business-limited key included. Ordered by name (case-insensitive); cursor-paged.',
  params: Strict({}),
  query: NameListQuery,
  body: Strict({}),
  responses: {
    200: { description: 'A page of customers', schema: Strict({ customers: Type.Array(CustomerSchema), nextCursor: Nullable(Type.String()) }) },
  },
  errors: [],
  handle({ principal, services, query }) {
    const page = listTenantCustomers(services.db, principal.tenant.id, nameListFilters(query), pageRequestOf(query));
    return { status: 200, body: { customers: page.rows, nextCursor: page.nextCursor } };
  },
});

export const CreateCustomerBody = Strict({
  name: Name(200),
  email: Type.Optional(EmailAddress(320)),
  phone: Type.Optional(Text(40)),
  addressLine1: Type.Optional(Text(200)),
  addressLine2: Type.Optional(Text(200)),
  city: Type.Optional(Text(200)),
  state: Type.Optional(Text(200)),
  postalCode: Type.Optional(Text(200)),
  currency: Type.Optional(CurrencyCode),
  paymentTermsDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
  remindersEnabled: Type.Optional(Type.Boolean()),
});

const CreatedCustomer = Strict({ id: Uuid, created: Type.Boolean() });

export const createCustomer = defineWrite({
  id: 'customers.create',
  method: 'POST',
  path: '/customers',
  permission: 'customers:write',
  summary: 'Create a customer, or return the existing one of that name',
  description:
    'An existing customer with the same name (case-insensitive, archived customers skipped) is returned unchanged and every other field sent is ignored.',
  params: Strict({}),
  query: Strict({}),
  body: CreateCustomerBody,
  responses: {
    201: { description: 'A new customer', schema: CreatedCustomer },
    200: { description: 'A customer of that name already existed', schema: CreatedCustomer },
  },
  errors: ['conflict'],
  command: findOrCreateCustomerCommand,
  input: ({ principal, body }) => ({ tenantId: principal.tenant.id, customer: body }),
  reply: (result) => ({ status: result.created ? 201 : 200, body: result }),
});
