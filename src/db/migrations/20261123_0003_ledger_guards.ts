import type { Knex } from 'knex';

/**
 * Closes three ways to change the past that the initial triggers left open.
 *
 * 1. INSERT OR REPLACE: on a connection without recursive_triggers (any connection not opened
 *    through applyPragmas) the row a REPLACE removes fires no DELETE trigger, so REPLACE could
 *    rewrite a posted entry, line or audit row, or swap a ledger account for one of another
 *    type. A BEFORE INSERT trigger runs before the conflict is resolved, whatever the pragmas,
 *    so each refuses a row whose key exists: the primary key and every UNIQUE constraint or
 *    index, partial ones included, since REPLACE deletes the row that holds any of them. A
 *    plain duplicate therefore fails with the trigger's message rather than SQLite's UNIQUE
 *    one. test/db/ledger-guards.test.ts collides on each unique index it finds, so a new one
 *    without its clause here fails that test.
 *    An auto-assigned INTEGER PRIMARY KEY is -1 in a BEFORE INSERT trigger; no stored row has
 *    that id, so ordinary inserts pass.
 * 2. Period locks: a closed period is never reopened, so a lock row is permanent and a new
 *    lock must lie after the business's latest one (lockPeriod checks first and answers
 *    conflict; the trigger is the backstop).
 * 3. A ledger account never changes its id, posted or not: UPDATE OR REPLACE onto another
 *    account's id deletes that account and leaves its postings pointing at this one, and the
 *    guards on the other unique keys never see it. One that lines post to also keeps its
 *    type, heading flag and business: a change would silently move every past posting to
 *    another side of every report. Renaming, recoding, moving and archiving stay allowed.
 */

const refuseExisting = (table: string, key: string, reason: string) =>
  `CREATE TRIGGER ${table}_no_replace BEFORE INSERT ON ${table}
   WHEN EXISTS (SELECT 1 FROM ${table} WHERE ${key})
   BEGIN SELECT RAISE(ABORT, '${reason}'); END`;

export const statements: string[] = [
  // journal_entries_reversal is partial (reverses_entry_id IS NOT NULL): a REPLACE colliding on
  // it would delete the posted reversal and orphan its lines.
  refuseExisting(
    'journal_entries',
    'id = NEW.id OR (NEW.reverses_entry_id IS NOT NULL AND reverses_entry_id = NEW.reverses_entry_id)',
    'journal_entries rows are immutable: an entry with this id, or a reversal of the same entry, exists and cannot be replaced',
  ),
  refuseExisting(
    'journal_lines',
    'id = NEW.id OR (entry_id = NEW.entry_id AND line_no = NEW.line_no)',
    'journal_lines rows are immutable: a line with this id, or this entry and line number, exists and cannot be replaced',
  ),
  refuseExisting('audit_log', 'id = NEW.id', 'audit_log rows are immutable: a row with this id exists and cannot be replaced'),
  // A REPLACE would delete and re-insert the account, type included, behind the journal; one
  // that collides on the business's code or system role would delete that account outright.
  refuseExisting(
    'ledger_accounts',
    'id = NEW.id OR (business_id = NEW.business_id AND (code = NEW.code OR system_role = NEW.system_role))',
    "ledger_accounts rows cannot be replaced: an account with this id, or this business''s code or system role, exists",
  ),
  `CREATE TRIGGER ledger_accounts_no_replace_by_update BEFORE UPDATE OF business_id, code, system_role ON ledger_accounts
   WHEN EXISTS (SELECT 1 FROM ledger_accounts WHERE id <> OLD.id AND business_id = NEW.business_id AND (code = NEW.code OR system_role = NEW.system_role))
   BEGIN SELECT RAISE(ABORT, 'ledger_accounts rows cannot be replaced: another account of this business has this code or system role'); END`,

  refuseExisting('period_locks', 'id = NEW.id', 'period_locks rows are permanent: a lock with this id exists and cannot be replaced'),
  `CREATE TRIGGER period_locks_forward_only BEFORE INSERT ON period_locks
   WHEN EXISTS (SELECT 1 FROM period_locks WHERE business_id = NEW.business_id AND locked_through >= NEW.locked_through)
   BEGIN SELECT RAISE(ABORT, 'period lock must be after the business''s latest lock: a closed period is never reopened'); END`,
  `CREATE TRIGGER period_locks_no_update BEFORE UPDATE ON period_locks
   BEGIN SELECT RAISE(ABORT, 'period_locks rows are permanent: a closed period is never reopened'); END`,
  `CREATE TRIGGER period_locks_no_delete BEFORE DELETE ON period_locks
   BEGIN SELECT RAISE(ABORT, 'period_locks rows are permanent: a closed period is never reopened'); END`,

  // Every account, posted or not: an UPDATE OR REPLACE onto a posted account's id is run on an
  // account with no postings, which ledger_accounts_posted_fixed rightly lets change.
  // Children's parent_id would be stranded by a rename too.
  `CREATE TRIGGER ledger_accounts_id_fixed BEFORE UPDATE OF id ON ledger_accounts
   WHEN NEW.id IS NOT OLD.id
   BEGIN SELECT RAISE(ABORT, 'ledger_accounts ids never change: journal lines and child accounts refer to an account by its id'); END`,
  `CREATE TRIGGER ledger_accounts_posted_fixed BEFORE UPDATE OF business_id, type, is_heading ON ledger_accounts
   WHEN (NEW.business_id IS NOT OLD.business_id OR NEW.type IS NOT OLD.type OR NEW.is_heading IS NOT OLD.is_heading)
     AND EXISTS (SELECT 1 FROM journal_lines WHERE ledger_account_id = OLD.id)
   BEGIN SELECT RAISE(ABORT, 'ledger account has postings: its business, type and heading flag cannot change'); END`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
