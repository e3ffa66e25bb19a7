import { runScheduledBackup, type ScheduledBackupContext, type ScheduledBackupResult } from '../db/scheduled-backup.js';

export type BackupJobContext = ScheduledBackupContext;

/**
 * The daily backup: an online copy of the books into the backup folder, checked with
 * integrity_check before it takes its name, then the oldest scheduled backups beyond the
 * retention count removed (src/db/scheduled-backup.ts).
 */
export function runBackupJob(context: BackupJobContext): Promise<ScheduledBackupResult> {
  return runScheduledBackup(context);
}
