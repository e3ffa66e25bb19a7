import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/db/connection.js';
import { startTestApp, sendRequest, type TestResponse } from '../support/app.js';
import { buildApiTenant, expectError, setTenant } from '../support/api.js';
import { accountIdByName } from '../support/factories.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

/**
 * The books' disk fills up under a running server: writes answer 500 internal_error with the
 * reason in the log, /healthz says the disk is full, reads go on working, nothing half-written is left, and once there is room
 * again writes work without a restart.
 *
 * The disk is a small tmpfs mounted for the test when the machine allows it (root with the
 * right to mount); otherwise the server runs under a file-size limit (ulimit -S -f), which
 * fails its writes the same way (EFBIG instead of ENOSPC), and room is made by lifting it.
 */
describe('A full disk under a running server', function () {
  this.timeout(60_000);
  let dir: string;
  let booksPath: string;
  let mounted = false;
  let fileSizeLimitBlocks: number | undefined;
  let server: ServerProcess;
  let key: string;
  let accountId: string;
  let filler: string | undefined;
  /** Memos of the writes answered 201, and of those refused. */
  const written: string[] = [];
  const refusedMemos: string[] = [];

  const postExpense = (memo: string): Promise<TestResponse> =>
    sendRequest(server.url, 'POST', '/api/v1/expenses', {
      key,
      headers: { 'idempotency-key': memo },
      body: { date: '2026-03-10', amountCents: '1234', vendorName: 'Staples', accountId, memo: `${memo} ${'x'.repeat(1900)}` },
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-full-'));
    mkdirSync(join(dir, 'disk'));
    mounted = tryMountTmpfs(join(dir, 'disk'), '6m');
    booksPath = join(dir, 'disk', 'books.sqlite');
    const seeded = await startTestApp(undefined, { dbPath: booksPath });
    const tenant = buildApiTenant(seeded, { plan: 'large', keys: [{ access: 'read_write' }] });
    setTenant(seeded, tenant.id, { rateLimit: { mode: 'off' } });
    key = tenant.key;
    accountId = accountIdByName(seeded.db, tenant.business.id, 'Office Supplies');
    await seeded.close();
    fileSizeLimitBlocks = mounted ? undefined : Math.ceil(statSync(booksPath).size / 512) + 256;
    server = await startServerProcess(booksPath, {}, fileSizeLimitBlocks === undefined ? {} : { fileSizeLimitBlocks });
  });
  after(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    try {
      if (mounted) unmount(join(dir, 'disk'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers writes 500 internal_error with the reason in the log once the disk is full', async () => {
    const first = randomUUID();
    expect((await postExpense(first)).status, 'a write with room to spare').to.equal(201);
    written.push(first);

    if (mounted) filler = fillDisk(join(dir, 'disk', 'filler'));
    // Until the log needs room it has not got, writes still fit; the first that does not is refused.
    let refused: TestResponse | undefined;
    for (let i = 0; i < 3_000 && !refused; i++) {
      const memo = randomUUID();
      const res = await postExpense(memo);
      if (res.status === 201) written.push(memo);
      else {
        refused = res;
        refusedMemos.push(memo);
      }
    }
    expect(refused, 'a write refused once the disk is full').to.not.equal(undefined);
    expectError(refused!, 500, 'internal_error');
    const again = randomUUID();
    expectError(await postExpense(again), 500, 'internal_error');
    refusedMemos.push(again);
    const reason = /SQLITE_FULL|SQLITE_IOERR[A-Z_]*|disk is full|EFBIG|ENOSPC/.exec(server.stderr())?.[0];
    expect(reason, `the reason, in the log: ${server.stderr().slice(-2000)}`).to.be.a('string');
    console.log(
      `      full disk (${mounted ? '6 MB tmpfs' : `file-size limit of ${fileSizeLimitBlocks} blocks`}): ${written.length} writes acknowledged, ` +
        `${refusedMemos.length} refused with 500 (logged: ${reason})`,
    );
  });

  it('keeps answering reads meanwhile', async () => {
    expect((await sendRequest(server.url, 'GET', '/api/v1/businesses', { key })).status).to.equal(200);
    const transactions = await sendRequest(server.url, 'GET', '/api/v1/transactions?limit=5', { key });
    expect(transactions.status).to.equal(200);
    expect(transactions.body.transactions, 'the register shows the acknowledged writes').to.have.lengthOf(Math.min(5, written.length));
  });

  // Runs only on the tmpfs: under a file-size limit the disk itself keeps its room, and
  // /healthz, which asks the file system how much is free, rightly sees nothing wrong.
  it('says so on /healthz (503 "the disk of the books is full")', async function () {
    if (!mounted) this.skip(); // reason: this machine allows no mount; a file-size limit leaves the disk itself with room, so /healthz has nothing to see
    const health = await sendRequest(server.url, 'GET', '/healthz');
    expect(health.status).to.equal(503);
    expect(health.body.problem).to.match(/^the disk of the books is full: [0-9]+ bytes free$/);
  });

  it('takes writes again once room is made, without a restart', async () => {
    if (mounted) rmSync(filler!);
    // Under the file-size limit, room is made by lifting the running server's limit.
    else execFileSync('prlimit', ['--pid', String(server.child.pid), '--fsize=unlimited:'], { stdio: 'ignore' });
    expect((await sendRequest(server.url, 'GET', '/healthz')).body, 'healthy again').to.deep.equal({ ok: true });
    const afterRoom = randomUUID();
    expect((await postExpense(afterRoom)).status).to.equal(201);
    written.push(afterRoom);
  });

  it('leaves nothing half-written: the books hold exactly the acknowledged writes, whole and balanced', async () => {
    server.child.kill('SIGTERM');
    expect((await server.exited).code, `exit after SIGTERM; stderr: ${server.stderr().slice(-2000)}`).to.equal(0);
    const db = openDb(booksPath);
    try {
      expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
      const memos = (db.prepare('SELECT memo FROM expenses').all() as { memo: string }[]).map((row) => row.memo.split(' ')[0]);
      expect(memos.sort(), 'exactly the acknowledged writes, none of the refused').to.deep.equal([...written].sort());
      expect(refusedMemos.filter((memo) => memos.includes(memo))).to.deep.equal([]);
      expect(db.prepare("SELECT count(*) AS n FROM journal_entries WHERE source_type = 'expense'").get()).to.deep.equal({ n: BigInt(written.length) });
      expect(db.prepare("SELECT count(*) AS n FROM idempotency_records WHERE state = 'in_progress'").get()).to.deep.equal({ n: 0n });
      const unbalanced = db
        .prepare(`SELECT entry_id FROM journal_lines GROUP BY entry_id HAVING sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) <> 0`)
        .all();
      expect(unbalanced).to.deep.equal([]);
    } finally {
      db.close();
    }
  });
});

/** Unmounts `at`, lazily when something still holds it (the test failed half-way). */
function unmount(at: string): void {
  try {
    execFileSync('umount', [at], { stdio: 'ignore' });
  } catch {
    execFileSync('umount', ['-l', at], { stdio: 'ignore' });
  }
}

/** Mounts a tmpfs of `size` on `at`; false when this machine does not allow it (not root, no CAP_SYS_ADMIN). */
function tryMountTmpfs(at: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Writes `path` until the file system has no room left; returns it. */
function fillDisk(path: string): string {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let size = chunk.length; size >= 512; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size = size / 2;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}
