import { Type } from '@sinclair/typebox';
import { refreshToday, SIGNAL_SEVERITIES } from '../../books/today.js';
import { defineRead } from '../../http/operation.js';
import { EntityId, Strict, StringEnum } from '../schemas/common.js';

export const SignalSchema = Strict(
  {
    id: Type.String({ description: 'stable while the signal stays open' }),
    severity: StringEnum(SIGNAL_SEVERITIES),
    sentence: Type.String(),
    action: Type.String(),
    evidence: Type.Array(Strict({ label: Type.String(), url: Type.Optional(Type.String()) })),
  },
  { title: 'TodaySignal' },
);

export const getToday = defineRead({
  id: 'today.get',
  method: 'GET',
  path: '/today',
  permission: 'today:read',
  summary: 'What needs attention in a business today',
  description:
    'Signals worked out from the books by the rules in docs/today.md, most severe first, and a headline. Reading Today refreshes when each signal was last seen and closes those that no longer apply, as opening the Today page does; nothing in the books changes.',
  params: Strict({}),
  query: Strict({ entityId: Type.Optional(EntityId) }),
  body: Strict({}),
  responses: { 200: { description: 'The headline and the open signals', schema: Strict({ headline: Type.String(), signals: Type.Array(SignalSchema) }) } },
  errors: ['entity_not_allowed', 'not_found'],
  scope: ({ query }) => ({ business: query.entityId }),
  handle({ services, reached }) {
    const business = reached.business!;
    const feed = refreshToday(services.db, services.clock, business, { siteUrl: services.config.siteUrl });
    return {
      status: 200,
      body: {
        headline: feed.headline,
        signals: feed.signals.map((signal) => ({
          id: signal.id,
          severity: signal.severity,
          sentence: signal.sentence,
          action: signal.action,
          evidence: signal.evidence.map((item) => (item.url === undefined ? { label: item.label } : { label: item.label, url: item.url })),
        })),
      },
    };
  },
});
