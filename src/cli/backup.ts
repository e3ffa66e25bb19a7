import type { Command } from 'commander';
import { action, handlersIn, type CliIo } from './context.js';

const BACKUP_HELP_AFTER = `
An online backup (SQLite's backup API): a running server keeps serving while it is made. The
copy is written beside FILE under a temporary name, checked with integrity_check and
foreign_key_check, flushed to disk, and only then renamed to FILE; a copy that fails the check
is removed, FILE stays as it was, and the command exits 3. The backup is one self-contained
SQLite file.

  daybook backup --to /srv/backups/daybook-before-upgrade.sqlite
--json: {"file", "bytes", "integrity"}`;

const RESTORE_HELP_AFTER = `
Replaces the books (--db, else DAYBOOK_DB) with a backup. Stop the server first: while one
serves these books it holds the lock on <books>.lock, and restore refuses. The file is copied
beside the books and the copy checked: a SQLite database, integrity_check and foreign_key_check
clean, Daybook's books, not from a newer Daybook. Existing books are replaced only with --yes.
The restored books are then brought to this version's schema, and the restore is recorded in
the installation's audit trail (daybook audit list --installation).

  daybook restore --from /srv/backups/daybook-20260315-021500.sqlite --yes
--json: {"file", "books", "bytes", "replaced", "accounts", "businesses", "journalEntries",
         "lastEntryDate", "schema" (the backup's), "migrated" (migrations applied since)}`;

const run = handlersIn(() => import('./actions/backup.js'));

export function registerBackupCommands(program: Command, io: CliIo): void {
  program
    .command('backup')
    .description('write a checked copy of the books to FILE, while a server keeps serving them')
    .requiredOption('--to <file>', 'the backup file to write')
    .option('--force', 'replace FILE if it exists')
    .addHelpText('after', BACKUP_HELP_AFTER)
    .action(action(io, run('backup')));
  program
    .command('restore')
    .description('replace the books with a backup, after checking it (the server must be stopped)')
    .requiredOption('--from <file>', 'the backup file to restore')
    .option('--yes', 'replace books that exist')
    .addHelpText('after', RESTORE_HELP_AFTER)
    .action(action(io, run('restore')));
}
