import { Type } from '@sinclair/typebox';
import { findOrCreateCustomer } from '../../books/customers.js';
import { defineWrite } from '../../http/operation.js';
import { CurrencyCode, Name, Strict, Text, Uuid } from '../../schemas/common.js';

export const CreateCustomerBody = Strict({
  name: Name(200),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
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
  work({ principal, services, actor, body }) {
    const result = findOrCreateCustomer(services.db, services.clock, actor, principal.tenant.id, body);
    return { status: result.created ? 201 : 200, body: result };
  },
});
