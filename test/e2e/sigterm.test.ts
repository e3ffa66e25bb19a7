import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { listPostableAccounts } from '../../src/books/chart.js';
import { openDb } from '../../src/db/connection.js';
import { projectRoot } from '../../src/paths.js';
import { CliHarness } from '../cli/support.js';

/**
 * `daybook serve` in its own process, under write load, stopped with SIGTERM: every request it
 * acknowledged is in the books exactly once, nothing it did not acknowledge is, it exits 0, and
 * the books file is whole.
 */
describe('SIGTERM under write load', function () {
  this.timeout(60_000);
  let cli: CliHarness;
  let server: ChildProcess | undefined;
  let stderr = '';
  afterEach(() => {
    server?.kill('SIGKILL');
    cli.cleanup();
  });

  async function startServerProcess(dbPath: string): Promise<{ url: string; exited: Promise<number | null> }> {
    server = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), '--db', dbPath, '--json', 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: projectRoot,
      env: { ...process.env, DAYBOOK_LOG_LEVEL: 'silent', DAYBOOK_JOB_RATES: 'off', DAYBOOK_JOB_BACKUP: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server!.on('exit', (code) => resolve(code)));
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      server!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.endsWith('\n')) resolve((JSON.parse(out) as { url: string }).url);
      });
      void exited.then((code) => reject(new Error(`the server exited (${code}) before it listened`)));
    });
    return { url, exited };
  }

  it('answers every request in flight, loses no acknowledged write, writes nothing unacknowledged, exits 0', async () => {
    cli = new CliHarness();
    const accountId = await cli.createAccount(['--plan', 'large']);
    const businessId = await cli.createBusiness(accountId);
    await cli.json(['account', 'set', '--id', accountId, '--rate-limit', 'off']);
    const { key } = await cli.createKey(accountId, ['--access', 'read-write']);
    const accountIdForExpenses = cli.withDb((db) => listPostableAccounts(db, businessId).find((account) => account.name === 'Office Supplies')!.id);

    const { url, exited } = await startServerProcess(cli.dbPath);
    const acknowledged: string[] = [];
    const unanswered: string[] = [];
    let stopping = false;
    const worker = async () => {
      while (true) {
        const memo = randomUUID();
        try {
          const response = await fetch(`${url}/api/v1/expenses`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': memo },
            body: JSON.stringify({ date: '2026-03-10', amountCents: '1234', vendorName: 'Staples', accountId: accountIdForExpenses, memo }),
          });
          await response.text();
          expect(response.status, 'every answer is a success').to.equal(201);
          acknowledged.push(memo);
        } catch (error) {
          if (!stopping) throw error;
          unanswered.push(memo);
          return; // the server has stopped listening
        }
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());
    while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 10));
    stopping = true;
    server!.kill('SIGTERM');
    await Promise.all(workers);
    expect(await exited, `exit code after SIGTERM; stderr: ${stderr}`).to.equal(0);
    expect(stderr).to.contain('SIGTERM: shutting down');

    const db = openDb(cli.dbPath);
    try {
      expect(db.pragma('integrity_check', { simple: true })).to.equal('ok');
      const memos = (db.prepare('SELECT memo FROM expenses').all() as { memo: string }[]).map((row) => row.memo);
      expect(new Set(memos).size, 'no expense twice').to.equal(memos.length);
      expect([...memos].sort(), 'the books hold exactly the acknowledged writes').to.deep.equal([...acknowledged].sort());
      expect(db.prepare("SELECT count(*) AS n FROM idempotency_records WHERE state = 'in_progress'").get()).to.deep.equal({ n: 0n });
      const unbalanced = db
        .prepare(
          `SELECT entry_id FROM journal_lines GROUP BY entry_id
           HAVING sum(CASE direction WHEN 'debit' THEN amount_cents ELSE -amount_cents END) <> 0`,
        )
        .all();
      expect(unbalanced).to.deep.equal([]);
    } finally {
      db.close();
    }
    expect(acknowledged.length).to.be.at.least(150);
  });
});
