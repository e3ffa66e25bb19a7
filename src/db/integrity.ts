import type Database from 'better-sqlite3';
import { startWorker } from '../threads.js';
import { BackupRefused } from './backup-refusal.js';

/**
 * What SQLite's own checks say of a books file: integrity_check, then (when it finds nothing)
 * foreign_key_check, and the verdict on what they said. One check, run in the calling thread
 * (integrityFindings, on a connection the caller has open) or, inside the running server, on a
 * worker thread (integrityInWorker, through integrity-worker.ts, which calls integrityFindings).
 */

/** Faults integrity_check lists at most; the first is shown, the count says how many. */
const INTEGRITY_FAULTS_SHOWN = 20;

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

/**
 * integrityFindings of the file at `path` on a worker thread (integrity-worker.ts): on large books
 * integrity_check takes seconds, and the server answers requests meanwhile.
 */
export function integrityInWorker(path: string): Promise<IntegrityFindings> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const worker = startWorker(import.meta.url, 'integrity-worker', { workerData: { path } });
    worker.once('message', (findings: IntegrityFindings) => {
      answered = true;
      resolve(findings);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the integrity check of ${path} ended (exit ${code}) without an answer`));
    });
  });
}

/** Throws BackupRefused('damaged') for anything but a clean bill of health. */
export function judgeIntegrity(findings: IntegrityFindings, shownAs: string): void {
  if (findings.stopped !== null) {
    const { check, message } = findings.stopped;
    const what = check === 'open' ? 'SQLite cannot open it' : `${check} stopped at a fault`;
    throw new BackupRefused('damaged', `${shownAs} is damaged: ${what} (${message})`);
  }
  const faults = findings.faults.map((fault) => fault.replace(/\s*\n\s*/g, ' '));
  if (faults.length !== 1 || faults[0] !== 'ok') {
    const more = faults.length > 1 ? ` and ${faults.length - 1} more${faults.length === INTEGRITY_FAULTS_SHOWN ? ' at least' : ''}` : '';
    throw new BackupRefused('damaged', `${shownAs} is damaged: integrity_check found ${faults[0] ?? 'nothing to say'}${more}`);
  }
  const first = findings.orphans[0];
  if (first) {
    const count = findings.orphans.length;
    throw new BackupRefused(
      'damaged',
      `${shownAs} is damaged: ${count} ${count === 1 ? 'row points' : 'rows point'} at rows that do not exist (foreign_key_check; the first in ${first.table}, row ${first.rowid}, to ${first.parent})`,
    );
  }
}
