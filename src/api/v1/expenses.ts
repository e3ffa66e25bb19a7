import { Type } from '@sinclair/typebox';
import { recordExpenseCommand } from '../../door/commands/spending.js';
import { validationFailed } from '../../errors.js';
import { defineWrite } from '../../http/operation.js';
import { parseCents } from '../../money.js';
import { EntityId, IsoDate, Nullable, PositiveCents, Strict, Text, Uuid, VendorName } from '../schemas/common.js';

export const CreateExpenseBody = Strict({
  entityId: Type.Optional(EntityId),
  date: IsoDate,
  amountCents: PositiveCents,
  vendorName: Type.Optional(VendorName('the vendor\'s canonical name, matched exactly (case-sensitive); a new name creates the vendor')),
  vendorId: Type.Optional(Uuid),
  accountId: Uuid,
  memo: Type.Optional(Text(2000)),
});

export const createExpense = defineWrite({
  id: 'expenses.create',
  method: 'POST',
  path: '/expenses',
  permission: 'expenses:write',
  summary: 'Record an expense, posted at once',
  description:
    'Send exactly one of vendorName and vendorId. The account is debited as sent and the business\'s bank account credited, on the expense\'s date; no categorising, and nothing enters the review queue.',
  params: Strict({}),
  query: Strict({}),
  body: CreateExpenseBody,
  responses: {
    201: { description: 'The expense and its transaction', schema: Strict({ expenseId: Uuid, transactionId: Nullable(Uuid) }) },
  },
  errors: ['entity_not_allowed', 'not_found', 'period_locked', 'read_only_billing_state', 'conflict'],
  command: recordExpenseCommand,
  input: ({ body }) => ({
    entityId: body.entityId,
    expense: {
      date: body.date,
      amountCents: parseCents(body.amountCents),
      vendor: expenseVendor(body.vendorName, body.vendorId),
      accountId: body.accountId,
      ...(body.memo !== undefined ? { memo: body.memo } : {}),
    },
  }),
  reply: (recorded) => ({ status: 201, body: recorded }),
});

/** Exactly one of vendorName and vendorId (spec, POST /expenses rules). */
function expenseVendor(vendorName: string | undefined, vendorId: string | undefined): { name: string } | { id: string } {
  if (vendorName !== undefined && vendorId !== undefined) throw validationFailed('vendorId', 'send exactly one of vendorName and vendorId, not both');
  if (vendorName !== undefined) return { name: vendorName };
  if (vendorId !== undefined) return { id: vendorId };
  throw validationFailed('vendorName', 'is required (or vendorId): send exactly one of vendorName and vendorId');
}
