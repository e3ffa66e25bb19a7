import { setRate } from '../../books/fx.js';
import type { RateSource } from '../../books/fx.js';
import type { FxProvider } from '../../config.js';
import type { QuotedRates } from '../../rates/provider.js';
import { storeQuotedRates } from '../../rates/store.js';
import { recordAudit } from '../../store/audit.js';
import { defineCommand } from '../door.js';

/** The installation's own records, which belong to no account: exchange rates, migrations, restores. */

export const setRateCommand = defineCommand({
  name: 'rate.set',
  scope: () => ({ installation: true }),
  run: ({ db, clock, actor }, input: { currency: string; date: string; usdPerUnit: string; source?: RateSource }) => setRate(db, clock, actor, input),
});

/** A provider's quote: the rates job's, or the one a send or payment asked for. */
export const storeQuoteCommand = defineCommand({
  name: 'rates.store',
  scope: () => ({ installation: true }),
  run: ({ db, clock, actor }, input: { source: FxProvider; quoted: QuotedRates }) => storeQuotedRates(db, clock, actor, input.source, input.quoted),
  leavesNoRowWhen: (stored) => stored.stored === 0,
});

export const recordMigration = defineCommand({
  name: 'books.migrate',
  scope: () => ({ installation: true }),
  run: ({ db, clock, actor }, input: { applied: readonly string[] }) =>
    recordAudit(db, clock, actor, { tenantId: null, action: 'books.migrate', subjectType: 'schema', subjectId: input.applied[input.applied.length - 1] ?? null, detail: { applied: input.applied } }),
});

export const recordRestore = defineCommand({
  name: 'books.restore',
  scope: () => ({ installation: true }),
  run: ({ db, clock, actor }, input: { from: string; bytes: number; replaced: boolean; schema: string | null; migrated: readonly string[] }) =>
    recordAudit(db, clock, actor, { tenantId: null, action: 'books.restore', subjectType: 'backup', subjectId: input.from, detail: { ...input } }),
});
