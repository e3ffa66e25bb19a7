import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect as netConnect } from 'node:net';
import { connect, type SecureVersion } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config.js';
import { CONNECTION_LIMITS, createHttpServer } from '../../src/http/connections.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCertificate, type TestCertificate } from '../support/certificates.js';
import { captureLog } from '../support/log-capture.js';

const SITE_URL = 'https://books.example.com';

/** What the server presents to a new TLS connection, and the protocol agreed; or the refusal. */
function handshake(url: string, options: { minVersion?: SecureVersion; maxVersion?: SecureVersion } = {}): Promise<{ fingerprint: string; protocol: string | null }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false, servername: 'localhost', ...options }, () => {
      const result = { fingerprint: socket.getPeerCertificate().fingerprint256, protocol: socket.getProtocol() };
      socket.end();
      resolve(result);
    });
    socket.on('error', reject);
  });
}

function getOverHttps(url: string, ca: Buffer | string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, servername: 'localhost', agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Native TLS (DAYBOOK_TLS_CERT, DAYBOOK_TLS_KEY) over real sockets, with certificates made here. */
describe('native TLS', function () {
  this.timeout(20_000);
  let dir: string;
  let first: TestCertificate;
  let second: TestCertificate;
  let served: { certPath: string; keyPath: string };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-tls-'));
    first = makeCertificate(dir, 'first');
    second = makeCertificate(dir, 'second');
    // The files the server is told about; a renewal overwrites them.
    served = { certPath: join(dir, 'served.crt'), keyPath: join(dir, 'served.key') };
    copyFileSync(first.certPath, served.certPath);
    copyFileSync(first.keyPath, served.keyPath);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('serving', () => {
    let app: TestApp;
    const logged = captureLog('info');
    before(async () => {
      app = await startTestApp(undefined, { config: { tlsCert: served.certPath, tlsKey: served.keyPath, siteUrl: SITE_URL }, log: logged.log });
    });
    after(() => app.close());

    it('listens on https and answers a client that trusts the certificate', async () => {
      expect(app.url).to.match(/^https:\/\/127\.0\.0\.1:[0-9]+$/);
      const res = await getOverHttps(`${app.url}/healthz`, readCert(first));
      expect(res).to.deep.equal({ status: 200, body: '{"ok":true}' });
    });

    it('logs the scheme as https', async () => {
      await getOverHttps(`${app.url}/healthz`, readCert(first));
      const line = logged.lines.filter((entry) => entry.msg === 'request').at(-1);
      expect(line).to.include({ scheme: 'https', route: '/healthz' });
    });

    it('speaks TLS 1.2 and 1.3, and refuses 1.1 and older', async () => {
      expect((await handshake(app.url, { maxVersion: 'TLSv1.2' })).protocol).to.equal('TLSv1.2');
      expect((await handshake(app.url)).protocol).to.equal('TLSv1.3');
      const refused = await handshake(app.url, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }).then(
        () => null,
        (error: Error) => error,
      );
      expect(refused, 'a TLS 1.1 handshake').to.be.instanceOf(Error);
    });

    it('does not answer plain HTTP on the same port', async () => {
      const plain = await new Promise<string>((resolve) => {
        const req = httpRequest(app.url.replace('https:', 'http:') + '/healthz', { agent: false }, (res) => resolve(`status ${res.statusCode}`));
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end();
      });
      expect(plain).to.not.equal('status 200');
    });

    it('serves a renewed certificate to new connections after a reload, without a restart', async () => {
      expect((await handshake(app.url)).fingerprint).to.equal(first.fingerprint);
      copyFileSync(second.certPath, served.certPath);
      copyFileSync(second.keyPath, served.keyPath);
      expect(app.reloadTls()).to.equal(true);
      expect((await handshake(app.url)).fingerprint).to.equal(second.fingerprint);
      expect((await getOverHttps(`${app.url}/healthz`, readCert(second))).status).to.equal(200);
    });

    it('keeps serving the certificate it has when the renewed files do not match', async () => {
      const before = (await handshake(app.url)).fingerprint;
      copyFileSync(first.certPath, served.certPath);
      copyFileSync(second.keyPath, served.keyPath);
      expect(() => app.reloadTls()).to.throw(ConfigError, /^DAYBOOK_TLS_KEY: .* is not the key of the certificate in /);
      expect((await handshake(app.url)).fingerprint).to.equal(before);
      copyFileSync(second.certPath, served.certPath);
    });
  });

  describe('the connection limits hold under TLS', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp(undefined, {
        config: { tlsCert: first.certPath, tlsKey: first.keyPath, siteUrl: SITE_URL },
        connectionLimits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000, checkEveryMs: 100 },
      });
    });
    after(() => app.close());

    it('cuts a connection that never starts its handshake, as one that never sends its headers', async () => {
      const { hostname, port } = new URL(app.url);
      const started = Date.now();
      const closedAfterMs = await new Promise<number>((resolve, reject) => {
        const socket = netConnect({ host: hostname, port: Number(port) });
        socket.on('error', reject);
        socket.on('close', () => resolve(Date.now() - started));
        setTimeout(() => {
          socket.destroy();
          resolve(Infinity);
        }, 5_000).unref();
      });
      // Node's own default would hold it for 120 s.
      expect(closedAfterMs).to.be.lessThan(3_000);
    });

    it('answers a client that sends its request and then half-closes, while the answer is still being made', async () => {
      // The server's own connection handling, with an answer that takes 200 ms.
      const files = { cert: readFileSync(first.certPath), key: readFileSync(first.keyPath) };
      const server = createHttpServer((_req, res) => void setTimeout(() => res.end('made'), 200), CONNECTION_LIMITS, files);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const answer = await new Promise<string>((resolve, reject) => {
          let received = '';
          const halfOpen = { host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost', allowHalfOpen: true };
          const socket = connect(halfOpen, () => {
            socket.end('GET / HTTP/1.1\r\nhost: localhost\r\n\r\n');
          });
          socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
          socket.on('close', () => resolve(received));
          socket.on('error', reject);
        });
        expect(answer).to.match(/^HTTP\/1\.1 200 /);
        expect(answer).to.match(/made$/);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('a bad setting stops start-up with one line naming it', () => {
    async function startFailure(tlsCert: string, tlsKey: string): Promise<Error> {
      try {
        const app = await startTestApp(undefined, { config: { tlsCert, tlsKey, siteUrl: SITE_URL } });
        await app.close();
      } catch (error) {
        return error as Error;
      }
      throw new Error('the server started');
    }

    it('a certificate file that is missing', async () => {
      const error = await startFailure(join(dir, 'missing.crt'), first.keyPath);
      expect(error).to.be.instanceOf(ConfigError);
      expect(error.message).to.equal(`DAYBOOK_TLS_CERT: cannot read ${join(dir, 'missing.crt')} (ENOENT)`);
    });

    it('a key file that cannot be read', async () => {
      const error = await startFailure(first.certPath, dir);
      expect(error.message).to.equal(`DAYBOOK_TLS_KEY: cannot read ${dir} (EISDIR)`);
    });

    it('a certificate file that is not PEM', async () => {
      const junk = join(dir, 'junk.crt');
      writeFileSync(junk, 'not a certificate\n');
      const error = await startFailure(junk, first.keyPath);
      expect(error.message).to.match(new RegExp(`^DAYBOOK_TLS_CERT: ${junk} is not a PEM certificate \\(`));
      expect(error.message).to.not.match(/[\r\n]/);
    });

    it('a key file that is not a key', async () => {
      const error = await startFailure(first.certPath, first.certPath);
      expect(error.message).to.match(/^DAYBOOK_TLS_KEY: .* is not a PEM private key without a passphrase \(/);
    });

    it('a key that is not the certificate\'s', async () => {
      const error = await startFailure(first.certPath, second.keyPath);
      expect(error.message).to.match(new RegExp(`^DAYBOOK_TLS_KEY: ${second.keyPath} is not the key of the certificate in ${first.certPath} \\(`));
    });
  });
});

function readCert(certificate: TestCertificate): string {
  return readFileSync(certificate.certPath, 'utf8');
}
