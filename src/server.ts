import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppOptions, buildApp, type DaybookApp } from './app.js';
import { runJobOnce, startJobPool } from './jobs/pool.js';
import { booksRecorder, jobByName, scheduledJobs } from './jobs/registry.js';
import { cliActor } from './store/audit.js';
import { recordMigration } from './door/commands/installation.js';
import { writeNow } from './door/door.js';
import { INSTALLATION_REACH } from './door/reach.js';
import { JOB_NAMES, type JobName } from './store/job-runs.js';
import { type Clock, systemClock } from './clock.js';
import { type Config, ConfigError } from './config.js';
import { CONNECTION_LIMITS, type ConnectionLimits, createHttpServer } from './http/connections.js';
import { type Db, guardBookWrites, openDb } from './db/connection.js';
import { migrateLatest } from './db/migrate.js';
import { ensureWritableBooksFolder } from './db/books-folder.js';
import { acquireServerLock } from './db/server-lock.js';
import { exposureWarning } from './db/private-files.js';
import { releaseAbandonedClaims } from './store/idempotency.js';
import { ensureServerSecrets } from './store/secrets.js';
import { createLogger, type Logger } from './log.js';
import { readTlsFiles, type TlsFiles, useCertificate } from './http/tls.js';
import { refusedLine } from './http/access-log.js';

export interface RunningServer {
  /** Base address, e.g. http://127.0.0.1:3000 (the real port when 0 was asked for). */
  url: string;
  port: number;
  host: string;
  db: Db;
  /**
   * Reads DAYBOOK_TLS_CERT and DAYBOOK_TLS_KEY again and serves new connections with them
   * (SIGHUP under `daybook serve`). A problem (ConfigError) leaves the certificate served as
   * it was. False when the server serves plain HTTP.
   */
  reloadTls(): boolean;
  /** Runs a job now, whether or not it has a schedule (tests; an operator uses `daybook jobs run`). */
  runJob(name: string): Promise<void>;
  /** Stops taking connections, lets requests in flight and running jobs finish (each within a bound), closes the books. */
  close(): Promise<void>;
}

/** How long close() lets requests in flight finish before it closes their connections. */
export const REQUEST_DRAIN_MS = 10_000;

/** What the app itself takes from the caller (see AppOptions for each). */
type AppChoices = Pick<AppOptions, 'operations' | 'onReplyViolation' | 'onReply' | 'mailer' | 'faults' | 'control'>;

export interface StartOptions extends AppChoices {
  clock?: Clock;
  log?: Logger;
  /** The books file's server lock, when the caller took it already (demo holds it while it seeds); released on close. */
  heldLock?: () => void;
  /** Tests shorten the connection limits to see them act. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** The caller migrated the books just before (`daybook serve`), so the server does not check them again. */
  migrated?: boolean;
}

/** Migrates the database, then serves the API until close() (or a signal, see the CLI). */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  ensureWritableBooksFolder(config.db);
  const releaseLock = options.heldLock ?? acquireServerLock(config.db);
  try {
    return await serve(config, options, clock, log, releaseLock);
  } catch (error) {
    releaseLock();
    throw error;
  }
}

async function serve(config: Config, options: StartOptions, clock: Clock, log: Logger, releaseLock: () => void): Promise<RunningServer> {
  const { applied } = options.migrated ? { applied: [] } : await migrateLatest(config.db);
  warnOfExposedFiles(config, log);
  const db = openDb(config.db, { synchronous: config.sqliteSynchronous });
  let app: DaybookApp | undefined;
  let server: Server;
  try {
    guardBookWrites(db);
    // `daybook serve` migrated (and recorded it) already; a server embedded by other code records its own.
    if (applied.length > 0) writeNow({ db, clock }, { actor: cliActor('server start-up'), reach: INSTALLATION_REACH }, recordMigration, { applied });
    const released = releaseAbandonedClaims(db);
    if (released > 0) log.warn({ released }, 'freed idempotency keys of writes that never committed');
    ensureServerSecrets(db, clock);
    const { clock: _clock, log: _log, heldLock: _heldLock, connectionLimits: _limits, migrated: _migrated, ...choices } = options;
    const tls = readTlsFiles(config);
    app = buildApp({ ...choices, db, clock, config, log });
    server = await listen(app, config, { ...CONNECTION_LIMITS, ...options.connectionLimits }, tls);
  } catch (error) {
    app?.close();
    db.close();
    throw error;
  }
  const recorder = booksRecorder(db, clock, config);
  try {
    recorder.plannedOff();
  } catch (error) {
    log.error({ err: error }, 'jobs that are off not recorded');
  }
  const scheduled = scheduledJobs(app.services);
  const pool = startJobPool(scheduled, log, { recorder });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${config.tlsCert === null ? 'http' : 'https'}://${hostForUrl}:${port}`;
  log.info({ url }, 'daybook listening');
  let closed = false;
  const started = app;
  return {
    url,
    port,
    host: config.host,
    db,
    reloadTls() {
      const tls = readTlsFiles(config);
      if (!tls) return false;
      useCertificate(server, tls);
      log.info({ cert: config.tlsCert }, 'TLS certificate reloaded');
      return true;
    },
    async runJob(name) {
      if (scheduled.some((job) => job.name === name)) return pool.runNow(name);
      // A job that is off runs once, recorded like `daybook jobs run`.
      await runJobOnce(jobByName(started.services, jobName(name)), log, recorder);
    },
    async close() {
      if (closed) return;
      closed = true;
      await drainRequests(server, log);
      await pool.stop();
      started.close();
      db.close();
      releaseLock();
      log.info('daybook stopped');
    },
  };
}

/**
 * Files Daybook made are the owner's alone, but books and a backup folder from before (or from
 * a copy) keep the permissions they have: Daybook never changes those, so it says so at start.
 * The backup folder only counts while the server writes backups into it.
 */
function warnOfExposedFiles(config: Config, log: Logger): void {
  const places: [path: string, what: string][] = [[config.db, 'the books file']];
  if (config.jobBackup !== null) places.push([config.backupDir, 'the backup folder']);
  for (const [path, what] of places) {
    const warning = exposureWarning(path, what);
    if (warning !== null) log.warn({ path }, warning);
  }
}

function jobName(name: string): JobName {
  if (!(JOB_NAMES as readonly string[]).includes(name)) throw new Error(`no job named ${name}; the jobs are ${JOB_NAMES.join(', ')}`);
  return name as JobName;
}

/**
 * Stops accepting connections and waits for the requests in flight to be answered; a
 * connection still busy after REQUEST_DRAIN_MS (a client that never reads its answer) is cut.
 */
async function drainRequests(server: Server, log: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      log.warn({ waitedMs: REQUEST_DRAIN_MS }, 'requests still open at stop; closing their connections');
      server.closeAllConnections();
    }, REQUEST_DRAIN_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function listen(app: DaybookApp, config: Config, limits: ConnectionLimits, tls: TlsFiles | null): Promise<Server> {
  const server = createHttpServer(app.callback(), limits, tls, (refused) => app.services.log.info(refusedLine(refused), 'request'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenProblem(error, config)));
    server.listen(config.port, config.host, () => resolve());
  });
  return server;
}

/** A port or address the server cannot listen on is a setting to change: one line naming it (exit 2). */
function listenProblem(error: NodeJS.ErrnoException, config: Config): Error {
  const where = `${config.port} on ${config.host}`;
  if (error.code === 'EADDRINUSE') return new ConfigError(`PORT: ${where} is already in use by another program: stop it, or choose another port (--port or PORT)`);
  if (error.code === 'EACCES') return new ConfigError(`PORT: ${where} needs privileges this process does not have: choose a port above 1023 (--port or PORT)`);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') return new ConfigError(`HOST: ${config.host} is not an address of this machine (--host or HOST)`);
  return error;
}
