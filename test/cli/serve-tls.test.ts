import { expect } from 'chai';
import { copyFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { CLI_TEST_ENV, CliHarness, expectBadArguments, parseOneObject, waitFor } from './support.js';
import { makeCertificate, type TestCertificate } from '../support/certificates.js';

function servedFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false, servername: 'localhost' }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** `daybook serve` with DAYBOOK_TLS_CERT / DAYBOOK_TLS_KEY and DAYBOOK_TRUST_PROXY set. */
describe('daybook serve: TLS and trusted proxies', function () {
  this.timeout(30_000);
  let cli: CliHarness;
  let first: TestCertificate;
  let second: TestCertificate;
  let tlsEnv: NodeJS.ProcessEnv;
  beforeEach(() => {
    cli = new CliHarness();
    first = makeCertificate(cli.dir, 'first');
    second = makeCertificate(cli.dir, 'second');
    copyFileSync(first.certPath, join(cli.dir, 'served.crt'));
    copyFileSync(first.keyPath, join(cli.dir, 'served.key'));
    tlsEnv = { ...CLI_TEST_ENV, DAYBOOK_TLS_CERT: join(cli.dir, 'served.crt'), DAYBOOK_TLS_KEY: join(cli.dir, 'served.key'), DAYBOOK_SITE_URL: 'https://books.example.com' };
  });
  afterEach(() => cli.cleanup());

  it('serves https, and SIGHUP serves renewed files without a restart', async () => {
    const stop = new AbortController();
    const live = cli.start(['--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { env: tlsEnv, stop: stop.signal });
    try {
      await waitFor(live, () => live.stdout().endsWith('\n'), 'the serve object on stdout');
      const { url } = parseOneObject<{ url: string }>(live.stdout());
      expect(url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(await servedFingerprint(url)).to.equal(first.fingerprint);
      copyFileSync(second.certPath, join(cli.dir, 'served.crt'));
      copyFileSync(second.keyPath, join(cli.dir, 'served.key'));
      process.emit('SIGHUP', 'SIGHUP');
      expect(await servedFingerprint(url)).to.equal(second.fingerprint);
      expect(live.stderr()).to.include('SIGHUP: TLS certificate and key read again');

      // A renewal that went wrong (the new key with the old certificate) keeps what was served.
      copyFileSync(first.certPath, join(cli.dir, 'served.crt'));
      process.emit('SIGHUP', 'SIGHUP');
      expect(live.stderr()).to.match(/daybook: SIGHUP: DAYBOOK_TLS_KEY: .* is not the key of the certificate in .*; still serving the certificate read before\n/);
      expect(await servedFingerprint(url)).to.equal(second.fingerprint);
    } finally {
      stop.abort();
    }
    expect((await live.done).code).to.equal(0);
    expect(process.listenerCount('SIGHUP'), 'the handler goes with the server').to.equal(0);
  });

  it('leaves SIGHUP alone when it serves plain HTTP', async () => {
    const stop = new AbortController();
    const live = cli.start(['--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { stop: stop.signal });
    try {
      await waitFor(live, () => live.stdout().endsWith('\n'), 'the serve object on stdout');
      expect(process.listenerCount('SIGHUP')).to.equal(0);
    } finally {
      stop.abort();
    }
    await live.done;
  });

  describe('a bad setting stops start-up with one line naming it (exit 2)', () => {
    const serve = (env: NodeJS.ProcessEnv) => cli.run(['serve', '--port', '0', '--host', '127.0.0.1'], { env: { ...CLI_TEST_ENV, ...env } });

    it('an unparsable trust list', async () => {
      expectBadArguments(await serve({ DAYBOOK_TRUST_PROXY: 'loopback, the-proxy' }), /^daybook: DAYBOOK_TRUST_PROXY: "the-proxy" is not an address or a CIDR range; /);
    });

    it('a certificate file that is missing', async () => {
      expectBadArguments(await serve({ ...tlsEnv, DAYBOOK_TLS_CERT: join(cli.dir, 'nope.crt') }), /^daybook: DAYBOOK_TLS_CERT: cannot read .*nope\.crt \(ENOENT\)\n$/);
    });

    it('a key that does not match the certificate', async () => {
      expectBadArguments(await serve({ ...tlsEnv, DAYBOOK_TLS_KEY: second.keyPath }), /^daybook: DAYBOOK_TLS_KEY: .*second\.key is not the key of the certificate in .*served\.crt /);
    });

    it('TLS with an http site address', async () => {
      expectBadArguments(await serve({ ...tlsEnv, DAYBOOK_SITE_URL: 'http://books.example.com' }), /^daybook: DAYBOOK_SITE_URL: must be an https address when Daybook serves TLS itself/);
    });
  });
});
