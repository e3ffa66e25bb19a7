import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import { type Db, openDb } from './db/connection.js';
import { migrateLatest } from './db/migrate.js';
import { releaseAbandonedClaims } from './books/idempotency.js';
import { createLogger, type Logger } from './log.js';

export interface RunningServer {
  /** Base address, e.g. http://127.0.0.1:3000 (the real port when 0 was asked for). */
  url: string;
  port: number;
  host: string;
  db: Db;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
}

/** Migrates the database, then serves the API until close() (or a signal, see the CLI). */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  await migrateLatest(config.db);
  const db = openDb(config.db, { synchronous: config.sqliteSynchronous });
  const released = releaseAbandonedClaims(db);
  if (released > 0) log.warn({ released }, 'freed idempotency keys of writes that never committed');
  const app = buildApp({ db, clock, config, log });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${hostForUrl}:${port}`;
  log.info({ url }, 'daybook listening');
  let closed = false;
  return {
    url,
    port,
    host: config.host,
    db,
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      app.close();
      db.close();
      log.info('daybook stopped');
    },
  };
}
