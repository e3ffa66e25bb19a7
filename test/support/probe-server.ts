/**
 * A real server process over the books file named on the command line, serving the published
 * operations plus an awaiting probe whose awaited step never finishes: a request to it holds
 * its Idempotency-Key in_progress until the process dies. Prints {"url": ...} once listening.
 * Used by the crash test in test/api/write-door.test.ts.
 */
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { awaitingProbe, publishedWith } from './probes.js';

const dbPath = process.argv[2];
if (!dbPath) throw new Error('usage: probe-server.ts BOOKS_FILE');
const config = loadConfig({}, { db: dbPath, port: 0, host: '127.0.0.1', logLevel: 'silent', sqliteSynchronous: 'full' });
const never = () => new Promise<void>(() => {});
const server = await startServer(config, { operations: publishedWith([awaitingProbe(never)]) });
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
