import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../../src/config.js';
import { acquireServerLock, lockPath, ServerLockError } from '../../src/db/server-lock.js';
import { createLogger } from '../../src/log.js';
import { projectRoot } from '../../src/paths.js';
import { startServer } from '../../src/server.js';

/** One server per books file: an exclusive lock the kernel drops when its process ends. */
describe('the server lock (one server per books file)', () => {
  let dir: string;
  let books: string;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-lock-'));
    books = join(dir, 'books.sqlite');
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another process trying to take the lock: resolves with what it said ("held" or "refused"). */
  function otherProcess(): { child: ChildProcess; said: Promise<string> } {
    const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/support/hold-lock.ts'), books], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const said = new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
    return { child, said };
  }

  const exited = (child: ChildProcess) => new Promise((resolve) => child.once('exit', resolve));

  it('takes a free lock and gives it back on release', async () => {
    const release = acquireServerLock(books);
    expect(existsSync(lockPath(books))).to.equal(true);
    expect(await otherProcess().said).to.equal('refused');
    release();
    expect(await otherProcess().said).to.equal('held');
  });

  it('refuses a second taker in the same process while the first holds it', () => {
    const release = acquireServerLock(books);
    expect(() => acquireServerLock(books)).to.throw(ServerLockError, /another daybook server is serving/);
    release();
    acquireServerLock(books)();
  });

  it('keeps the lock through garbage collection when its taker keeps no reference to it', async () => {
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    // Nothing here refers to the lock after this line (a server that kept only its port open).
    acquireServerLock(books);
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 20));
    collectGarbage();
    expect(() => acquireServerLock(books)).to.throw(ServerLockError);
  });

  it('refuses while another process holds the lock', async () => {
    const { said } = otherProcess();
    expect(await said).to.equal('held');
    expect(() => acquireServerLock(books)).to.throw(ServerLockError);
  });

  it('is free again the moment its holder is killed, with nothing stale left to judge', async () => {
    const { child, said } = otherProcess();
    expect(await said).to.equal('held');
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
    // The dead holder's lock file is still there; only the kernel's lock counted, and it is gone.
    expect(existsSync(lockPath(books))).to.equal(true);
    const release = acquireServerLock(books);
    expect(await otherProcess().said).to.equal('refused');
    release();
  });

  it('lets exactly one of several processes starting at once take it', async function () {
    this.timeout(30_000);
    const contenders = Array.from({ length: 6 }, () => otherProcess());
    const answers = await Promise.all(contenders.map((contender) => contender.said));
    expect(answers.filter((answer) => answer === 'held')).to.have.lengthOf(1);
    expect(answers.filter((answer) => answer === 'refused')).to.have.lengthOf(5);
  });

  it('creates the books file\'s folder when it does not exist yet', () => {
    acquireServerLock(join(dir, 'new', 'folder', 'books.sqlite'))();
  });

  it('startServer refuses a books file another server serves', async () => {
    const { said } = otherProcess();
    expect(await said).to.equal('held');
    const config = loadConfig({}, { db: books, port: 0, host: '127.0.0.1', logLevel: 'silent' });
    let refused: unknown;
    try {
      await startServer(config, { log: createLogger('silent') });
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(ServerLockError);
  });

  it('startServer holds the lock while it serves and gives it back on close', async () => {
    const config = loadConfig({}, { db: books, port: 0, host: '127.0.0.1', logLevel: 'silent' });
    const server = await startServer(config, { log: createLogger('silent') });
    expect(() => acquireServerLock(books)).to.throw(ServerLockError);
    await server.close();
    acquireServerLock(books)();
  });
});
