import { type Config, loadConfig, type LogLevel } from '../../config.js';
import { createLogger, createServerLogger } from '../../log.js';
import type { RunningServer } from '../../server.js';
import { type CliIo, type CommandContext, migrateBooks } from '../context.js';
import { UsageError } from '../errors.js';
import { readFileSync } from 'node:fs';
import type { Fixture } from '../../testing/fixture.js';

const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** A second signal during shutdown exits at once, with the shell's 128 + signal number. */
const EXIT_ON_SECOND_SIGNAL: Record<(typeof SHUTDOWN_SIGNALS)[number], number> = { SIGINT: 130, SIGTERM: 143 };

/** Migrates (with a clean error for a bad file), then starts the API. */
async function startServer(config: Config, context: CommandContext, heldLock?: () => void): Promise<RunningServer> {
  const { io } = context;
  await migrateBooks(config.db, context.actor, io.clock);
  // Loaded on demand, so the admin commands do not load Koa.
  const server = await import('../../server.js');
  // Logs go to stderr: stdout carries only the command's result (one object with --json).
  const log = io.stderrIsTheProcess ? createServerLogger(config.logLevel) : createLogger(config.logLevel, { write: (line: string) => io.stderr(line) });
  return server.startServer(config, { clock: io.clock, log, migrated: true, ...(heldLock ? { heldLock } : {}) });
}

interface StopWatch {
  /** Resolves with what asked to stop: a signal name, or "stop requested" (io.stop). */
  stopped: Promise<string>;
  dispose(): void;
}

/** The first SIGINT/SIGTERM (or io.stop) asks for a graceful stop; a second signal exits now. */
function watchForStop(io: CliIo): StopWatch {
  let stopping = false;
  let resolveStop: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => (resolveStop = resolve));
  const onSignal = (signal: (typeof SHUTDOWN_SIGNALS)[number]) => {
    if (stopping) {
      io.stderr(`daybook: ${signal} again: exiting without waiting\n`);
      process.exit(EXIT_ON_SECOND_SIGNAL[signal]);
    }
    stopping = true;
    resolveStop(signal);
  };
  const onAbort = () => {
    stopping = true;
    resolveStop('stop requested');
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);
  io.stop?.addEventListener('abort', onAbort, { once: true });
  if (io.stop?.aborted) onAbort();
  return {
    stopped,
    dispose() {
      for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal);
      io.stop?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Starts the API, lets `announce` print the result, serves until asked to stop, closes.
 * `heldLock` is the books file's server lock when the caller took it already.
 */
export async function serveUntilStopped(
  context: CommandContext,
  config: Config,
  announce: (server: RunningServer) => void,
  heldLock?: () => void,
): Promise<void> {
  const server = await startServer(config, context, heldLock);
  const watch = watchForStop(context.io);
  const stopReloading = reloadTlsOnHangUp(server, context);
  try {
    announce(server);
    context.out.note('serving; press Ctrl+C to stop');
    const reason = await watch.stopped;
    context.out.note(`${reason}: shutting down`);
  } finally {
    await server.close();
    watch.dispose();
    stopReloading();
  }
}

/**
 * With native TLS, SIGHUP reads the certificate and key again (renewed certificates are served
 * without a restart); a file that is missing or does not match keeps the one served before.
 * Without TLS, SIGHUP keeps its usual meaning.
 */
function reloadTlsOnHangUp(server: RunningServer, context: CommandContext): () => void {
  if (!server.url.startsWith('https:')) return () => {};
  const onHangUp = () => {
    try {
      server.reloadTls();
      context.out.note('SIGHUP: TLS certificate and key read again');
    } catch (error) {
      context.io.stderr(`daybook: SIGHUP: ${(error as Error).message}; still serving the certificate read before\n`);
    }
  };
  process.on('SIGHUP', onHangUp);
  return () => process.off('SIGHUP', onHangUp);
}

/** Only the settings given on the command line override env and config/default.json. */
export function definedOnly(overrides: Partial<Config>): Partial<Config> {
  return Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)) as Partial<Config>;
}

interface ServeOptions {
  port?: number;
  host?: string;
  ephemeral?: boolean;
  clock?: string;
  control?: boolean;
  fixture?: string;
}

export async function serve(options: ServeOptions, context: CommandContext): Promise<void> {
  if (options.ephemeral) return serveEphemeral(options, context);
  if (options.clock !== undefined) throw new UsageError('--clock is for --ephemeral only: a real server follows the machine\'s clock');
  if (options.control) throw new UsageError('--control is for --ephemeral only: a real server has no control surface');
  if (options.fixture !== undefined) throw new UsageError('--fixture is for --ephemeral only: a real server serves its own books');
  const config = loadConfig(context.io.env, definedOnly({ db: context.globals.db, port: options.port, host: options.host }));
  await serveUntilStopped(context, config, (server) =>
    context.out.result({ url: server.url, port: server.port, host: server.host, db: config.db }, [
      `Daybook is listening on ${server.url} (books: ${config.db})`,
    ]),
  );
}

/**
 * `serve --ephemeral`: a throwaway server for another program's tests (daybook/testing): fresh
 * books, an account with one business and one key, on a free loopback port. It prints one
 * JSON line, {url, accountId, businesses, keys}, once it answers, and serves until stdin
 * closes or SIGINT/SIGTERM; then its books are removed. They go however else the process ends
 * too (a second signal's process.exit, an uncaught error): startDaybook sees to that.
 */
async function serveEphemeral(options: ServeOptions, context: CommandContext): Promise<void> {
  if (options.port !== undefined || options.host !== undefined) throw new UsageError('--ephemeral listens on a free loopback port: leave out --port and --host');
  if (context.globals.db !== undefined) throw new UsageError('--ephemeral makes books of its own: leave out --db');
  const [testing, { FixtureError }] = await Promise.all([import('../../testing/index.js'), import('../../testing/fixture.js')]);
  const at = options.clock === undefined ? undefined : (await clockOption(options.clock)).toISOString();
  const fixture = options.fixture === undefined ? undefined : readFixture(options.fixture);
  const daybook = await testing
    .startDaybook({ ...(at ? { at } : {}), ...(fixture ? { fixture } : {}), logLevel: ephemeralLogLevel(context.io.env), control: options.control === true })
    .catch((error: unknown) => {
      throw error instanceof FixtureError ? new UsageError(`--fixture ${options.fixture}: ${error.message.replace(/^fixture: /, '')}`) : error;
    });
  const watch = watchForStop(context.io);
  const stdin = context.io.watchStdin();
  try {
    context.io.stdout(`${JSON.stringify({ url: daybook.url, accountId: daybook.accountId, businesses: daybook.businesses, keys: daybook.keys })}\n`);
    context.out.note('serving throwaway books until stdin closes or Ctrl+C');
    const reason = await Promise.race([watch.stopped, stdin.closed.then(() => 'stdin closed')]);
    context.out.note(`${reason}: shutting down`);
  } finally {
    await daybook.close();
    watch.dispose();
    stdin.dispose();
  }
}

/**
 * The one setting a throwaway server takes from the environment: the rest (a books file, TLS,
 * a proxy list) belong to a real server, and a developer's shell may well export them.
 */
function ephemeralLogLevel(env: NodeJS.ProcessEnv): LogLevel {
  return loadConfig({ DAYBOOK_LOG_LEVEL: env.DAYBOOK_LOG_LEVEL }).logLevel;
}

/** `demo`, or the JSON of the fixture file (checked by startDaybook). */
function readFixture(file: string): 'demo' | Fixture {
  if (file === 'demo') return 'demo';
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--fixture: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as Fixture;
  } catch (error) {
    throw new UsageError(`--fixture: ${file} is not JSON: ${(error as Error).message}`);
  }
}

/**
 * `--clock` of `serve --ephemeral` and `demo`: a day (its midnight, UTC) or an ISO 8601 instant,
 * within the years 0000 to 9999, read as the control surface reads one; anything else is a usage
 * error naming the flag.
 */
export async function clockOption(raw: string): Promise<Date> {
  // Loaded on demand, like the rest of daybook/testing: the admin commands do not need it.
  const { clockInstant } = await import('../../testing/index.js');
  try {
    return clockInstant(raw);
  } catch (error) {
    throw new UsageError(`--clock: ${(error as Error).message.replace(/^clock: /, '')}`);
  }
}

