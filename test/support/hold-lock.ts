/**
 * Takes the server lock of the books file named on the command line, says "held" (or
 * "refused" and exits 3), and keeps it until killed: another process holding the lock, for
 * test/unit/server-lock.test.ts.
 */
import { acquireServerLock, ServerLockError } from '../../src/db/server-lock.js';

const path = process.argv[2];
if (!path) throw new Error('usage: hold-lock.ts BOOKS_FILE');
try {
  acquireServerLock(path);
  process.stdout.write('held\n');
  setInterval(() => {}, 60_000);
} catch (error) {
  if (!(error instanceof ServerLockError)) throw error;
  process.stdout.write('refused\n');
  process.exit(3);
}
