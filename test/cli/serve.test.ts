import { expect } from 'chai';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliHarness, expectBadArguments, expectOk, parseOneObject, waitFor } from './support.js';

interface DemoOutput {
  url: string;
  key: string;
  keyId: string;
  accountId: string;
  businesses: { id: string; name: string }[];
  curl: string;
}

async function getBusinesses(url: string, key: string): Promise<{ status: number; body: { accountName?: string; businesses?: { id: string; name: string }[] } }> {
  const response = await fetch(`${url}/api/v1/businesses`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as { businesses?: { id: string; name: string }[] } };
}

describe('daybook serve and demo', function () {
  this.timeout(30_000);
  let cli: CliHarness;
  beforeEach(() => (cli = new CliHarness()));
  afterEach(() => cli.cleanup());

  it('demo --port 0 --json seeds fresh books, serves them with the printed key, and stops cleanly', async () => {
    const stop = new AbortController();
    const live = cli.start(['--json', 'demo', '--port', '0'], { stop: stop.signal });
    try {
      await waitFor(live, () => live.stdout().endsWith('\n'), 'the demo object on stdout');
      const demo = parseOneObject<DemoOutput>(live.stdout());
      expect(demo.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(demo.curl).to.equal(`curl -s -H "Authorization: Bearer ${demo.key}" ${demo.url}/api/v1/businesses`);
      const { status, body } = await getBusinesses(demo.url, demo.key);
      expect(status).to.equal(200);
      expect(body.accountName).to.equal('Harbor & Pine Bookkeeping');
      expect(body.businesses?.map((b) => ({ id: b.id, name: b.name }))).to.deep.equal(demo.businesses);
    } finally {
      stop.abort();
    }
    const result = await live.done;
    expectOk(result);
    expect(result.stderr).to.contain('shutting down');
  });

  it('demo prints the key, the URL and a working curl line for humans', async () => {
    const stop = new AbortController();
    const live = cli.start(['demo', '--port', '0'], { stop: stop.signal });
    try {
      await waitFor(live, () => /^daybook\(\) \{.*\n/m.test(live.stdout()), 'the line for another shell, printed last');
      const key = /^(dbk_\S+)$/m.exec(live.stdout())?.[1];
      const curl = /^curl -s -H "Authorization: Bearer (\S+)" (http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/businesses$/m.exec(live.stdout());
      expect(curl?.[1]).to.equal(key);
      expect(live.stdout()).to.contain(`Daybook is listening on ${curl?.[2]}`);
      expect((await getBusinesses(curl![2]!, key!)).status).to.equal(200);
      expect(live.stdout()).to.contain(`KEY='${key}' API='${curl![2]}/api/v1'; H="Authorization: Bearer $KEY"\n`);
    } finally {
      stop.abort();
    }
    expectOk(await live.done);
  });

  it('serve --port 0 answers with keys made by the CLI and closes on stop', async () => {
    const accountId = await cli.createAccount();
    await cli.createBusiness(accountId);
    const { key } = await cli.createKey(accountId);
    const stop = new AbortController();
    const live = cli.start(['--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { stop: stop.signal });
    let url = '';
    try {
      await waitFor(live, () => live.stdout().endsWith('\n'), 'the serve object on stdout');
      const served = parseOneObject<{ url: string; port: number; db: string }>(live.stdout());
      url = served.url;
      expect(served.db).to.equal(cli.dbPath);
      expect((await getBusinesses(url, key)).status).to.equal(200);
    } finally {
      stop.abort();
    }
    expectOk(await live.done);
    const afterStop = await fetch(`${url}/api/v1/businesses`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(afterStop).to.equal('refused');
  });

  it('refuses a second serve of the same books while the first runs (exit 2, one line), and serves again once it stopped', async () => {
    const stop = new AbortController();
    const first = cli.start(['--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { stop: stop.signal });
    try {
      await waitFor(first, () => first.stdout().endsWith('\n'), 'the first serve object on stdout');
      expectBadArguments(await cli.run(['serve', '--port', '0', '--host', '127.0.0.1']), /another daybook server is serving/);
    } finally {
      stop.abort();
    }
    expectOk(await first.done);
    await serveOnceAndStop(cli, 'the second serve object on stdout');
  });

  it('refuses a port in use or an address not of this machine with one line naming the setting (exit 2), and leaves the books free', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      expectBadArguments(
        await cli.run(['serve', '--port', String(port), '--host', '127.0.0.1']),
        new RegExp(`^daybook: PORT: ${port} on 127\\.0\\.0\\.1 is already in use by another program: stop it, or choose another port \\(--port or PORT\\)\\n`),
      );
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
    expectBadArguments(await cli.run(['serve', '--port', '0', '--host', '10.254.254.254']), /^daybook: HOST: 10\.254\.254\.254 is not an address of this machine \(--host or HOST\)\n/);
    // The lock went with the failed start: the books can be served now.
    await serveOnceAndStop(cli, 'the serve object on stdout');
  });

  it('refuses books whose folder cannot take files with one line naming the setting (exit 2): a file in the way, a read-only place', async () => {
    const inTheWay = join(cli.dir, 'not-a-folder');
    writeFileSync(inTheWay, 'a file, not a folder');
    expectBadArguments(
      await cli.run(['--db', join(inTheWay, 'books.sqlite'), 'serve', '--port', '0'], { withoutDb: true }),
      new RegExp(`^daybook: DAYBOOK_DB: the folder ${inTheWay.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot hold the books: a file is in the way of that path; give a writable folder \\(--db or DAYBOOK_DB\\)\\n$`),
    );
    // /proc takes no new files, whoever asks (root included).
    expectBadArguments(await cli.run(['--db', '/proc/books.sqlite', 'serve', '--port', '0'], { withoutDb: true }), /^daybook: DAYBOOK_DB: the folder \/proc cannot hold the books: /);
    expect(readdirSync(cli.dir)).to.deep.equal(['not-a-folder']);
  });
});

/** Serves the harness's books until the serve object is on stdout, then stops; the run must end well. */
async function serveOnceAndStop(cli: CliHarness, what: string): Promise<void> {
  const stop = new AbortController();
  const live = cli.start(['--json', 'serve', '--port', '0', '--host', '127.0.0.1'], { stop: stop.signal });
  try {
    await waitFor(live, () => live.stdout().endsWith('\n'), what);
  } finally {
    stop.abort();
  }
  expectOk(await live.done);
}
