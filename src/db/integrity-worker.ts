import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { type IntegrityFindings, integrityFindings } from './integrity.js';

/**
 * integrityFindings on a worker thread (integrityInWorker in integrity.ts starts it through
 * src/threads.ts), for a backup made inside the running server: on large books integrity_check
 * takes seconds (about 10 s for a million journal lines), which must not stall the requests
 * answered meanwhile. It opens the copy read-only, answers once and ends.
 */

const port = parentPort;
if (port) port.postMessage(findingsOf((workerData as { path: string }).path));

function findingsOf(path: string): IntegrityFindings {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    // 'open': judgeIntegrity words this as "SQLite cannot open it", as an in-process open would be.
    return { stopped: { check: 'open', message: (error as Error).message }, faults: [], orphans: [] };
  }
  try {
    return integrityFindings(db);
  } finally {
    db.close();
  }
}
