import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import cron from 'node-cron';
import { readSmtpUrl } from './smtp-url.js';
import { parseTrustList } from './trust-list.js';
import { projectRoot } from './paths.js';
import { redactUrl } from './redact.js';

export type SqliteSynchronous = 'full' | 'normal';
export type FxProvider = 'frankfurter' | 'ecb';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  db: string;
  port: number;
  host: string;
  siteUrl: string;
  smtpUrl: string | null;
  mailFrom: string;
  fxProvider: FxProvider;
  fxProviderUrl: string;
  /** How many days older than a send's or payment's date a stored exchange rate may be and still be used. */
  rateMaxAgeDays: number;
  sqliteSynchronous: SqliteSynchronous;
  /** Where the card processor's API is: https://api.stripe.com, or a fake or an outbound proxy. */
  stripeApiUrl: string;
  /** The origin the processor's hosted checkout page is served from (the pay page's form may go there). */
  stripeCheckoutOrigin: string;
  backupDir: string;
  /** How many scheduled backups to keep in backupDir; older ones are removed. */
  backupKeep: number;
  reviewConfidence: number;
  logLevel: LogLevel;
  /** Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses, CIDR ranges, `loopback`); empty: none. */
  trustProxy: string[];
  /** PEM certificate (chain) and key files to serve HTTPS from; both null: plain HTTP. */
  tlsCert: string | null;
  tlsKey: string | null;
  /** Each job's node-cron schedule (in UTC), or null when the job is off. */
  jobRates: string | null;
  jobOverdue: string | null;
  jobOutbox: string | null;
  jobBackup: string | null;
  jobHousekeeping: string | null;
  jobCardPayments: string | null;
}

/** A bad setting stops start-up with one line naming it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Each setting: its environment variable and how to read and check a raw value. `credentials`:
 * the value is a URL that can carry a password or a key, so a message shows it only through
 * redactUrl.
 */
const SETTINGS: { [K in keyof Config]: { env: string; parse: (raw: unknown) => Config[K]; credentials?: true } } = {
  db: { env: 'DAYBOOK_DB', parse: nonEmptyString },
  port: { env: 'PORT', parse: port },
  host: { env: 'HOST', parse: nonEmptyString },
  siteUrl: {
    env: 'DAYBOOK_SITE_URL',
    parse: (raw) => withoutUserInfo(httpUrl(raw), 'every pay link (emails, PDFs, the log) would carry it').replace(/\/+$/, ''),
    credentials: true,
  },
  smtpUrl: { env: 'DAYBOOK_SMTP_URL', parse: (raw) => (raw === null || raw === '' ? null : smtpUrl(raw)), credentials: true },
  mailFrom: { env: 'DAYBOOK_MAIL_FROM', parse: nonEmptyString },
  fxProvider: { env: 'DAYBOOK_FX_PROVIDER', parse: (raw) => oneOf(raw, ['frankfurter', 'ecb'] as const) },
  fxProviderUrl: {
    env: 'DAYBOOK_FX_PROVIDER_URL',
    parse: (raw) => withoutUserInfo(httpUrl(raw), 'a rate request cannot send it, and its error would show it'),
    credentials: true,
  },
  rateMaxAgeDays: { env: 'DAYBOOK_RATE_MAX_AGE_DAYS', parse: (raw) => wholeNumber(raw, 0, 31) },
  sqliteSynchronous: { env: 'DAYBOOK_SQLITE_SYNCHRONOUS', parse: (raw) => oneOf(raw, ['full', 'normal'] as const) },
  stripeApiUrl: { env: 'DAYBOOK_STRIPE_API_URL', parse: (raw) => originOnly(raw, 'https://api.stripe.com'), credentials: true },
  stripeCheckoutOrigin: { env: 'DAYBOOK_STRIPE_CHECKOUT_ORIGIN', parse: (raw) => originOnly(raw, 'https://checkout.stripe.com'), credentials: true },
  backupDir: { env: 'DAYBOOK_BACKUP_DIR', parse: nonEmptyString },
  backupKeep: { env: 'DAYBOOK_BACKUP_KEEP', parse: (raw) => wholeNumber(raw, 1, 1000) },
  reviewConfidence: { env: 'DAYBOOK_REVIEW_CONFIDENCE', parse: fraction },
  logLevel: {
    env: 'DAYBOOK_LOG_LEVEL',
    parse: (raw) => oneOf(raw, ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
  },
  trustProxy: { env: 'DAYBOOK_TRUST_PROXY', parse: trustList },
  tlsCert: { env: 'DAYBOOK_TLS_CERT', parse: optionalPath },
  tlsKey: { env: 'DAYBOOK_TLS_KEY', parse: optionalPath },
  jobRates: { env: 'DAYBOOK_JOB_RATES', parse: schedule },
  jobOverdue: { env: 'DAYBOOK_JOB_OVERDUE', parse: schedule },
  jobOutbox: { env: 'DAYBOOK_JOB_OUTBOX', parse: schedule },
  jobBackup: { env: 'DAYBOOK_JOB_BACKUP', parse: schedule },
  jobHousekeeping: { env: 'DAYBOOK_JOB_HOUSEKEEPING', parse: schedule },
  jobCardPayments: { env: 'DAYBOOK_JOB_CARD_PAYMENTS', parse: schedule },
};

export const CONFIG_ENV_NAMES = Object.values(SETTINGS).map((s) => s.env);

export function loadDefaults(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(projectRoot, 'config', 'default.json'), 'utf8')) as Record<string, unknown>;
}

/** Defaults from config/default.json, then DAYBOOK_* (and PORT/HOST) from the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const defaults = loadDefaults();
  const config = {} as Record<keyof Config, unknown>;
  for (const [name, setting] of Object.entries(SETTINGS) as [keyof Config, (typeof SETTINGS)[keyof Config]][]) {
    const fromEnv = env[setting.env];
    // Name where the bad value came from: a caller's override (e.g. --port), the env, or the file.
    const source = name in overrides ? `override "${name}"` : fromEnv !== undefined ? setting.env : `config/default.json "${name}"`;
    const raw = name in overrides ? overrides[name] : fromEnv !== undefined ? fromEnv : defaults[name];
    try {
      config[name] = setting.parse(raw);
    } catch (error) {
      const shown = setting.credentials && typeof raw === 'string' ? redactUrl(raw) : raw;
      throw new ConfigError(`${source}: ${(error as Error).message} (got ${JSON.stringify(shown)})`);
    }
  }
  checkTlsSettings(config as Config);
  return config as Config;
}

/** Native TLS needs both files, and the pay links it hands out must then be https too. */
function checkTlsSettings(config: Config): void {
  if (config.tlsCert !== null && config.tlsKey === null) throw new ConfigError('DAYBOOK_TLS_KEY: must be set with DAYBOOK_TLS_CERT (the certificate\'s private key, a PEM file)');
  if (config.tlsKey !== null && config.tlsCert === null) throw new ConfigError('DAYBOOK_TLS_CERT: must be set with DAYBOOK_TLS_KEY (the certificate, a PEM file)');
  if (config.tlsCert !== null && !config.siteUrl.startsWith('https:')) {
    throw new ConfigError(`DAYBOOK_SITE_URL: must be an https address when Daybook serves TLS itself (got ${JSON.stringify(redactUrl(config.siteUrl))})`);
  }
}

function nonEmptyString(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw new Error('must be a non-empty string');
  return raw;
}

/** A list as the environment writes it (`10.0.0.0/8, loopback`), or as a caller's override already split. */
function trustList(raw: unknown): string[] {
  if (raw === null) return [];
  if (Array.isArray(raw)) return parseTrustList(raw.map(String).join(','));
  return parseTrustList(nonEmptyString(raw));
}

function optionalPath(raw: unknown): string | null {
  return raw === null ? null : nonEmptyString(raw);
}

function port(raw: unknown): number {
  const text = String(raw);
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65535) throw new Error('must be a port number from 0 to 65535');
  return Number(text);
}

function httpUrl(raw: unknown): string {
  const text = nonEmptyString(raw);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an absolute http(s) URL');
  return text;
}

/**
 * An http(s) address that is an origin only (scheme, host, port): the processor's SDK takes a
 * host, port and scheme, so a path could not be honoured, and a browser checks an origin.
 */
function originOnly(raw: unknown, example: string): string {
  const url = new URL(withoutUserInfo(httpUrl(raw), 'it would be sent to the processor and shown in errors'));
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw new Error(`must be an address with no path, query or fragment, such as ${example}`);
  }
  return url.origin;
}

/** user:password@ in a URL that is not a secret setting: refused rather than carried where it shows. */
function withoutUserInfo(text: string, why: string): string {
  const url = new URL(text);
  if (url.username !== '' || url.password !== '') throw new Error(`must not hold a user name or password (user:password@): ${why}`);
  return text;
}

/** Kept as written; the mailer reads it again with the same readSmtpUrl (src/smtp-url.ts). */
function smtpUrl(raw: unknown): string {
  const text = nonEmptyString(raw);
  readSmtpUrl(text);
  return text;
}

function oneOf<T extends string>(raw: unknown, allowed: readonly T[]): T {
  if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
    throw new Error(`must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

function fraction(raw: unknown): number {
  const text = String(raw);
  if (!/^(0(\.[0-9]+)?|1(\.0+)?)$/.test(text)) throw new Error('must be a number from 0 to 1');
  return Number(text);
}

function wholeNumber(raw: unknown, min: number, max: number): number {
  const text = String(raw);
  if (!/^[0-9]{1,7}$/.test(text) || Number(text) < min || Number(text) > max) throw new Error(`must be a whole number from ${min} to ${max}`);
  return Number(text);
}

/** A node-cron expression (five fields, or six with seconds first), or "off". */
function schedule(raw: unknown): string | null {
  if (raw === 'off' || raw === null) return null;
  const text = nonEmptyString(raw).trim();
  if (!cron.validate(text)) throw new Error('must be a cron expression such as "0 16 * * *" (minute hour day month weekday, in UTC), or "off"');
  return text;
}
