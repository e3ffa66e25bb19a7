import type { Command } from 'commander';
import { existsSync, rmSync, statSync } from 'node:fs';
import { type DemoBooks, seedDemo } from '../../db/seeds/demo.js';
import { type Config, loadConfig } from '../config.js';
import { databaseFiles } from '../db/connection.js';
import { redactUrl } from '../redact.js';
import { acquireServerLock } from '../db/server-lock.js';
import { portNumber } from './args.js';
import { action, type CliIo, type CommandContext, withBooksAt } from './context.js';
import { UsageError } from './errors.js';
import { serveUntilStopped } from './serve.js';

/** Demo books live in their own file, recreated on every run; never the real books. */
export const DEMO_DB_PATH = './data/demo.sqlite';
export const DEMO_HOST = '127.0.0.1';
export const DEMO_PORT = 3000;

function removeDatabaseFiles(path: string): void {
  for (const file of databaseFiles(path)) rmSync(file, { force: true });
}

/**
 * Without --db: ./data/demo.sqlite, deleted first so the books are fresh. With --db: the file
 * must not hold anything yet, so `demo` can never write demo books into real ones. The caller
 * holds the file's server lock, so no running demo loses its books.
 */
function freshDemoPath(path: string, dbOption: string | undefined): string {
  if (dbOption === undefined) {
    removeDatabaseFiles(path);
    return path;
  }
  if (existsSync(path) && statSync(path).size > 0) {
    throw new UsageError(`demo: ${path} already exists; give a new file, or omit --db to use ${DEMO_DB_PATH} (recreated each run)`);
  }
  return path;
}

function printDemo(context: CommandContext, demo: DemoBooks, url: string, config: Config): void {
  const curl = `curl -s -H "Authorization: Bearer ${demo.key}" ${url}/api/v1/businesses`;
  const mail = config.smtpUrl ? `sent through ${redactUrl(config.smtpUrl)}` : 'written to the log (set DAYBOOK_SMTP_URL to send it)';
  context.out.result({ url, key: demo.key, keyId: demo.keyId, accountId: demo.tenantId, businesses: demo.businesses, curl, mail }, [
    `Demo books for ${demo.tenantName} (account ${demo.tenantId}):`,
    ...demo.businesses.map((business) => `  ${business.name}  ${business.id}`),
    `API key (read-write, all businesses; id ${demo.keyId}):`,
    demo.key,
    `Daybook is listening on ${url}`,
    `Email (invoices sent, reminders): ${mail}`,
    'Try:',
    curl,
  ]);
}

async function demo(options: { port?: number }, context: CommandContext): Promise<void> {
  const dbOption = context.globals.db;
  // Held from before the books are recreated until the server stops: no other demo or server
  // can serve, delete or reseed them meanwhile.
  const releaseLock = acquireServerLock(dbOption ?? DEMO_DB_PATH);
  try {
    const path = freshDemoPath(dbOption ?? DEMO_DB_PATH, dbOption);
    const port = options.port ?? DEMO_PORT;
    // Pay links point at the demo itself unless DAYBOOK_SITE_URL says otherwise (port 0 is not known yet).
    const siteUrl = context.io.env.DAYBOOK_SITE_URL === undefined && port !== 0 ? { siteUrl: `http://localhost:${port}` } : {};
    // The demo books carry their own rates and are made fresh each run: no rate fetch (the demo
    // often runs offline) and no backups, unless the environment asks for them.
    const quietJobs = {
      ...(context.io.env.DAYBOOK_JOB_RATES === undefined ? { jobRates: null } : {}),
      ...(context.io.env.DAYBOOK_JOB_BACKUP === undefined ? { jobBackup: null } : {}),
    };
    const config = loadConfig(context.io.env, { db: path, host: DEMO_HOST, port, ...siteUrl, ...quietJobs });
    const books = await withBooksAt(path, (db) => seedDemo(db, context.io.clock, { siteUrl: config.siteUrl }));
    await serveUntilStopped(context, config, (server) => printDemo(context, books, server.url, config), releaseLock);
  } finally {
    releaseLock();
  }
}

export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description(`fresh demo books (${DEMO_DB_PATH} unless --db), a printed key, then serve on ${DEMO_HOST}`)
    .option('--port <n>', `port, 0 to 65535; 0 picks a free one (default: ${DEMO_PORT})`, portNumber)
    .action(action(io, demo));
}
