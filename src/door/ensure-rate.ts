import type { FxProvider } from '../config.js';
import type { Currency, ForeignCurrency } from '../money.js';
import { lookUpRate } from '../rates/look-up.js';
import type { QuotedRates } from '../rates/provider.js';
import { storeQuoteCommand } from './commands/installation.js';
import { type DoorServices, type Writer, writeNow } from './door.js';
import { INSTALLATION_REACH } from './reach.js';

/**
 * A foreign invoice posts at a stored rate. When none is stored for the date, the configured
 * provider is asked once, before the write's transaction; its rates are stored through the
 * door under the writer that asked. What it could not give is said in the 422 the write then
 * answers.
 */
export async function ensureRate(services: DoorServices, writer: Writer, currency: Currency, date: string): Promise<void> {
  if (currency === 'USD') return;
  const { config, log } = services;
  if (!config) throw new Error('write door: looking up a rate needs the server’s settings');
  const provider = { kind: config.fxProvider, url: config.fxProviderUrl };
  const storer: Writer = { actor: writer.actor, reach: INSTALLATION_REACH };
  const store = (source: FxProvider, quoted: QuotedRates) => writeNow(services, storer, storeQuoteCommand, { source, quoted });
  const found = await lookUpRate(services.db, services.clock, store, provider, currency as ForeignCurrency, date, {
    maxAgeDays: config.rateMaxAgeDays,
  });
  if (found.problem) log?.warn({ currency, date, problem: found.problem }, found.rate ? 'using an older exchange rate' : 'no exchange rate to be had');
}
