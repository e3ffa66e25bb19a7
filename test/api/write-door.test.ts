import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { findOrCreateCustomer } from '../../src/books/customers.js';
import { newId } from '../../src/ids.js';
import { type Db, openDb } from '../../src/db/connection.js';
import { run } from '../../src/db/statements.js';
import { defineCommand } from '../../src/door/door.js';
import { groupCommitCounts } from '../../src/door/group-commit.js';
import { defineWrite } from '../../src/http/operation.js';
import { projectRoot } from '../../src/paths.js';
import { Strict, Uuid } from '../../src/api/schemas/common.js';
import { sendRequest, startTestApp, type TestApp } from '../support/app.js';
import { type ApiTenant, buildApiTenant, countRows, expectError, expectInvalid } from '../support/api.js';
import { freshDb } from '../support/db.js';
import { buildBusiness, buildKey, buildTenant, testClock } from '../support/factories.js';
import { type BurstRequest, sendBurst } from '../support/burst.js';
import { type AwaitingProbeLog, awaitingProbe, publishedWith } from '../support/probes.js';

/**
 * The write door (src/door/door.ts) as the pipeline runs it for every POST: the
 * Idempotency-Key, the command, its audit row and the stored answer commit together or not at
 * all; a command that must await something first (its `prepare`) holds its key in_progress.
 */

/** POST /probe/forgetful {name}: its command writes a customer row but no audit row. */
const forgetfulProbe = defineWrite({
  id: 'review.accept',
  method: 'POST',
  path: '/probe/forgetful',
  permission: 'review:write',
  summary: 'probe: a write that forgets its audit row',
  params: Strict({}),
  query: Strict({}),
  body: Strict({ name: Type.String() }),
  responses: { 201: { description: 'created', schema: Strict({ id: Uuid }) } },
  errors: [],
  command: defineCommand({
    name: 'probe.forgetful',
    scope: (input: { tenantId: string; name: string }) => ({ account: input.tenantId }),
    run({ db, clock }, input) {
      const id = newId();
      run(
        db,
        "INSERT INTO customers (id, tenant_id, name, name_key, currency, created_at) VALUES (?, ?, ?, ?, 'USD', ?)",
        id,
        input.tenantId,
        input.name,
        input.name.toLowerCase(),
        clock.now().toISOString(),
      );
      return { id };
    },
  }),
  input: ({ principal, body }) => ({ tenantId: principal.tenant.id, name: body.name }),
  reply: (result) => ({ status: 201, body: result }),
});

/** POST /probe/:id/send {}: creates the customer named after the path id. */
const pathProbe = defineWrite({
  id: 'invoices.send',
  method: 'POST',
  path: '/probe/:id/send',
  permission: 'invoices:write',
  summary: 'probe: a write with an id in its path',
  params: Strict({ id: Uuid }),
  query: Strict({}),
  body: Strict({}),
  responses: { 200: { description: 'done', schema: Strict({ id: Uuid, customerId: Uuid }) } },
  errors: [],
  command: defineCommand({
    name: 'probe.path',
    scope: (input: { tenantId: string; id: string }) => ({ account: input.tenantId }),
    run({ db, clock, actor }, input) {
      const customer = findOrCreateCustomer(db, clock, actor, input.tenantId, { name: `Path ${input.id}` });
      return { id: input.id, customerId: customer.id };
    },
  }),
  input: ({ principal, params }) => ({ tenantId: principal.tenant.id, id: params.id }),
  reply: (result) => ({ status: 200, body: result }),
});

/** A gate the awaiting probe waits on; each test opens it when it wants the write to go on. */
class Gate {
  #open: (() => void) | null = null;
  #promise: Promise<void> = Promise.resolve();

  close(): void {
    this.#promise = new Promise<void>((resolve) => {
      this.#open = resolve;
    });
  }

  open(): void {
    this.#open?.();
    this.#promise = Promise.resolve();
  }

  wait = (): Promise<void> => this.#promise;
}

describe('The write door (every POST)', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  const gate = new Gate();
  const probeLog: AwaitingProbeLog = { prepared: 0, worked: 0, afterCommits: 0 };

  before(async () => {
    app = await startTestApp('2026-03-15T12:00:00.000Z', { operations: publishedWith([forgetfulProbe, pathProbe, awaitingProbe(gate.wait, probeLog)]) });
    tenant = buildApiTenant(app, { plan: 'large' });
  });
  after(async () => {
    gate.open();
    await app.close();
  });
  afterEach(() => {
    gate.open();
    app.serverDb.exec('DROP TRIGGER IF EXISTS temp.refuse_idempotency_insert; DROP TRIGGER IF EXISTS temp.refuse_idempotency_update');
  });

  const customersNamed = (name: string): number => countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ? AND name = ?', tenant.id, name);
  const records = (key: string): { state: string }[] =>
    app.db.prepare('SELECT state FROM idempotency_records WHERE api_key_id = ? AND idempotency_key = ?').all(tenant.keys[0]!.id, key) as { state: string }[];
  const auditRows = (): number => countRows(app.db, 'SELECT count(*) FROM audit_log WHERE tenant_id = ?', tenant.id);
  const keyed = (key: string) => ({ 'idempotency-key': key });

  describe('audit inside the door', () => {
    it('refuses to commit a write that appended no audit row under the key (500 internal_error, nothing written)', async () => {
      const before = auditRows();
      const res = await app.allowingFaults(() => app.post('/api/v1/probe/forgetful', tenant.key, { name: 'Unaudited Co' }, keyed('forgetful')));
      expectError(res, 500, 'internal_error');
      expect(customersNamed('Unaudited Co')).to.equal(0);
      expect(auditRows()).to.equal(before);
      expect(records('forgetful')).to.deep.equal([]);
    });

    it('commits a write together with its audit row under the key\'s name', async () => {
      const res = await app.post('/api/v1/customers', tenant.key, { name: 'Audited Co' });
      expect(res.status).to.equal(201);
      const row = app.db.prepare('SELECT actor_type, actor_id, actor_name, action FROM audit_log WHERE subject_id = ?').get(res.body.id);
      expect(row).to.deep.equal({ actor_type: 'api_key', actor_id: tenant.keys[0]!.id, actor_name: tenant.keys[0]!.name, action: 'customer.create' });
    });
  });

  describe('the request fingerprint: the operation and its validated inputs', () => {
    it('replays a retry whose path id differs only in case (same request once validated)', async () => {
      const id = 'c0ffee00-aaaa-4bbb-8ccc-0123456789ab';
      const first = await app.post(`/api/v1/probe/${id.toUpperCase()}/send`, tenant.key, {}, keyed('path-case'));
      expect(first.status).to.equal(200);
      expect(first.body.id).to.equal(id);
      const retry = await app.post(`/api/v1/probe/${id}/send`, tenant.key, {}, keyed('path-case'));
      expect(retry.status).to.equal(200);
      expect(retry.headers['idempotent-replayed']).to.equal('true');
      expect(retry.body).to.deep.equal(first.body);
      expect(customersNamed(`Path ${id}`)).to.equal(1);
    });

    it('answers 409 conflict for the same key on another path id', async () => {
      await app.post('/api/v1/probe/c0ffee00-aaaa-4bbb-8ccc-000000000001/send', tenant.key, {}, keyed('path-other'));
      const other = await app.post('/api/v1/probe/c0ffee00-aaaa-4bbb-8ccc-000000000002/send', tenant.key, {}, keyed('path-other'));
      expectError(other, 409, 'conflict');
      expect(customersNamed('Path c0ffee00-aaaa-4bbb-8ccc-000000000002')).to.equal(0);
    });

    it('answers 409 conflict for the same key and body on another operation', async () => {
      const first = await app.post('/api/v1/customers', tenant.key, { name: 'Two Doors Co' }, keyed('two-operations'));
      expect(first.status).to.equal(201);
      const other = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Two Doors Co' }, keyed('two-operations'));
      expectError(other, 409, 'conflict');
    });
  });

  describe('fault injection: storing the answer fails', () => {
    it('rolls the work back when the idempotency record cannot be stored (500, no customer, no audit row, key free)', async () => {
      app.serverDb.exec(`CREATE TEMP TRIGGER refuse_idempotency_insert BEFORE INSERT ON main.idempotency_records
        BEGIN SELECT RAISE(ABORT, 'injected: the idempotency record cannot be stored'); END`);
      const before = auditRows();
      const res = await app.allowingFaults(() => app.post('/api/v1/customers', tenant.key, { name: 'Unstored Co' }, keyed('unstored')));
      expectError(res, 500, 'internal_error');
      expect(customersNamed('Unstored Co')).to.equal(0);
      expect(auditRows()).to.equal(before);

      app.serverDb.exec('DROP TRIGGER temp.refuse_idempotency_insert');
      const retry = await app.post('/api/v1/customers', tenant.key, { name: 'Unstored Co' }, keyed('unstored'));
      expect(retry.status).to.equal(201);
      expect(retry.headers['idempotent-replayed']).to.equal(undefined);
      expect(customersNamed('Unstored Co')).to.equal(1);
    });

    it('rolls an awaiting write back when its claim cannot be completed, and frees the key', async () => {
      app.serverDb.exec(`CREATE TEMP TRIGGER refuse_idempotency_update BEFORE UPDATE ON main.idempotency_records
        BEGIN SELECT RAISE(ABORT, 'injected: the claim cannot be completed'); END`);
      const res = await app.allowingFaults(() => app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Uncompleted Co' }, keyed('uncompleted')));
      expectError(res, 500, 'internal_error');
      expect(customersNamed('Uncompleted Co')).to.equal(0);
      expect(records('uncompleted')).to.deep.equal([]);
    });
  });

  describe('a write that must await something first', () => {
    it('holds its key in_progress while it awaits: a duplicate gets 409 conflict and runs nothing', async () => {
      gate.close();
      const first = app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Awaited Co' }, keyed('awaited'));
      await waitFor(() => records('awaited').length === 1);
      expect(records('awaited')).to.deep.equal([{ state: 'in_progress' }]);
      const worked = probeLog.worked;

      const duplicate = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Awaited Co' }, keyed('awaited'));
      expectError(duplicate, 409, 'conflict');
      expect(probeLog.worked).to.equal(worked);

      gate.open();
      const done = await first;
      expect(done.status).to.equal(201);
      expect(records('awaited')).to.deep.equal([{ state: 'completed' }]);
      expect(customersNamed('Awaited Co')).to.equal(1);
    });

    it('replays the stored answer without awaiting or working again, and without the work after the commit', async () => {
      const first = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Replayed Await Co' }, keyed('await-replay'));
      const counts = { ...probeLog };
      const replay = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Replayed Await Co' }, keyed('await-replay'));
      expect(replay.status).to.equal(201);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(probeLog).to.deep.equal(counts);
    });

    it('frees the key when the awaited step refuses (422): the corrected request runs', async () => {
      const refused = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Refused Co', refuse: true }, keyed('await-refused'));
      expectInvalid(refused, 'rate');
      expect(records('await-refused')).to.deep.equal([]);
      const corrected = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Refused Co' }, keyed('await-refused'));
      expect(corrected.status).to.equal(201);
      expect(customersNamed('Refused Co')).to.equal(1);
    });
  });

  describe('group commit: requests that arrive together commit together', () => {
    const pathId = (i: number) => `c0ffee00-bbbb-4ccc-8ddd-${String(i).padStart(12, '0')}`;

    it('answers each request of a burst by its own outcome: one refusal fails alone, a repeated key runs once', async () => {
      const before = groupCommitCounts(app.serverDb);
      const post = (path: string, key: string, body: unknown = {}): BurstRequest => ({ method: 'POST', path, options: { key: tenant.key, body, headers: keyed(key) } });
      const answers = await app.allowingFaults(() =>
        sendBurst(app.url, [
          ...Array.from({ length: 12 }, (_, i) => post(`/api/v1/probe/${pathId(i)}/send`, `burst-${i}`)),
          post('/api/v1/probe/forgetful', 'burst-forgetful', { name: 'Burst Forgetful Co' }),
          post(`/api/v1/probe/${pathId(0)}/send`, 'burst-0'),
        ]),
      );
      for (let i = 0; i < 12; i++) {
        expect(answers[i]!.status, `request ${i}`).to.equal(200);
        expect(customersNamed(`Path ${pathId(i)}`), `request ${i}`).to.equal(1);
      }
      expectError(answers[12]!, 500, 'internal_error');
      expect(customersNamed('Burst Forgetful Co')).to.equal(0);
      expect(records('burst-forgetful')).to.deep.equal([]);
      expect(answers[13]!.status).to.equal(200);
      expect(answers[13]!.body).to.deep.equal(answers[0]!.body);
      const after = groupCommitCounts(app.serverDb);
      expect(after.writes - before.writes).to.equal(14);
      expect(after.groups - before.groups, 'the burst shared transactions').to.be.below(14);
    });

    it('answers 500 and keeps nothing of a group whose commit fails; each key is free for the retry', async () => {
      // A deferred foreign key is checked only at COMMIT: a doomed customer fails its whole group there.
      app.serverDb.exec(`
        CREATE TEMP TABLE doomed_parents (id TEXT PRIMARY KEY);
        CREATE TEMP TABLE doomed_children (parent TEXT REFERENCES doomed_parents (id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TEMP TRIGGER doom_at_commit AFTER INSERT ON main.customers WHEN NEW.name = 'Doomed Co'
          BEGIN INSERT INTO doomed_children (parent) VALUES ('nobody'); END;
      `);
      try {
        const ids = Array.from({ length: 8 }, (_, i) => pathId(100 + i));
        const post = (path: string, key: string, body: unknown = {}): BurstRequest => ({ method: 'POST', path, options: { key: tenant.key, body, headers: keyed(key) } });
        const answers = await app.allowingFaults(() =>
          sendBurst(app.url, [...ids.map((id, i) => post(`/api/v1/probe/${id}/send`, `doomed-group-${i}`)), post('/api/v1/customers', 'doomed', { name: 'Doomed Co' })]),
        );
        expectError(answers[8]!, 500, 'internal_error');
        expect(customersNamed('Doomed Co')).to.equal(0);
        expect(records('doomed')).to.deep.equal([]);
        const failed = ids.filter((_, i) => answers[i]!.status === 500);
        expect(failed.length, 'requests that shared the doomed commit').to.be.above(0);
        ids.forEach((id, i) => {
          // Acknowledged exactly when kept.
          expect(customersNamed(`Path ${id}`), `request ${i} answered ${answers[i]!.status}`).to.equal(answers[i]!.status === 200 ? 1 : 0);
          expect(records(`doomed-group-${i}`)).to.deep.equal(answers[i]!.status === 200 ? [{ state: 'completed' }] : []);
        });
        app.serverDb.exec('DROP TRIGGER temp.doom_at_commit');
        for (const [i, id] of ids.entries()) {
          const retry = await app.post(`/api/v1/probe/${id}/send`, tenant.key, {}, keyed(`doomed-group-${i}`));
          expect(retry.status).to.equal(200);
          expect(customersNamed(`Path ${id}`)).to.equal(1);
        }
      } finally {
        app.serverDb.exec('DROP TRIGGER IF EXISTS temp.doom_at_commit; DROP TABLE IF EXISTS temp.doomed_children; DROP TABLE IF EXISTS temp.doomed_parents');
      }
    });
  });

  describe('work after the commit', () => {
    it('runs once after the commit, before the answer', async () => {
      const before = probeLog.afterCommits;
      const res = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'After Co' });
      expect(res.status).to.equal(201);
      expect(probeLog.afterCommits).to.equal(before + 1);
    });

    it('never undoes the write when it fails: the answer is the write\'s, and the write stands', async () => {
      const res = await app.post('/api/v1/probe/awaiting', tenant.key, { name: 'Mail Down Co', failAfterCommit: true }, keyed('mail-down'));
      expect(res.status).to.equal(201);
      expect(customersNamed('Mail Down Co')).to.equal(1);
      expect(records('mail-down')).to.deep.equal([{ state: 'completed' }]);
    });
  });
});

describe('The write door across a crash', () => {
  it('frees, at start-up, a key a killed process left in_progress: the retry runs once', async () => {
    const temp = await freshDb();
    const clock = testClock();
    const tenantRecord = buildTenant(temp.db, clock, { plan: 'large' });
    buildBusiness(temp.db, clock, { tenantId: tenantRecord.id });
    const key = buildKey(temp.db, clock, { tenantId: tenantRecord.id });
    const path = temp.path;
    temp.db.close();

    const child = await startProbeServer(path);
    let app: TestApp | undefined;
    try {
      const pending = sendRequest(child.url, 'POST', '/api/v1/probe/awaiting', {
        key: key.key,
        body: { name: 'Crash Co' },
        headers: { 'idempotency-key': 'crash-1' },
      }).catch((error: Error) => error);
      const inProgress = await withConnection(path, (db) =>
        waitFor(() => countRows(db, "SELECT count(*) FROM idempotency_records WHERE idempotency_key = 'crash-1' AND state = 'in_progress'") === 1),
      );
      expect(inProgress).to.equal(true);
      const exited = new Promise((resolve) => child.process.once('exit', resolve));
      child.process.kill('SIGKILL');
      expect(await pending).to.be.instanceOf(Error);
      await exited;

      app = await startTestApp(undefined, { operations: publishedWith([awaitingProbe(async () => {})]), dbPath: path });
      expect(countRows(app.db, "SELECT count(*) FROM idempotency_records WHERE idempotency_key = 'crash-1'")).to.equal(0);
      const retry = await app.post('/api/v1/probe/awaiting', key.key, { name: 'Crash Co' }, { 'idempotency-key': 'crash-1' });
      expect(retry.status).to.equal(201);
      expect(countRows(app.db, "SELECT count(*) FROM customers WHERE name = 'Crash Co'")).to.equal(1);
    } finally {
      child.process.kill('SIGKILL');
      await app?.close();
      temp.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

/** A second connection to the books file, as another process would have. */
async function withConnection<T>(path: string, use: (db: Db) => Promise<T>): Promise<T> {
  const db = openDb(path);
  try {
    return await use(db);
  } finally {
    db.close();
  }
}

async function startProbeServer(dbPath: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/support/probe-server.ts'), dbPath], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`probe server exited with ${code}`)));
  });
  return { url, process: child };
}
