import type { Knex } from 'knex';
import * as initial from './20261122_0001_initial.js';
import * as tenants from './20261123_0002_tenants.js';
import * as ledgerGuards from './20261123_0003_ledger_guards.js';
import * as pagedLists from './20261123_0004_paged_lists.js';
import * as invoicing from './20261123_0005_invoicing.js';
import * as reviewQueue from './20261123_0006_review_queue.js';
import * as reports from './20261123_0007_reports.js';
import * as jobs from './20261123_0008_jobs.js';
import * as nameKeys from './20261127_0009_name_keys.js';
import * as invoiceDocuments from './20261127_0010_invoice_documents.js';
import * as reviewRecordedExpense from './20261127_0011_review_recorded_expense.js';
import * as zeroUsdPayments from './20261127_0012_zero_usd_payments.js';
import * as auditTrail from './20261127_0013_audit_trail.js';
import * as cardProcessors from './20261127_0014_card_processors.js';
import * as cardPayments from './20261127_0015_card_payments.js';
import * as cardSettlement from './20261127_0016_card_settlement.js';
import * as consoleSessions from './20261127_0017_console.js';
import * as accessVersion from './20261127_0018_access_version.js';
import * as invoicePaidSums from './20261127_0019_invoice_paid_sums.js';
import * as importIndexes from './20261128_0020_import_indexes.js';

/**
 * A migration module. knex runs it inside a transaction unless it exports
 * `config = { transaction: false }`, which a table rebuild (src/db/rebuild.ts) needs.
 */
export interface MigrationModule extends Pick<Knex.Migration, 'up' | 'down'> {
  config?: { transaction?: boolean };
}

export interface MigrationEntry {
  name: string;
  module: MigrationModule;
}

/**
 * Every migration, in order. Listed explicitly (not read from a folder) so the same list
 * runs from the TypeScript sources and from the compiled build. knex refuses to run when the
 * recorded history names a migration this list does not have.
 */
export const migrations: MigrationEntry[] = [
  { name: '20261122_0001_initial', module: initial },
  { name: '20261123_0002_tenants', module: tenants },
  { name: '20261123_0003_ledger_guards', module: ledgerGuards },
  { name: '20261123_0004_paged_lists', module: pagedLists },
  { name: '20261123_0005_invoicing', module: invoicing },
  { name: '20261123_0006_review_queue', module: reviewQueue },
  { name: '20261123_0007_reports', module: reports },
  { name: '20261123_0008_jobs', module: jobs },
  { name: '20261127_0009_name_keys', module: nameKeys },
  { name: '20261127_0010_invoice_documents', module: invoiceDocuments },
  { name: '20261127_0011_review_recorded_expense', module: reviewRecordedExpense },
  { name: '20261127_0012_zero_usd_payments', module: zeroUsdPayments },
  { name: '20261127_0013_audit_trail', module: auditTrail },
  { name: '20261127_0014_card_processors', module: cardProcessors },
  { name: '20261127_0015_card_payments', module: cardPayments },
  { name: '20261127_0016_card_settlement', module: cardSettlement },
  { name: '20261127_0017_console', module: consoleSessions },
  { name: '20261127_0018_access_version', module: accessVersion },
  { name: '20261127_0019_invoice_paid_sums', module: invoicePaidSums },
  { name: '20261128_0020_import_indexes', module: importIndexes },
];
