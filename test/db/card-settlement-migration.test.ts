import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBusiness } from '../../src/books/businesses.js';
import { postCardPayment, receiveCardPayment } from '../../src/books/card-payments.js';
import { listPostableAccounts } from '../../src/books/chart.js';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { recordPayment, sendInvoice } from '../../src/books/invoice-posting.js';
import { createInvoice } from '../../src/books/invoices.js';
import { reverseEntry } from '../../src/books/ledger.js';
import type { Clock } from '../../src/clock.js';
import { type Db, inTransaction, openDb } from '../../src/db/connection.js';
import { migrateLatest } from '../../src/db/migrate.js';
import * as cardSettlement from '../../src/db/migrations/20261127_0016_card_settlement.js';
import { ensureServerSecrets } from '../../src/store/secrets.js';
import { recordJobFinished, recordJobPlanned, recordJobStarted } from '../../src/store/job-runs.js';
import { freshDb, letOlderBooksTakeTodaysChart, migrateThrough, type TempDb } from '../support/db.js';
import { accountIdByName, accountIdByRole, anyAccountIdByName, buildBusiness, buildTenant, postDeposit, TEST_ACTOR, testClock } from '../support/factories.js';

/**
 * Migration 0016 on books written before it: ledger_accounts, journal_entries, card_payments and
 * job_runs are rebuilt with wider CHECK lists, and every business that lacks them gets the three
 * accounts card payments post to, beside the system account each belongs with, under the first
 * code the business has not used. Everything already in the books stays exactly as it was, the
 * guards on the journal answer as they did, and running the migration again changes nothing.
 */

const NEW_ROLES = ['card_clearing', 'customer_deposits', 'payment_fees'] as const;

/** The tables the migration rebuilds, and journal_lines, whose guards are recreated with them; each in a stable order. */
const KEPT_TABLES: Record<string, string> = {
  ledger_accounts: 'id',
  journal_entries: 'id',
  journal_lines: 'id',
  card_payments: 'business_id, session_id',
  job_runs: 'name',
};

function keptRows(db: Db): Record<string, unknown[]> {
  return Object.fromEntries(Object.entries(KEPT_TABLES).map(([table, order]) => [table, db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all()]));
}

/** Entries in the order they were written: the ledger export breaks ties of created_at by rowid. */
function entriesAsWritten(db: Db): string[] {
  return db.prepare('SELECT id FROM journal_entries ORDER BY rowid').pluck().all() as string[];
}

/** What a business's books hold for the checks below: a posted entry and the accounts it touches, a received card payment. */
interface Target {
  businessId: string;
  entryId: string;
  bankId: string;
  equityId: string;
  headingId: string;
  sessionId: string;
}

/**
 * A business with a posted deposit, a reversed one, a sent invoice part paid in cash (`paidCents`
 * of `totalCents`), and a card payment of the rest received but not yet posted.
 */
function fillBusiness(db: Db, clock: Clock, businessId: string, customer: string, sessionId: string, totalCents: bigint, paidCents: bigint, cardCents: bigint): Target {
  const entry = postDeposit(db, clock, businessId, '2026-03-02', 250_000n);
  const second = postDeposit(db, clock, businessId, '2026-03-03', 7_500n);
  reverseEntry(db, clock, TEST_ACTOR, second.id, '2026-03-04');
  const business = getBusiness(db, businessId);
  const { id: customerId } = inTransaction(db, () => findOrCreateCustomer(db, clock, TEST_ACTOR, business.tenantId, { name: customer }));
  const { invoiceId } = inTransaction(db, () =>
    createInvoice(db, clock, TEST_ACTOR, {
      business,
      customerId,
      issueDate: '2026-03-05',
      lines: [{ description: 'Catering', quantity: '1', unitPriceCents: totalCents, accountId: accountIdByName(db, businessId, 'Sales') }],
    }),
  );
  inTransaction(db, () => sendInvoice(db, clock, TEST_ACTOR, invoiceId, { siteUrl: 'http://localhost:3000' }));
  inTransaction(db, () => recordPayment(db, clock, TEST_ACTOR, { invoiceId, amountCents: paidCents, method: 'cash', paidAt: '2026-03-06' }));
  inTransaction(db, () =>
    receiveCardPayment(db, clock, TEST_ACTOR, {
      sessionId,
      invoiceId,
      amountCents: cardCents,
      currency: 'usd',
      paidOn: '2026-03-10',
      paymentIntentId: `pi_${sessionId}`,
      via: 'webhook',
    }),
  );
  return {
    businessId,
    entryId: entry.id,
    bankId: accountIdByRole(db, businessId, 'bank'),
    equityId: accountIdByRole(db, businessId, 'owner_equity'),
    headingId: anyAccountIdByName(db, businessId, 'Operating Expenses'),
    sessionId,
  };
}

/**
 * Writes that try to change what is posted, each as the sqlite3 shell would send it (foreign
 * keys off, no recursive triggers), with the database's answer: the refusal's message, or
 * 'accepted'. Each runs in a savepoint that is rolled back, so the books are left as they were.
 * Several of these meet more than one guard; which answers first depends on the order the
 * guards were created in.
 */
function forgeries(path: string, target: Target): Record<string, string> {
  const raw = new Database(path);
  try {
    raw.pragma('foreign_keys = OFF');
    const line = raw.prepare('SELECT * FROM journal_lines WHERE entry_id = ? AND line_no = 1').get(target.entryId) as Record<string, unknown>;
    const bank = raw.prepare('SELECT * FROM ledger_accounts WHERE id = ?').get(target.bankId) as Record<string, unknown>;
    const insertLine = (verb: string, values: unknown[]) =>
      raw
        .prepare(
          `${verb} INTO journal_lines (id, entry_id, line_no, business_id, ledger_account_id, entry_date, direction, amount_cents, basis)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...values);
    const attempts: Record<string, () => unknown> = {
      'UPDATE of a journal entry': () => raw.prepare("UPDATE journal_entries SET memo = 'forged' WHERE id = ?").run(target.entryId),
      'DELETE of a journal entry': () => raw.prepare('DELETE FROM journal_entries WHERE id = ?').run(target.entryId),
      'INSERT OR REPLACE over a posted entry': () =>
        raw
          .prepare(
            `INSERT OR REPLACE INTO journal_entries (id, business_id, entry_date, source_type, line_count, actor, created_at)
             VALUES (?, ?, '2026-03-11', 'manual', 2, 'forger', '2026-03-15T12:00:00.000Z')`,
          )
          .run(target.entryId, target.businessId),
      'UPDATE of a journal line': () => raw.prepare('UPDATE journal_lines SET amount_cents = 1 WHERE id = ?').run(line.id),
      'DELETE of a journal line': () => raw.prepare('DELETE FROM journal_lines WHERE id = ?').run(line.id),
      'INSERT OR REPLACE over a posted line': () =>
        insertLine('INSERT OR REPLACE', [line.id, line.entry_id, 1, line.business_id, line.ledger_account_id, line.entry_date, line.direction, 999_999, line.basis]),
      'INSERT OR REPLACE onto a posted line’s entry and number under a fresh id': () =>
        insertLine('INSERT OR REPLACE', [null, line.entry_id, 1, line.business_id, line.ledger_account_id, line.entry_date, line.direction, 999_999, line.basis]),
      // No such entry: the postable-account guard objects too.
      'INSERT OR REPLACE onto a posted line’s id for an entry that does not exist': () =>
        insertLine('INSERT OR REPLACE', [line.id, 'forged-entry', 1, line.business_id, line.ledger_account_id, line.entry_date, line.direction, 999_999, line.basis]),
      'INSERT of a third line into a closed entry': () =>
        insertLine('INSERT', [null, line.entry_id, 3, line.business_id, target.bankId, line.entry_date, 'debit', 1, 'both']),
      // A heading: the postable-account guard objects too.
      'INSERT of a third line, to a heading, into a closed entry': () =>
        insertLine('INSERT', [null, line.entry_id, 3, line.business_id, target.headingId, line.entry_date, 'debit', 1, 'both']),
      'INSERT OR REPLACE over the bank account': () =>
        raw
          .prepare(
            `INSERT OR REPLACE INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
             VALUES (?, ?, ?, ?, ?, 'expense', 0, 0, ?, ?)`,
          )
          .run(bank.id, bank.business_id, bank.parent_id, bank.code, bank.name, bank.system_role, bank.created_at),
      'UPDATE of a ledger account’s id': () => raw.prepare("UPDATE ledger_accounts SET id = 'forged-account' WHERE id = ?").run(target.bankId),
      'UPDATE of a posted account’s type': () => raw.prepare("UPDATE ledger_accounts SET type = 'expense' WHERE id = ?").run(target.bankId),
      // Both the code guard and the posted-account guard object.
      'UPDATE OR REPLACE of a posted account onto the bank’s code, with another type': () =>
        raw.prepare("UPDATE OR REPLACE ledger_accounts SET code = ?, type = 'liability' WHERE id = ?").run(bank.code, target.equityId),
      'DELETE of a card payment': () => raw.prepare('DELETE FROM card_payments WHERE business_id = ? AND session_id = ?').run(target.businessId, target.sessionId),
      'UPDATE of a card payment’s amount': () =>
        raw.prepare('UPDATE card_payments SET amount_cents = 1 WHERE business_id = ? AND session_id = ?').run(target.businessId, target.sessionId),
    };
    const answers: Record<string, string> = {};
    for (const [what, attempt] of Object.entries(attempts)) {
      raw.exec('SAVEPOINT forgery');
      try {
        attempt();
        answers[what] = 'accepted';
      } catch (error) {
        answers[what] = (error as Error).message;
      } finally {
        raw.exec('ROLLBACK TO forgery');
        raw.exec('RELEASE forgery');
      }
    }
    return answers;
  } finally {
    raw.close();
  }
}

/** The accounts of the new roles in a business, as the chart lists them. */
function newRoleAccounts(db: Db, businessId: string) {
  return (
    db
      .prepare(`SELECT system_role, code, name, type, parent_id, is_heading, archived FROM ledger_accounts WHERE business_id = ? AND system_role IN (${NEW_ROLES.map(() => '?').join(', ')}) ORDER BY code`)
      .all(businessId, ...NEW_ROLES) as { system_role: string; code: string; name: string; type: string; parent_id: string | null; is_heading: bigint; archived: bigint }[]
  ).map((row) => ({ ...row, is_heading: Number(row.is_heading), archived: Number(row.archived) }));
}

/** Every row of every table (knex's own records aside), and the schema: each table's triggers in the order SQLite meets them. */
function wholeBooks(db: Db): { rows: Record<string, string[]>; schema: unknown[]; triggerOrder: Record<string, string[]> } {
  const text = (row: unknown) => JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value));
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'knex_%' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  const rows = Object.fromEntries(tables.map((table) => [table, (db.prepare(`SELECT * FROM "${table}"`).all() as unknown[]).map(text).sort()]));
  const schema = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'knex_%' ORDER BY type, name").all();
  const triggerOrder: Record<string, string[]> = {};
  for (const { name, owner } of db.prepare("SELECT name, tbl_name AS owner FROM sqlite_master WHERE type = 'trigger' ORDER BY rowid").all() as { name: string; owner: string }[]) {
    (triggerOrder[owner] ??= []).push(name);
  }
  return { rows, schema, triggerOrder };
}

describe('migration 20261127_0016_card_settlement on existing books', () => {
  let dir: string;
  let path: string;
  let clock: Clock;
  /** Harbor Bakery: the standard chart, but a petty cash account of its own at 1130. */
  let harbor: Target;
  /** Pine Street Studio: its bank moved under a heading of its own, uncategorized expense moved up, 2400 taken. */
  let pine: Target;
  /** A business the older books were given with today's chart: it has the three accounts already. */
  let today: Target;
  let rowsBefore: Record<string, unknown[]>;
  let entriesBefore: string[];
  let todaysAccountsBefore: unknown[];
  let answersBefore: Record<string, string>;
  let applied: string[];
  let db: Db;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-migration-'));
    path = join(dir, 'books.sqlite');
    await migrateThrough(path, '20261127_0015_card_payments');
    clock = testClock();
    const older = openDb(path, { synchronous: 'normal' });
    try {
      ensureServerSecrets(older, clock);
      const tenant = buildTenant(older, clock);
      // Today's chart holds the three accounts the older CHECK list refuses: for building only.
      letOlderBooksTakeTodaysChart(older);
      const ids = ['Harbor Bakery', 'Pine Street Studio', 'Corner Books'].map((name) => buildBusiness(older, clock, { tenantId: tenant.id, name }).id);
      older.pragma('ignore_check_constraints = OFF');
      const [harborId, pineId, todayId] = ids as [string, string, string];

      // The chart a business had before card settlement: today's, without the three accounts.
      for (const businessId of [harborId, pineId]) {
        older.prepare(`DELETE FROM ledger_accounts WHERE business_id = ? AND system_role IN (${NEW_ROLES.map(() => '?').join(', ')})`).run(businessId, ...NEW_ROLES);
      }
      const addAccount = older.prepare(
        `INSERT INTO ledger_accounts (id, business_id, parent_id, code, name, type, is_heading, archived, system_role, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, '2026-03-01T09:00:00.000Z')`,
      );
      addAccount.run('harbor-petty-cash', harborId, anyAccountIdByName(older, harborId, 'Cash and Bank'), '1130', 'Petty Cash', 'asset', 0);

      addAccount.run('pine-bank-heading', pineId, anyAccountIdByName(older, pineId, 'Assets'), '1050', 'Bank Accounts', 'asset', 1);
      older.prepare('UPDATE ledger_accounts SET parent_id = ? WHERE id = ?').run('pine-bank-heading', accountIdByRole(older, pineId, 'bank'));
      older.prepare("UPDATE ledger_accounts SET name = 'Cash on Hand' WHERE id = ?").run(anyAccountIdByName(older, pineId, 'Cash and Bank'));
      older
        .prepare('UPDATE ledger_accounts SET parent_id = ? WHERE id = ?')
        .run(anyAccountIdByName(older, pineId, 'Expenses'), accountIdByRole(older, pineId, 'uncategorized_expense'));
      addAccount.run('pine-deposits-held', pineId, anyAccountIdByName(older, pineId, 'Liabilities'), '2400', 'Deposits Held', 'liability', 0);

      // Harbor's card payment pays the rest of its invoice; Pine's arrives after the invoice was paid in full.
      harbor = fillBusiness(older, clock, harborId, 'Harbor Cafe', 'cs_harbor_1', 100_000n, 40_000n, 60_000n);
      pine = fillBusiness(older, clock, pineId, 'Pine Gallery', 'cs_pine_1', 50_000n, 50_000n, 50_000n);
      today = fillBusiness(older, clock, todayId, 'Corner Cafe', 'cs_corner_1', 20_000n, 5_000n, 15_000n);

      recordJobPlanned(older, clock, 'rates', '0 6 * * *', new Date('2026-03-16T06:00:00.000Z'));
      recordJobStarted(older, clock, 'backup');
      recordJobFinished(older, clock, 'backup', { outcome: 'ok', durationMs: 1250, result: { files: 1 } });
      recordJobStarted(older, clock, 'overdue');
      recordJobFinished(older, clock, 'overdue', { outcome: 'failed', durationMs: 40, error: 'mail server unreachable' });

      expect(newRoleAccounts(older, harborId)).to.deep.equal([]);
      expect(newRoleAccounts(older, pineId)).to.deep.equal([]);
      todaysAccountsBefore = newRoleAccounts(older, todayId);
      expect(todaysAccountsBefore).to.have.lengthOf(3);
      rowsBefore = keptRows(older);
      entriesBefore = entriesAsWritten(older);
      expect(rowsBefore.card_payments).to.have.lengthOf(3);
      expect(rowsBefore.job_runs).to.have.lengthOf(3);
    } finally {
      older.close();
    }
    answersBefore = forgeries(path, harbor);

    ({ applied } = await migrateLatest(path));
    db = openDb(path, { synchronous: 'normal' });
  });

  after(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs on books migrated through 20261127_0015_card_payments', () => {
    expect(applied[0]).to.equal('20261127_0016_card_settlement');
  });

  it('gives each business one account of each new role, beside its related system account, under the first code it has not used', () => {
    const parentOf = (businessId: string, role: 'bank' | 'accounts_payable' | 'uncategorized_expense') =>
      (db.prepare('SELECT parent_id FROM ledger_accounts WHERE business_id = ? AND system_role = ?').get(businessId, role) as { parent_id: string }).parent_id;
    const expected = (businessId: string, codes: [clearing: string, deposits: string, fees: string]) => [
      { system_role: 'card_clearing', code: codes[0], name: 'Card Payments Clearing', type: 'asset', parent_id: parentOf(businessId, 'bank'), is_heading: 0, archived: 0 },
      { system_role: 'customer_deposits', code: codes[1], name: 'Customer Deposits', type: 'liability', parent_id: parentOf(businessId, 'accounts_payable'), is_heading: 0, archived: 0 },
      { system_role: 'payment_fees', code: codes[2], name: 'Payment Processing Fees', type: 'expense', parent_id: parentOf(businessId, 'uncategorized_expense'), is_heading: 0, archived: 0 },
    ];
    // 1130 is Harbor's petty cash; 2400 is Pine's deposits held.
    expect(newRoleAccounts(db, harbor.businessId)).to.deep.equal(expected(harbor.businessId, ['1131', '2400', '6125']));
    expect(newRoleAccounts(db, pine.businessId)).to.deep.equal(expected(pine.businessId, ['1130', '2401', '6125']));
    expect(parentOf(harbor.businessId, 'bank')).to.equal(anyAccountIdByName(db, harbor.businessId, 'Cash and Bank'));
    expect(parentOf(pine.businessId, 'bank')).to.equal('pine-bank-heading');
    expect(parentOf(pine.businessId, 'uncategorized_expense')).to.equal(anyAccountIdByName(db, pine.businessId, 'Expenses'));

    // The chart lists them where they were put, as accounts that take postings.
    const paths = (businessId: string) =>
      listPostableAccounts(db, businessId)
        .filter((account) => ['Card Payments Clearing', 'Customer Deposits', 'Payment Processing Fees'].includes(account.name))
        .map((account) => `${account.code} ${account.path}`);
    expect(paths(harbor.businessId)).to.deep.equal([
      '1131 Assets > Cash and Bank > Card Payments Clearing',
      '2400 Liabilities > Customer Deposits',
      '6125 Expenses > Operating Expenses > Payment Processing Fees',
    ]);
    expect(paths(pine.businessId)).to.deep.equal([
      '1130 Assets > Bank Accounts > Card Payments Clearing',
      '2401 Liabilities > Customer Deposits',
      '6125 Expenses > Payment Processing Fees',
    ]);

    // A business that had the three accounts gets no others.
    expect(newRoleAccounts(db, today.businessId)).to.deep.equal(todaysAccountsBefore);

    // Nothing else is added: two businesses lacked three accounts each.
    const added = db
      .prepare(`SELECT business_id, system_role, created_at FROM ledger_accounts WHERE id NOT IN (${rowsBefore.ledger_accounts!.map(() => '?').join(', ')}) ORDER BY business_id, system_role`)
      .all(...(rowsBefore.ledger_accounts as { id: string }[]).map((row) => row.id)) as { business_id: string; system_role: string; created_at: string }[];
    expect(added.map(({ business_id, system_role }) => `${business_id === harbor.businessId ? 'harbor' : business_id === pine.businessId ? 'pine' : 'other'} ${system_role}`).sort()).to.deep.equal([
      'harbor card_clearing',
      'harbor customer_deposits',
      'harbor payment_fees',
      'pine card_clearing',
      'pine customer_deposits',
      'pine payment_fees',
    ]);
    for (const account of added) expect(account.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('keeps every account, entry, line, card payment and job run exactly as it was', () => {
    const after = keptRows(db) as Record<string, Record<string, unknown>[]>;
    const ids = new Set((rowsBefore.ledger_accounts as { id: string }[]).map((row) => row.id));
    after.ledger_accounts = after.ledger_accounts!.filter((row) => ids.has(row.id as string));
    for (const table of Object.keys(KEPT_TABLES)) {
      // Columns the migration adds (a card payment's settlement) are empty on the rows it kept.
      const columns = Object.keys((rowsBefore[table] as Record<string, unknown>[])[0]!);
      const added = Object.keys(after[table]![0]!).filter((column) => !columns.includes(column));
      expect(added, table).to.deep.equal(
        table === 'card_payments'
          ? ['balance_transaction_id', 'settlement_currency', 'gross_usd_cents', 'fee_usd_cents', 'applied_cents', 'deposit_usd_cents', 'journal_entry_id']
          : [],
      );
      for (const row of after[table]!) for (const column of added) expect(row[column], `${table}.${column}`).to.equal(null);
      const kept = after[table]!.map((row) => Object.fromEntries(columns.map((column) => [column, row[column]])));
      expect(kept, table).to.deep.equal(rowsBefore[table]);
    }
    expect(entriesAsWritten(db), 'entries in the order written').to.deep.equal(entriesBefore);
  });

  it('keeps the guards on the journal, the chart and card payments answering as they did before, and as on fresh books', async () => {
    const answers = forgeries(path, harbor);
    expect(answers).to.deep.equal(answersBefore);
    expect(answers).to.deep.include({
      'UPDATE of a journal entry': 'journal_entries rows are immutable; post a reversing entry instead',
      'DELETE of a journal entry': 'journal_entries rows are immutable; post a reversing entry instead',
      'UPDATE of a journal line': 'journal_lines rows are immutable; post a reversing entry instead',
      'DELETE of a journal line': 'journal_lines rows are immutable; post a reversing entry instead',
      'INSERT of a third line into a closed entry': 'journal entry is closed: it already has all its lines',
      'DELETE of a card payment': 'card payments are kept: the processor took the money',
      'UPDATE of a card payment’s amount': 'a card payment keeps what the processor reported',
    });
    for (const what of ['INSERT OR REPLACE over a posted line', 'INSERT OR REPLACE onto a posted line’s entry and number under a fresh id', 'INSERT OR REPLACE onto a posted line’s id for an entry that does not exist']) {
      expect(answers[what], what).to.match(/^journal_lines rows .*cannot be replaced/);
    }
    expect(answers['INSERT OR REPLACE over a posted entry']).to.match(/^journal_entries rows .*cannot be replaced/);
    expect(answers['INSERT OR REPLACE over the bank account']).to.match(/^ledger_accounts rows cannot be replaced/);

    const fresh: TempDb = await freshDb();
    try {
      const business = buildBusiness(fresh.db, clock);
      const target = fillBusiness(fresh.db, clock, business.id, 'Harbor Cafe', 'cs_fresh_1', 100_000n, 40_000n, 60_000n);
      expect(forgeries(fresh.path, target)).to.deep.equal(answers);
      // The same schema as books made today, each table's triggers in the same order.
      const made = wholeBooks(fresh.db);
      const migrated = wholeBooks(db);
      expect(migrated.schema).to.deep.equal(made.schema);
      expect(migrated.triggerOrder).to.deep.equal(made.triggerOrder);
    } finally {
      fresh.close();
    }
  });

  it('refuses a posted card payment without its settlement (as the books before this migration would have stored one)', () => {
    const before = keptRows(db);
    const payment = db.prepare('SELECT id FROM invoice_payments WHERE invoice_id = (SELECT invoice_id FROM card_payments WHERE business_id = ? AND session_id = ?)').get(harbor.businessId, harbor.sessionId) as { id: string };
    expect(() =>
      db
        .prepare("UPDATE card_payments SET state = 'posted', posted_at = '2026-03-15T12:00:00.000Z', payment_id = ? WHERE business_id = ? AND session_id = ?")
        .run(payment.id, harbor.businessId, harbor.sessionId),
    ).to.throw(/CHECK constraint failed/);
    expect(() =>
      db
        .prepare(
          `INSERT INTO card_payments (session_id, business_id, invoice_id, amount_cents, currency, paid_on, received_via, received_at, state, payment_id, posted_at)
           SELECT 'cs_forged', business_id, invoice_id, 100, 'USD', '2026-03-10', 'job', '2026-03-15T12:00:00.000Z', 'posted', ?, '2026-03-15T12:00:00.000Z'
           FROM card_payments WHERE business_id = ? AND session_id = ?`,
        )
        .run(payment.id, harbor.businessId, harbor.sessionId),
    ).to.throw(/CHECK constraint failed/);
    expect(keptRows(db)).to.deep.equal(before);
  });

  it('accepts what card settlement writes: the new roles, a card_payment entry, a posted card payment with its settlement, the card-payments job', () => {
    const settle = (target: Target, grossCents: bigint, feeCents: bigint) =>
      inTransaction(db, () =>
        postCardPayment(db, clock, TEST_ACTOR, { businessId: target.businessId, sessionId: target.sessionId }, { balanceTransactionId: `txn_${target.sessionId}`, currency: 'USD', grossCents, feeCents }),
      );
    // Received before the migration, posted after it: Harbor's applies to its invoice.
    expect(settle(harbor, 60_000n, 1_770n)).to.deep.include({ posted: true, appliedCents: 60_000n, grossUsdCents: 60_000n, feeUsdCents: 1_770n, depositUsdCents: 0n });
    // Pine's invoice owed nothing: all of it is a customer deposit, posted as a card payment of its own.
    expect(settle(pine, 50_000n, 1_480n)).to.deep.include({ posted: true, paymentId: null, appliedCents: 0n, grossUsdCents: 50_000n, feeUsdCents: 1_480n, depositUsdCents: 50_000n });

    const posted = db
      .prepare(
        `SELECT session_id, state, payment_id IS NOT NULL AS has_payment, balance_transaction_id, settlement_currency, gross_usd_cents, fee_usd_cents, applied_cents, deposit_usd_cents,
           (SELECT source_type FROM journal_entries WHERE id = journal_entry_id) AS source_type
         FROM card_payments WHERE business_id IN (?, ?) ORDER BY session_id`,
      )
      .all(harbor.businessId, pine.businessId);
    expect(posted).to.deep.equal([
      {
        session_id: 'cs_harbor_1',
        state: 'posted',
        has_payment: 1n,
        balance_transaction_id: 'txn_cs_harbor_1',
        settlement_currency: 'USD',
        gross_usd_cents: 60_000n,
        fee_usd_cents: 1_770n,
        applied_cents: 60_000n,
        deposit_usd_cents: 0n,
        source_type: 'invoice_payment',
      },
      {
        session_id: 'cs_pine_1',
        state: 'posted',
        has_payment: 0n,
        balance_transaction_id: 'txn_cs_pine_1',
        settlement_currency: 'USD',
        gross_usd_cents: 50_000n,
        fee_usd_cents: 1_480n,
        applied_cents: 0n,
        deposit_usd_cents: 50_000n,
        source_type: 'card_payment',
      },
    ]);
    const balance = (businessId: string, role: (typeof NEW_ROLES)[number]) =>
      (
        db
          .prepare("SELECT coalesce(sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END), 0) AS net FROM journal_lines WHERE ledger_account_id = ?")
          .get(accountIdByRole(db, businessId, role)) as { net: bigint }
      ).net;
    expect([balance(pine.businessId, 'card_clearing'), balance(pine.businessId, 'customer_deposits'), balance(pine.businessId, 'payment_fees')]).to.deep.equal([48_520n, -50_000n, 1_480n]);

    expect(() => db.prepare('UPDATE card_payments SET fee_usd_cents = 0 WHERE business_id = ? AND session_id = ?').run(pine.businessId, pine.sessionId)).to.throw(
      'a posted card payment is in the books and cannot change',
    );

    recordJobStarted(db, clock, 'card-payments');
    recordJobFinished(db, clock, 'card-payments', { outcome: 'ok', durationMs: 300, result: { posted: 2 } });
    expect(db.prepare("SELECT name, last_outcome, runs FROM job_runs WHERE name = 'card-payments'").get()).to.deep.equal({ name: 'card-payments', last_outcome: 'ok', runs: 1n });
  });

  it('changes nothing when run again on its own result (a crash before the migration is recorded)', async () => {
    const before = wholeBooks(db);
    const written = entriesAsWritten(db);
    const answers = forgeries(path, harbor);
    db.close();
    const again = '20991231_0001_card_settlement_again';
    const { applied: rerun } = await migrateLatest(path, [{ name: again, module: cardSettlement }]);
    db = openDb(path, { synchronous: 'normal' });
    expect(rerun).to.deep.equal([again]);
    const after = wholeBooks(db);
    expect(after.rows).to.deep.equal(before.rows);
    expect(after.schema).to.deep.equal(before.schema);
    expect(after.triggerOrder).to.deep.equal(before.triggerOrder);
    expect(entriesAsWritten(db), 'entries in the order written').to.deep.equal(written);
    expect(forgeries(path, harbor)).to.deep.equal(answers);
  });
});
