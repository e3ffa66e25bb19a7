import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { listPostableAccounts } from '../../src/books/chart.js';
import { openDb } from '../../src/db/connection.js';
import { CliHarness } from '../cli/support.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

/**
 * `daybook serve` in its own process, under write load, stopped with SIGTERM: every request it
 * acknowledged is in the books exactly once, nothing it did not acknowledge is, it exits 0, the
 * books file is whole, and its asynchronous log holds an access line for every answer.
 */
describe('SIGTERM under write load', function () {
  this.timeout(60_000);
  let cli: CliHarness;
  let server: ServerProcess | undefined;
  afterEach(() => {
    server?.child.kill('SIGKILL');
    cli.cleanup();
  });

  it('answers every request in flight, loses no acknowledged write, writes nothing unacknowledged, exits 0', async () => {
    cli = new CliHarness();
    const accountId = await cli.createAccount(['--plan', 'large']);
    const businessId = await cli.createBusiness(accountId);
    await cli.json(['account', 'set', '--id', accountId, '--rate-limit', 'off']);
    const { key } = await cli.createKey(accountId, ['--access', 'read-write']);
    const accountIdForExpenses = cli.withDb((db) => listPostableAccounts(db, businessId).find((account) => account.name === 'Office Supplies')!.id);

    server = await startServerProcess(cli.dbPath, { DAYBOOK_LOG_LEVEL: 'info' });
    const { url, exited } = server;
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
    server.child.kill('SIGTERM');
    await Promise.all(workers);
    expect((await exited).code, `exit code after SIGTERM; stderr: ${server.stderr()}`).to.equal(0);
    expect(server.stderr()).to.contain('SIGTERM: shutting down');
    // The log is written asynchronously; whatever was still waiting went out before the exit.
    const created = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; operationId?: string; status?: number })
      .filter((line) => line.msg === 'request' && line.operationId === 'expenses.create' && line.status === 201);
    expect(created.length, 'an access line for every acknowledged write').to.equal(acknowledged.length);

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
