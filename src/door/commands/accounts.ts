import { createBusiness, type CreateBusinessInput } from '../../books/businesses.js';
import { createKey, type CreateKeyInput, revokeKey } from '../../books/keys.js';
import { connectCardProcessor, disconnectCardProcessor, type ProcessorSecrets } from '../../books/card-processors.js';
import { lockPeriod } from '../../books/periods.js';
import { createTenant, type CreateTenantInput, updateTenant, type UpdateTenantInput } from '../../books/tenants.js';
import { defineCommand } from '../door.js';

/** Accounts (the firms Daybook hosts), their businesses, their API keys and their period locks: the admin CLI's. */

export const createAccount = defineCommand({
  name: 'account.create',
  scope: () => ({ installation: true }),
  run: ({ db, clock, actor }, input: CreateTenantInput) => createTenant(db, clock, actor, input),
});

export const updateAccount = defineCommand({
  name: 'account.update',
  scope: (input: { id: string; changes: UpdateTenantInput }) => ({ account: input.id }),
  run: ({ db, clock, actor }, input) => updateTenant(db, clock, actor, input.id, input.changes),
});

export const createBusinessCommand = defineCommand({
  name: 'business.create',
  scope: (input: CreateBusinessInput) => ({ account: input.tenantId }),
  run: ({ db, clock, actor }, input) => createBusiness(db, clock, actor, input),
});

export const createKeyCommand = defineCommand({
  name: 'api_key.create',
  scope: (input: CreateKeyInput) => ({ account: input.tenantId }),
  run: ({ db, clock, actor }, input) => createKey(db, clock, actor, input),
});

export const revokeKeyCommand = defineCommand({
  name: 'api_key.revoke',
  scope: (input: { id: string }) => ({ apiKey: input.id }),
  run: ({ db, clock, actor }, input) => revokeKey(db, clock, actor, input.id),
  // Revoking a revoked key changes nothing and is harmless: no row.
  leavesNoRowWhen: (key) => key.alreadyRevoked,
});

export const lockPeriodCommand = defineCommand({
  name: 'period.lock',
  scope: (input: { businessId: string; through: string }) => ({ business: input.businessId }),
  run: ({ db, clock, actor }, input) => lockPeriod(db, clock, actor, input.businessId, input.through),
});

/** Connects a business to card payments, rotates its secrets, or (secrets null) disconnects it. */
export const setCardPayments = defineCommand({
  name: 'business.setCardPayments',
  scope: (input: { businessId: string; secrets: ProcessorSecrets | null }) => ({ business: input.businessId }),
  run: ({ db, clock, actor }, input) =>
    input.secrets
      ? { connected: true as const, ...connectCardProcessor(db, clock, actor, input.businessId, input.secrets) }
      : { connected: false as const, ...disconnectCardProcessor(db, clock, actor, input.businessId) },
  // Disconnecting a business that was not connected changes nothing.
  leavesNoRowWhen: (result) => !result.connected && !result.wasConnected,
});
