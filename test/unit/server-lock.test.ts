import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { acquireServerLock, lockPath, ServerLockError } from '../../src/db/server-lock.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';

/** One server per books file: the lock beside it, taken over only from an owner that is gone. */
describe('the server lock (one server per books file)', () => {
  let dir: string;
  let books: string;
  let other: ChildProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-lock-'));
    books = join(dir, 'books.sqlite');
  });
  afterEach(() => {
    other?.kill('SIGKILL');
    other = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** A lock file as another process would have written it. */
  const lockedBy = (pid: number, bootId: string | null = currentBootId()) => writeFileSync(lockPath(books), JSON.stringify({ pid, bootId }));
  const liveProcess = (): number => {
    other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    return other.pid!;
  };

  it('takes a free lock, records this process, and removes the file on release', () => {
    const release = acquireServerLock(books);
    expect(JSON.parse(readFileSync(lockPath(books), 'utf8')).pid).to.equal(process.pid);
    release();
    expect(existsSync(lockPath(books))).to.equal(false);
  });

  it('creates the books file\'s folder when it does not exist yet', () => {
    const nested = join(dir, 'new', 'folder', 'books.sqlite');
    acquireServerLock(nested)();
  });

  it('refuses while another live process holds the lock, naming it', () => {
    const pid = liveProcess();
    lockedBy(pid);
    expect(() => acquireServerLock(books)).to.throw(ServerLockError, `another daybook server (process ${pid}) is serving`);
    expect(JSON.parse(readFileSync(lockPath(books), 'utf8')).pid).to.equal(pid);
  });

  it('takes over the lock of a process that is gone (killed without cleaning up)', async () => {
    const pid = liveProcess();
    lockedBy(pid);
    const exited = new Promise((resolve) => other!.once('exit', resolve));
    other!.kill('SIGKILL');
    await exited;
    acquireServerLock(books)();
  });

  it('takes over a lock written before a reboot, even if its process id is in use again', () => {
    lockedBy(liveProcess(), 'another-boot');
    acquireServerLock(books)();
  });

  it('takes over a lock file it cannot read (its owner died while writing it)', () => {
    writeFileSync(lockPath(books), '{"pi');
    acquireServerLock(books)();
  });

  it('startServer refuses a books file another server serves, and leaves its lock alone', async () => {
    const pid = liveProcess();
    lockedBy(pid);
    const config = loadConfig({}, { db: books, port: 0, host: '127.0.0.1', logLevel: 'silent' });
    let refused: unknown;
    try {
      await startServer(config, { log: createLogger('silent') });
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(ServerLockError);
    expect(JSON.parse(readFileSync(lockPath(books), 'utf8')).pid).to.equal(pid);
  });

  it('startServer takes the lock and gives it back on close', async () => {
    const config = loadConfig({}, { db: books, port: 0, host: '127.0.0.1', logLevel: 'silent' });
    const server = await startServer(config, { log: createLogger('silent') });
    expect(existsSync(lockPath(books))).to.equal(true);
    await server.close();
    expect(existsSync(lockPath(books))).to.equal(false);
  });
});

function currentBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}
