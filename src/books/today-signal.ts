import type { Db } from '../db/connection.js';
import type { Business } from './businesses.js';

/** What Today's rules find, and what they share: the shape of a signal and where its evidence links. */

export const SIGNAL_SEVERITIES = ['blocking', 'urgent', 'attention', 'informational'] as const;
export type Severity = (typeof SIGNAL_SEVERITIES)[number];

export interface Evidence {
  label: string;
  url?: string;
}

/** What a rule finds: `kind` and `subjectId` say which signal it is, so it keeps its id while it applies. */
export interface FoundSignal {
  kind: string;
  subjectId: string | null;
  severity: Severity;
  sentence: string;
  action: string;
  evidence: Evidence[];
}

/** Where evidence links point: the API's own address for a resource. */
export interface TodayContext {
  siteUrl: string;
}

/** One rule of docs/today.md: what it finds in one business today. */
export type Rule = (db: Db, business: Business, today: string, context: TodayContext) => FoundSignal[];

export const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

export function invoiceUrl(context: TodayContext, invoiceId: string): string {
  return `${context.siteUrl}/api/v1/invoices/${invoiceId}`;
}
