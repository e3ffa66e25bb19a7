import { Type } from '@sinclair/typebox';
import { recordAudit } from '../../src/books/audit.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { operations } from '../../src/api/v1/index.js';
import { ApiError } from '../../src/errors.js';
import { defineWrite, type Operation, type WriteInput } from '../../src/http/operation.js';
import { Strict, type TObject, Uuid } from '../../src/schemas/common.js';

/**
 * Probe operations let a test drive the real pipeline with a handler of its own. A probe's
 * write goes through the same door as every POST, so it appends an audit row like any write.
 */
export function auditProbe(input: Pick<WriteInput<TObject, TObject, TObject>, 'services' | 'principal' | 'actor'>, action = 'probe.write'): void {
  recordAudit(input.services.db, input.services.clock, input.actor, { tenantId: input.principal.tenant.id, action });
}

/** What an awaiting probe did, for the test to observe. */
export interface AwaitingProbeLog {
  prepared: number;
  worked: number;
  afterCommits: number;
}

/**
 * POST /probe/awaiting {name, refuse?, failAfterCommit?}: a write that must await something
 * before it can post (as sending an invoice awaits a missing exchange rate). `gate` is what it
 * awaits; `refuse` makes the awaited step refuse (422) so the key must be freed; the work
 * creates the customer `name`; the work after the commit fails when `failAfterCommit` is set.
 */
export function awaitingProbe(gate: () => Promise<void>, log: AwaitingProbeLog = { prepared: 0, worked: 0, afterCommits: 0 }): Operation {
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
    async prepare({ body }) {
      log.prepared += 1;
      await gate();
      if (body.refuse) throw new ApiError('validation_failed', 'rate: no exchange rate for that date');
      return body.name;
    },
    work({ principal, services, actor }, name) {
      log.worked += 1;
      return { status: 201, body: findOrCreateCustomer(services.db, services.clock, actor, principal.tenant.id, { name }) };
    },
    async afterCommit({ body }) {
      log.afterCommits += 1;
      if (body.failAfterCommit) throw new Error('the mail server is down');
    },
  });
}

/** The published operations with probes in place of any that share their operation ids. */
export function publishedWith(probes: readonly Operation[]): Operation[] {
  const replaced = new Set(probes.map((probe) => probe.id));
  return [...operations.filter((operation) => !replaced.has(operation.id)), ...probes];
}
