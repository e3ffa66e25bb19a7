import { expect } from 'chai';
import { CONFIG_ENV_NAMES, ConfigError, loadConfig, loadDefaults } from '../../src/config.js';

/** Loads with exactly `env` (never the process environment) and returns the ConfigError it throws. */
function configErrorFor(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return error as ConfigError;
  }
  expect.fail(`expected ${JSON.stringify(env)} to be refused`);
}

describe('configuration', () => {
  it('loads config/default.json when no environment variable is set', () => {
    expect(loadConfig({})).to.deep.equal({
      db: './data/daybook.sqlite',
      port: 3000,
      host: '127.0.0.1',
      siteUrl: 'http://localhost:3000',
      smtpUrl: null,
      mailFrom: 'Daybook <billing@localhost>',
      fxProvider: 'frankfurter',
      fxProviderUrl: 'https://api.frankfurter.app',
      rateMaxAgeDays: 4,
      sqliteSynchronous: 'full',
      stripeApiUrl: 'https://api.stripe.com',
      stripeCheckoutOrigin: 'https://checkout.stripe.com',
      backupDir: './data/backups',
      backupKeep: 7,
      reviewConfidence: 0.9,
      logLevel: 'info',
      trustProxy: [],
      tlsCert: null,
      tlsKey: null,
      jobRates: '30 16 * * *',
      jobOverdue: '5 * * * *',
      jobOutbox: '* * * * *',
      jobBackup: '15 2 * * *',
      jobHousekeeping: '*/10 * * * *',
      jobCardPayments: '*/10 * * * *',
    });
  });

  it('documents one environment variable per setting', () => {
    expect(CONFIG_ENV_NAMES).to.have.members([
      'DAYBOOK_DB',
      'PORT',
      'HOST',
      'DAYBOOK_SITE_URL',
      'DAYBOOK_SMTP_URL',
      'DAYBOOK_MAIL_FROM',
      'DAYBOOK_FX_PROVIDER',
      'DAYBOOK_FX_PROVIDER_URL',
      'DAYBOOK_RATE_MAX_AGE_DAYS',
      'DAYBOOK_SQLITE_SYNCHRONOUS',
      'DAYBOOK_STRIPE_API_URL',
      'DAYBOOK_STRIPE_CHECKOUT_ORIGIN',
      'DAYBOOK_BACKUP_DIR',
      'DAYBOOK_BACKUP_KEEP',
      'DAYBOOK_REVIEW_CONFIDENCE',
      'DAYBOOK_LOG_LEVEL',
      'DAYBOOK_TRUST_PROXY',
      'DAYBOOK_TLS_CERT',
      'DAYBOOK_TLS_KEY',
      'DAYBOOK_JOB_RATES',
      'DAYBOOK_JOB_OVERDUE',
      'DAYBOOK_JOB_OUTBOX',
      'DAYBOOK_JOB_BACKUP',
      'DAYBOOK_JOB_HOUSEKEEPING',
      'DAYBOOK_JOB_CARD_PAYMENTS',
    ]);
    expect(Object.keys(loadDefaults())).to.have.lengthOf(CONFIG_ENV_NAMES.length);
  });

  describe('environment overrides', () => {
    const overrides: [string, string, string, unknown][] = [
      ['DAYBOOK_DB', '/var/lib/daybook/books.sqlite', 'db', '/var/lib/daybook/books.sqlite'],
      ['PORT', '8080', 'port', 8080],
      ['PORT', '0', 'port', 0],
      ['PORT', '65535', 'port', 65535],
      ['HOST', '0.0.0.0', 'host', '0.0.0.0'],
      ['DAYBOOK_SITE_URL', 'https://books.example.com', 'siteUrl', 'https://books.example.com'],
      ['DAYBOOK_SITE_URL', 'https://books.example.com/daybook//', 'siteUrl', 'https://books.example.com/daybook'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587', 'smtpUrl', 'smtp://mail.example.com:587'],
      ['DAYBOOK_SMTP_URL', 'smtps://user:pw@mail.example.com:465', 'smtpUrl', 'smtps://user:pw@mail.example.com:465'],
      ['DAYBOOK_SMTP_URL', '', 'smtpUrl', null],
      ['DAYBOOK_SMTP_URL', 'smtp://relay.lan:25?tls=off', 'smtpUrl', 'smtp://relay.lan:25?tls=off'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587?requireTLS=true', 'smtpUrl', 'smtp://mail.example.com:587?requireTLS=true'],
      ['DAYBOOK_MAIL_FROM', 'Books <books@example.com>', 'mailFrom', 'Books <books@example.com>'],
      ['DAYBOOK_FX_PROVIDER', 'ecb', 'fxProvider', 'ecb'],
      ['DAYBOOK_FX_PROVIDER_URL', 'http://127.0.0.1:9999/rates', 'fxProviderUrl', 'http://127.0.0.1:9999/rates'],
      ['DAYBOOK_SQLITE_SYNCHRONOUS', 'normal', 'sqliteSynchronous', 'normal'],
      ['DAYBOOK_STRIPE_API_URL', 'http://127.0.0.1:12111', 'stripeApiUrl', 'http://127.0.0.1:12111'],
      ['DAYBOOK_STRIPE_API_URL', 'https://stripe-proxy.lan/', 'stripeApiUrl', 'https://stripe-proxy.lan'],
      ['DAYBOOK_STRIPE_CHECKOUT_ORIGIN', 'http://127.0.0.1:12112', 'stripeCheckoutOrigin', 'http://127.0.0.1:12112'],
      ['DAYBOOK_SQLITE_SYNCHRONOUS', 'full', 'sqliteSynchronous', 'full'],
      ['DAYBOOK_BACKUP_DIR', '/backups', 'backupDir', '/backups'],
      ['DAYBOOK_REVIEW_CONFIDENCE', '0.75', 'reviewConfidence', 0.75],
      ['DAYBOOK_REVIEW_CONFIDENCE', '0', 'reviewConfidence', 0],
      ['DAYBOOK_REVIEW_CONFIDENCE', '1', 'reviewConfidence', 1],
      ['DAYBOOK_REVIEW_CONFIDENCE', '1.0', 'reviewConfidence', 1],
      ['DAYBOOK_LOG_LEVEL', 'silent', 'logLevel', 'silent'],
      ['DAYBOOK_LOG_LEVEL', 'debug', 'logLevel', 'debug'],
      ['DAYBOOK_BACKUP_KEEP', '30', 'backupKeep', 30],
      ['DAYBOOK_BACKUP_KEEP', '1', 'backupKeep', 1],
      ['DAYBOOK_TRUST_PROXY', 'loopback', 'trustProxy', ['loopback']],
      ['DAYBOOK_TRUST_PROXY', '10.0.0.0/8, 192.168.1.20 fd00::/8,::1', 'trustProxy', ['10.0.0.0/8', '192.168.1.20', 'fd00::/8', '::1']],
      ['DAYBOOK_TRUST_PROXY', 'off', 'trustProxy', []],
      ['DAYBOOK_TLS_CERT', '/etc/daybook/cert.pem', 'tlsCert', '/etc/daybook/cert.pem'],
      ['DAYBOOK_JOB_RATES', '0 8 * * 1-5', 'jobRates', '0 8 * * 1-5'],
      ['DAYBOOK_JOB_RATES', 'off', 'jobRates', null],
      ['DAYBOOK_JOB_OVERDUE', 'off', 'jobOverdue', null],
      ['DAYBOOK_JOB_OUTBOX', '*/5 * * * *', 'jobOutbox', '*/5 * * * *'],
      ['DAYBOOK_JOB_BACKUP', 'off', 'jobBackup', null],
      ['DAYBOOK_JOB_HOUSEKEEPING', '0 * * * *', 'jobHousekeeping', '0 * * * *'],
      ['DAYBOOK_JOB_CARD_PAYMENTS', 'off', 'jobCardPayments', null],
    ];
    // TLS needs both files and an https site address; those ride along where the case sets one.
    const companions: Record<string, Record<string, string>> = {
      DAYBOOK_TLS_CERT: { DAYBOOK_TLS_KEY: '/etc/daybook/key.pem', DAYBOOK_SITE_URL: 'https://books.example.com' },
    };
    for (const [env, value, key, expected] of overrides) {
      it(`${env}=${JSON.stringify(value)} sets ${key}`, () => {
        const companion = companions[env] ?? {};
        const config = loadConfig({ ...companion, [env]: value }) as unknown as Record<string, unknown>;
        expect(config[key]).to.deep.equal(expected);
        // Every other setting keeps its default.
        const defaults = loadConfig({}) as unknown as Record<string, unknown>;
        const alsoSet = new Set(Object.keys(companion).length > 0 ? ['tlsKey', 'siteUrl'] : []);
        for (const other of Object.keys(defaults).filter((k) => k !== key && !alsoSet.has(k))) expect(config[other], other).to.deep.equal(defaults[other]);
      });
    }

    it('takes explicit overrides over the environment', () => {
      expect(loadConfig({ PORT: '8080' }, { port: 9090 }).port).to.equal(9090);
    });

    it('ignores variables it does not know', () => {
      expect(loadConfig({ DAYBOOK_UNKNOWN: 'x', NODE_ENV: 'test' })).to.deep.equal(loadConfig({}));
    });
  });

  describe('a bad value stops start-up with one line naming the setting', () => {
    const bad: [string, string][] = [
      ['PORT', 'abc'],
      ['PORT', '65536'],
      ['PORT', '-1'],
      ['PORT', '80.5'],
      ['PORT', ''],
      ['HOST', ''],
      ['HOST', '   '],
      ['DAYBOOK_DB', ''],
      ['DAYBOOK_SITE_URL', 'localhost:3000'],
      ['DAYBOOK_SITE_URL', 'ftp://example.com'],
      ['DAYBOOK_SMTP_URL', 'http://mail.example.com'],
      ['DAYBOOK_SMTP_URL', 'mail.example.com:587'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587?tls=on'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587?tls=off&tls=off'],
      ['DAYBOOK_SMTP_URL', 'smtps://mail.example.com:465?tls=off'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587?requireTLS=false'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587?ignoreTLS=true'],
      ['DAYBOOK_SMTP_URL', 'smtp://mail.example.com:587?opportunisticTLS=true'],
      ['DAYBOOK_SMTP_URL', 'smtp://relay.lan:25?tls=off&requireTLS=true'],
      ['DAYBOOK_MAIL_FROM', ''],
      ['DAYBOOK_FX_PROVIDER', 'openexchangerates'],
      ['DAYBOOK_FX_PROVIDER_URL', 'not a url'],
      ['DAYBOOK_SQLITE_SYNCHRONOUS', 'off'],
      ['DAYBOOK_STRIPE_API_URL', 'https://api.stripe.com/v1'],
      ['DAYBOOK_STRIPE_API_URL', 'api.stripe.com'],
      ['DAYBOOK_STRIPE_API_URL', 'ftp://api.stripe.com'],
      ['DAYBOOK_STRIPE_CHECKOUT_ORIGIN', 'https://checkout.stripe.com/pay?x=1'],
      ['DAYBOOK_SQLITE_SYNCHRONOUS', 'FULL'],
      ['DAYBOOK_BACKUP_DIR', ''],
      ['DAYBOOK_REVIEW_CONFIDENCE', '2'],
      ['DAYBOOK_REVIEW_CONFIDENCE', '1.5'],
      ['DAYBOOK_REVIEW_CONFIDENCE', '-0.1'],
      ['DAYBOOK_REVIEW_CONFIDENCE', '.9'],
      ['DAYBOOK_REVIEW_CONFIDENCE', 'high'],
      ['DAYBOOK_LOG_LEVEL', 'verbose'],
      ['DAYBOOK_TRUST_PROXY', ''],
      ['DAYBOOK_TRUST_PROXY', 'proxy.example.com'],
      ['DAYBOOK_TRUST_PROXY', '10.0.0.0/33'],
      ['DAYBOOK_TRUST_PROXY', 'fd00::/129'],
      ['DAYBOOK_TRUST_PROXY', '10.0.0.1/8/2'],
      ['DAYBOOK_TRUST_PROXY', '10.0.0.0/x'],
      ['DAYBOOK_TRUST_PROXY', 'loopback, 300.1.1.1'],
      ['DAYBOOK_TRUST_PROXY', 'off, 10.0.0.1'],
      ['DAYBOOK_TLS_CERT', ''],
      ['DAYBOOK_TLS_KEY', ''],
      ['DAYBOOK_BACKUP_KEEP', '0'],
      ['DAYBOOK_BACKUP_KEEP', '1001'],
      ['DAYBOOK_BACKUP_KEEP', 'all'],
      ['DAYBOOK_JOB_RATES', 'daily'],
      ['DAYBOOK_JOB_RATES', '61 * * * *'],
      ['DAYBOOK_JOB_OUTBOX', '* * *'],
      ['DAYBOOK_JOB_BACKUP', ''],
      ['DAYBOOK_JOB_HOUSEKEEPING', 'OFF'],
      ['DAYBOOK_JOB_CARD_PAYMENTS', 'every 10 minutes'],
    ];
    for (const [env, value] of bad) {
      it(`refuses ${env}=${JSON.stringify(value)}`, () => {
        const error = configErrorFor({ [env]: value });
        expect(error.name).to.equal('ConfigError');
        expect(error.message.startsWith(`${env}: `), error.message).to.equal(true);
        expect(error.message).to.include(JSON.stringify(value));
        expect(error.message).to.not.match(/[\r\n]/);
      });
    }

    it('names the bad entry of a trust list and what it may hold', () => {
      expect(configErrorFor({ DAYBOOK_TRUST_PROXY: 'loopback, 10.0.0.0/40' }).message).to.equal(
        'DAYBOOK_TRUST_PROXY: "10.0.0.0/40" has a prefix length outside 0 to 32; give addresses, CIDR ranges (10.0.0.0/8, fd00::/8) or loopback, separated by commas, or off (got "loopback, 10.0.0.0/40")',
      );
    });

    it('needs both TLS files, and an https site address with them', () => {
      expect(configErrorFor({ DAYBOOK_TLS_CERT: '/c.pem', DAYBOOK_SITE_URL: 'https://b.example' }).message).to.match(/^DAYBOOK_TLS_KEY: must be set with DAYBOOK_TLS_CERT/);
      expect(configErrorFor({ DAYBOOK_TLS_KEY: '/k.pem', DAYBOOK_SITE_URL: 'https://b.example' }).message).to.match(/^DAYBOOK_TLS_CERT: must be set with DAYBOOK_TLS_KEY/);
      expect(configErrorFor({ DAYBOOK_TLS_CERT: '/c.pem', DAYBOOK_TLS_KEY: '/k.pem' }).message).to.equal(
        'DAYBOOK_SITE_URL: must be an https address when Daybook serves TLS itself (got "http://localhost:3000")',
      );
    });

    it('refuses an smtp:// URL that would let the login and mail go unencrypted, naming ?tls=off', () => {
      expect(configErrorFor({ DAYBOOK_SMTP_URL: 'smtp://mail.example.com:587?requireTLS=false' }).message).to.equal(
        'DAYBOOK_SMTP_URL: ?requireTLS may only be true here: smtp:// requires STARTTLS, so the password and the emails are never sent unencrypted; to send to a relay without STARTTLS that you trust, write ?tls=off instead (got "smtp://mail.example.com:587?requireTLS=false")',
      );
      for (const query of ['?ignoreTLS=true', '?opportunisticTLS=true', '?requireTLS=0', '?requireTLS=true&requireTLS=false']) {
        expect(configErrorFor({ DAYBOOK_SMTP_URL: `smtp://mail.example.com:587${query}` }).message, query).to.match(/^DAYBOOK_SMTP_URL: \?[A-Za-z]+ may only be (true|false) here: .* write \?tls=off instead \(got /);
      }
      expect(configErrorFor({ DAYBOOK_SMTP_URL: 'smtp://mail.example.com:587?tls=yes' }).message).to.equal(
        'DAYBOOK_SMTP_URL: ?tls takes one value, off (?tls=off: send over smtp:// without requiring STARTTLS) (got "smtp://mail.example.com:587?tls=yes")',
      );
      expect(configErrorFor({ DAYBOOK_SMTP_URL: 'smtps://mail.example.com:465?tls=off' }).message).to.equal(
        'DAYBOOK_SMTP_URL: ?tls=off is for smtp:// only: smtps:// is encrypted from the first byte (got "smtps://mail.example.com:465?tls=off")',
      );
    });

    describe('never shows the password or key a URL setting holds', () => {
      const SECRET = 's3cret-Pa55word';
      const withSecrets: [string, string, string][] = [
        ['DAYBOOK_SMTP_URL', `smtp//daybook:${SECRET}@mail.example.com:587`, '***@mail.example.com:587'],
        ['DAYBOOK_SMTP_URL', `http://daybook:${SECRET}@mail.example.com`, 'http://***@mail.example.com'],
        ['DAYBOOK_SMTP_URL', `smtp://daybook:${SECRET}`, 'smtp://***'],
        ['DAYBOOK_SMTP_URL', `smtp://daybook:${SECRET}@mail.example.com:587?requireTLS=false`, 'smtp://***@mail.example.com:587?requireTLS=false'],
        ['DAYBOOK_SMTP_URL', `smtps://daybook:${SECRET}@mail.example.com:465?tls=off`, 'smtps://***@mail.example.com:465?tls=off'],
        ['DAYBOOK_SMTP_URL', `smtp://daybook:pa/ss${SECRET}@mail.example.com:587?tls=maybe`, 'smtp://***@mail.example.com:587?tls=maybe'],
        ['DAYBOOK_SITE_URL', `ftp://daybook:${SECRET}@books.example.com`, 'ftp://***@books.example.com'],
        ['DAYBOOK_SITE_URL', `https://daybook:${SECRET}@books.example.com`, 'https://***@books.example.com'],
        ['DAYBOOK_FX_PROVIDER_URL', `https://daybook:${SECRET}@rates.example.com`, 'https://***@rates.example.com'],
        ['DAYBOOK_FX_PROVIDER_URL', `ftp://rates.example.com/latest?access_key=${SECRET}`, 'ftp://rates.example.com/latest?access_key=***'],
      ];
      for (const [env, value, shown] of withSecrets) {
        it(`refuses ${env}=${JSON.stringify(value)} showing ${JSON.stringify(shown)}`, () => {
          const error = configErrorFor({ [env]: value });
          expect(error.message).to.match(new RegExp(`^${env}: `));
          expect(error.message.endsWith(`(got ${JSON.stringify(shown)})`), error.message).to.equal(true);
          expect(error.message).to.not.include(SECRET);
        });
      }

      it('refuses a user name or password in the site or rate provider address, where nothing could keep it secret', () => {
        expect(configErrorFor({ DAYBOOK_SITE_URL: `https://daybook:${SECRET}@books.example.com` }).message).to.equal(
          'DAYBOOK_SITE_URL: must not hold a user name or password (user:password@): every pay link (emails, PDFs, the log) would carry it (got "https://***@books.example.com")',
        );
        expect(configErrorFor({ DAYBOOK_FX_PROVIDER_URL: `https://daybook:${SECRET}@rates.example.com` }).message).to.equal(
          'DAYBOOK_FX_PROVIDER_URL: must not hold a user name or password (user:password@): a rate request cannot send it, and its error would show it (got "https://***@rates.example.com")',
        );
      });

      it('names a caller’s override the same way', () => {
        let caught: unknown;
        try {
          loadConfig({}, { smtpUrl: `smtp://daybook:${SECRET}@mail.example.com?ignoreTLS=true` });
        } catch (error) {
          caught = error;
        }
        expect((caught as ConfigError).message).to.match(/^override "smtpUrl": \?ignoreTLS may only be false here: .* \(got "smtp:\/\/\*\*\*@mail\.example\.com\?ignoreTLS=true"\)$/);
      });
    });

    it('keeps the line single even when the value holds a newline', () => {
      const error = configErrorFor({ PORT: '80\n81' });
      expect(error.message).to.equal('PORT: must be a port number from 0 to 65535 (got "80\\n81")');
    });

    it('names a caller’s override, not the env variable it shadows, when the override is bad', () => {
      let caught: unknown;
      try {
        loadConfig({ DAYBOOK_DB: '/fine.sqlite' }, { db: '' });
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(ConfigError);
      expect((caught as ConfigError).message).to.equal('override "db": must be a non-empty string (got "")');
    });

    it('says what the value must be', () => {
      expect(configErrorFor({ PORT: 'abc' }).message).to.equal('PORT: must be a port number from 0 to 65535 (got "abc")');
      expect(configErrorFor({ DAYBOOK_SQLITE_SYNCHRONOUS: 'off' }).message).to.equal(
        'DAYBOOK_SQLITE_SYNCHRONOUS: must be one of full, normal (got "off")',
      );
      expect(configErrorFor({ DAYBOOK_REVIEW_CONFIDENCE: '2' }).message).to.equal(
        'DAYBOOK_REVIEW_CONFIDENCE: must be a number from 0 to 1 (got "2")',
      );
      expect(configErrorFor({ DAYBOOK_JOB_RATES: '61 * * * *' }).message).to.equal(
        'DAYBOOK_JOB_RATES: must be a cron expression such as "0 16 * * *" (minute hour day month weekday, in UTC), or "off" (got "61 * * * *")',
      );
    });
  });
});
