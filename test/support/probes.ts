import { Type } from '@sinclair/typebox';
import { recordAudit } from '../../src/store/audit.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { operations } from '../../src/api/v1/index.js';
import { type CommandContext, defineCommand } from '../../src/door/door.js';
import { ApiError } from '../../src/errors.js';
import { defineWrite, type Operation } from '../../src/http/operation.js';
import { Strict, Uuid } from '../../src/api/schemas/common.js';

/**
 * Probe operations let a test drive the real pipeline with a command of its own. A probe's
 * command goes through the same write door as every POST, so it appends an audit row under the
 * writer like any write: this does it, in the account the command's scope reached.
 */
export function auditProbe(context: Pick<CommandContext<unknown>, 'db' | 'clock' | 'actor' | 'reached'>, action = 'probe.write'): void {
  recordAudit(context.db, context.clock, context.actor, { tenantId: context.reached.tenantId, action });
}

/** What an awaiting probe did, for the test to observe. */
export interface AwaitingProbeLog {
  prepared: number;
  worked: number;
  afterCommits: number;
}

/** The awaiting probe's command input: the key's account and the request body. */
interface AwaitingInput {
  tenantId: string;
  name: string;
  refuse?: boolean;
  failAfterCommit?: boolean;
}

/**
 * POST /probe/awaiting {name, refuse?, failAfterCommit?}: a write that must await something
 * before it can post (as sending an invoice awaits a missing exchange rate). `gate` is what its
 * `prepare` awaits; `refuse` makes the awaited step refuse (422) so the key must be freed; the
 * command's run creates the customer `name`; its after-commit work fails when `failAfterCommit`
 * is set.
 */
export function awaitingProbe(gate: () => Promise<void>, log: AwaitingProbeLog = { prepared: 0, worked: 0, afterCommits: 0 }): Operation {
  const command = defineCommand({
    name: 'probe.awaiting',
    scope: (input: AwaitingInput) => ({ account: input.tenantId }),
    async prepare(_services, _writer, input) {
      log.prepared += 1;
      await gate();
      if (input.refuse) throw new ApiError('validation_failed', 'rate: no exchange rate for that date');
      return input.name;
    },
    run({ db, clock, actor, prepared }, input) {
      log.worked += 1;
      return { customer: findOrCreateCustomer(db, clock, actor, input.tenantId, { name: prepared }), failAfterCommit: input.failAfterCommit === true };
    },
    async afterCommit(_services, result) {
      log.afterCommits += 1;
      if (result.failAfterCommit) throw new Error('the mail server is down');
    },
  });
  return defineWrite({
    id: 'invoices.remind',
    method: 'POST',
    path: '/probe/awaiting',
    permission: 'invoices:write',
    summary: 'probe: await, then write',
    params: Strict({}),
    query: Strict({}),
    body: Strict({ name: Type.String(), refuse: Type.Optional(Type.Boolean()), failAfterCommit: Type.Optional(Type.Boolean()) }),
    responses: { 201: { description: 'created', schema: Strict({ id: Uuid, created: Type.Boolean() }) } },
    errors: [],
    command,
    input: ({ principal, body }) => ({ tenantId: principal.tenant.id, ...body }),
    reply: (result) => ({ status: 201, body: result.customer }),
  });
}

/** The published operations with probes in place of any that share their operation ids. */
export function publishedWith(probes: readonly Operation[]): Operation[] {
  const replaced = new Set(probes.map((probe) => probe.id));
  return [...operations.filter((operation) => !replaced.has(operation.id)), ...probes];
}
