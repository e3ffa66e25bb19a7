import type Database from 'better-sqlite3';

/**
 * What SQLite's own checks say of a books file: integrity_check, then (when it finds nothing)
 * foreign_key_check. Run on the backup's copy before it is kept, in the calling thread or, inside
 * the running server, on a worker thread (integrity-worker.ts).
 */

/** Faults integrity_check lists at most; the first is shown, the count says how many. */
export const INTEGRITY_FAULTS_SHOWN = 20;

/** What integrity_check and foreign_key_check said, or where SQLite stopped reading. */
export interface IntegrityFindings {
  stopped: { check: string; message: string } | null;
  faults: string[];
  orphans: { table: string; rowid: number | null; parent: string }[];
}

export function integrityFindings(db: Database.Database): IntegrityFindings {
  const run = <T>(check: string, pragma: string): { rows: T } | { stopped: { check: string; message: string } } => {
    try {
      return { rows: db.pragma(pragma) as T };
    } catch (error) {
      return { stopped: { check, message: (error as Error).message } };
    }
  };
  const integrity = run<{ integrity_check: string }[]>('integrity_check', `integrity_check(${INTEGRITY_FAULTS_SHOWN})`);
  if ('stopped' in integrity) return { stopped: integrity.stopped, faults: [], orphans: [] };
  const faults = integrity.rows.map((row) => row.integrity_check);
  if (faults.length !== 1 || faults[0] !== 'ok') return { stopped: null, faults, orphans: [] };
  const keys = run<IntegrityFindings['orphans']>('foreign_key_check', 'foreign_key_check');
  if ('stopped' in keys) return { stopped: keys.stopped, faults, orphans: [] };
  return { stopped: null, faults, orphans: keys.rows };
}
