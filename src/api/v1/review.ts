import { Type } from '@sinclair/typebox';
import { acceptReviewItemCommand } from '../../door/commands/spending.js';
import { reachableBusinesses, type Reached } from '../../door/reach.js';
import type { Principal } from '../../books/keys.js';
import { listReviewQueue, type ReviewItem } from '../../books/review.js';
import { validationFailed } from '../../errors.js';
import { defineRead, defineWrite } from '../../http/operation.js';
import { usd } from '../../money.js';
import { DEFAULT_PAGE_SIZE, IsoDate, LimitParam, Money, Nullable, Strict, Uuid } from '../schemas/common.js';

export const ReviewItemSchema = Strict(
  {
    id: Uuid,
    date: IsoDate,
    amount: Money,
    vendor: Nullable(Type.String()),
    description: Nullable(Type.String()),
    proposedAccountId: Nullable(Uuid),
    proposedAccount: Nullable(Type.String()),
    confidence: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'null when the categoriser could not place the item' })),
    rationale: Nullable(Type.String()),
  },
  { title: 'ReviewItem' },
);

function presentItem(item: ReviewItem) {
  return {
    id: item.id,
    date: item.date,
    amount: usd(item.amountCents),
    vendor: item.vendor,
    description: item.description,
    proposedAccountId: item.proposedAccountId,
    proposedAccount: item.proposedAccount,
    confidence: item.confidence,
    rationale: item.rationale,
  };
}

/**
 * The businesses a queue read spans (read rule 3): the one named; else, when it is omitted, every
 * business of the account for an unlimited key, the only one for a key limited to one, and a
 * key limited to several must name one.
 */
function queueBusinesses(principal: Principal, named: Reached): string[] {
  if (named.business) return [named.business.id];
  if (principal.businessIds && principal.businessIds.length > 1) {
    throw validationFailed('entityId', 'required: this key is limited to several businesses; name one');
  }
  return reachableBusinesses(principal).map((business) => business.id);
}

/** `entityId` of the queue read, whose omission read rule 3 settles otherwise than the entity rule. */
const QueueEntityId = Type.String({
  format: 'uuid',
  description:
    'the business (a UUID). Omitted, the queue spans every business the key reaches, except for a key limited to several businesses, which must name one: omitting it then is 422 validation_failed (`entityId: required: …`). A business the key was not given is 403 entity_not_allowed; an id that is no business of the account is 404 not_found.',
});

export const listReviewQueueOperation = defineRead({
  id: 'review.list',
  method: 'GET',
  path: '/review-queue',
  permission: 'review:read',
  summary: 'The review queue, oldest first',
  description:
    'Limited, not paged: limit counts both lists; hasMore says whether more items wait. highConfidence holds items whose proposal scored at or above the configured threshold (DAYBOOK_REVIEW_CONFIDENCE, default 0.9); every other item is in needsReview. Without entityId the queue spans every business of the account, except for a key limited to several businesses, which must name one.',
  params: Strict({}),
  query: Strict({ entityId: Type.Optional(QueueEntityId), limit: Type.Optional(LimitParam) }),
  body: Strict({}),
  responses: {
    200: {
      description: 'The oldest waiting items',
      schema: Strict({ hasMore: Type.Boolean(), highConfidence: Type.Array(ReviewItemSchema), needsReview: Type.Array(ReviewItemSchema) }),
    },
  },
  errors: ['entity_not_allowed', 'not_found'],
  // Only a named business is a scope to reach; omitted, the queue spans what the key reaches.
  scope: ({ query }) => (query.entityId !== undefined ? { business: query.entityId } : null),
  handle({ principal, services, query, reached }) {
    const queue = listReviewQueue(
      services.db,
      queueBusinesses(principal, reached),
      query.limit ?? DEFAULT_PAGE_SIZE,
      services.config.reviewConfidence,
    );
    return {
      status: 200,
      body: { hasMore: queue.hasMore, highConfidence: queue.highConfidence.map(presentItem), needsReview: queue.needsReview.map(presentItem) },
    };
  },
});

export const acceptReviewItemOperation = defineWrite({
  id: 'review.accept',
  method: 'POST',
  path: '/review-queue/:id/accept',
  permission: 'review:write',
  summary: 'Accept a review item: post it and take it off the queue',
  description:
    'Books the item to accountId, else to its proposal (422 naming accountId when it has none), on the transaction\'s date: the account debited, the bank account credited. A payout of the card processor (money in; its proposal is Card Payments Clearing) is booked the other way, the bank debited and Card Payments Clearing credited, and to no other account (422 naming accountId). The transaction becomes accepted, or edited when the account differs from the proposal. This is the only call that removes an item from the queue; accepting it again is 409.',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({ accountId: Type.Optional(Uuid) }),
  responses: { 200: { description: 'Accepted', schema: Strict({ ok: Type.Literal(true) }) } },
  errors: ['not_found', 'period_locked', 'read_only_billing_state', 'conflict'],
  command: acceptReviewItemCommand,
  input: ({ params, body }) => ({ itemId: params.id, ...(body.accountId !== undefined ? { accountId: body.accountId } : {}) }),
  reply: () => ({ status: 200, body: { ok: true as const } }),
});
