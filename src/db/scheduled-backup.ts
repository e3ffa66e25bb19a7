import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { backupBooks } from './backup.js';
import type { Db } from './connection.js';
import { ensurePrivateFolder, exposureWarning } from './private-files.js';

/** The daily backup's file names and how many of them are kept. */

export interface ScheduledBackupContext {
  db: Db;
  clock: Clock;
  /** The folder backups go to; made 0700 when missing, left as it is (and warned of when open to others) when not. */
  dir: string;
  /** How many scheduled backups to keep (the newest); 1 to 1000. */
  keep: number;
  log: Logger;
}

export interface ScheduledBackupResult {
  /** The file written, a path inside `dir`. */
  file: string;
  bytes: number;
  /** Older scheduled backups removed to keep `keep`, oldest first. */
  removed: string[];
}

/** The scheduled backups' names, and nothing else: retention never touches any other file. */
export const SCHEDULED_BACKUP_NAME = /^daybook-[0-9]{8}-[0-9]{6}\.sqlite$/;

/**
 * The daily backup: `daybook-YYYYMMDD-HHMMSS.sqlite` (UTC, from the clock) in `dir`, then the
 * oldest files of exactly that name pattern beyond `keep` are removed. The file just written is
 * always kept, and nothing is removed when the backup fails.
 */
export async function runScheduledBackup(context: ScheduledBackupContext): Promise<ScheduledBackupResult> {
  const { dir, keep, log } = context;
  if (!Number.isInteger(keep) || keep < 1 || keep > 1000) throw new Error(`runScheduledBackup: keep must be 1 to 1000, not ${keep}`);
  ensurePrivateFolder(dir);
  // Said on every run, not only the first: the folder may have been opened since.
  const exposed = exposureWarning(dir, 'the backup folder');
  if (exposed !== null) log.warn({ dir }, exposed);
  const name = scheduledBackupName(context.clock.now());
  const file = join(dir, name);
  const backup = await backupBooks(context.db, file);
  const removed = removeOldBackups(dir, name, keep, log);
  log.info({ file, bytes: backup.bytes, pages: backup.pages, durationMs: backup.durationMs, removed }, 'backup written and checked');
  return { file, bytes: backup.bytes, removed };
}

/** daybook-20260315-021500.sqlite for 2026-03-15T02:15:00Z. */
export function scheduledBackupName(at: Date): string {
  const iso = at.toISOString();
  const name = `daybook-${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}.sqlite`;
  if (!SCHEDULED_BACKUP_NAME.test(name)) throw new Error(`scheduledBackupName: ${name} breaks the pattern`);
  return name;
}

/**
 * Removes the oldest scheduled backups in `dir` beyond `keep`, counting `written` (kept whatever
 * its name sorts as) among them. Returns the paths removed, oldest first.
 */
function removeOldBackups(dir: string, written: string, keep: number, log: Logger): string[] {
  // The names sort as their times do: fixed-width UTC digits.
  const older = readdirSync(dir)
    .filter((entry) => SCHEDULED_BACKUP_NAME.test(entry) && entry !== written)
    .sort();
  const removed: string[] = [];
  for (const entry of older.slice(0, Math.max(0, older.length - (keep - 1)))) {
    try {
      unlinkSync(join(dir, entry));
      removed.push(join(dir, entry));
    } catch (error) {
      // The new backup stands; an old one that cannot go is the operator's to look at.
      log.warn({ file: join(dir, entry), err: error }, 'old backup not removed');
    }
  }
  return removed;
}
