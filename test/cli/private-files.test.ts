import { expect } from 'chai';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { CliHarness, expectOk } from './support.js';

/**
 * The books, the files beside them, backups and exports are the owner's alone (0600, folders
 * 0700) whatever the umask, and what existed before keeps its permissions, with a warning. Each
 * command runs in a process of its own under umask 022, the umask most systems give a service:
 * in-process runs would take the test runner's umask.
 */

const RUN = join(projectRoot, 'src/cli/run.ts');
/** Quiet apart from warnings, and no job on a schedule unless a test sets one. */
const QUIET_ENV: NodeJS.ProcessEnv = { DAYBOOK_LOG_LEVEL: 'warn', DAYBOOK_JOB_RATES: 'off', DAYBOOK_JOB_BACKUP: 'off' };
const UNDER_UMASK_022 = ['/bin/sh', '-c', 'umask 022 && exec "$@"', 'sh', process.execPath, '--import', 'tsx', RUN];
const SCHEDULED_BACKUP = /^daybook-[0-9]{8}-[0-9]{6}\.sqlite$/;

interface Spawned {
  code: number;
  stdout: string;
  stderr: string;
}

/** `daybook ARGS` in its own process under umask 022. */
function daybook(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Spawned> {
  return new Promise((resolve) => {
    const options = { cwd: projectRoot, env: { ...process.env, ...QUIET_ENV, ...env } };
    execFile(UNDER_UMASK_022[0]!, [...UNDER_UMASK_022.slice(1), ...args], options, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

interface Serving {
  child: ChildProcess;
  /** Stops it with SIGTERM and resolves with everything it wrote to stderr. */
  stop(): Promise<string>;
}

/** `daybook --db BOOKS --json serve` under umask 022; resolves once it listens. */
function serve(books: string, env: NodeJS.ProcessEnv = {}): Promise<Serving> {
  const child = spawn(UNDER_UMASK_022[0]!, [...UNDER_UMASK_022.slice(1), '--db', books, '--json', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: projectRoot,
    env: { ...process.env, ...QUIET_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    return stderr;
  };
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.endsWith('\n')) resolve({ child, stop });
    });
    void exited.then(() => reject(new Error(`the server ended before it listened; stderr: ${stderr}`)));
  });
}

/** The permission bits of `path` as `ls` would print them in octal, e.g. '0600'. */
function modeOf(path: string): string {
  return `0${(statSync(path).mode & 0o777).toString(8)}`;
}

/** Every entry of `folder` with its mode. */
function modesIn(folder: string): Record<string, string> {
  return Object.fromEntries(readdirSync(folder).map((name) => [name, modeOf(join(folder, name))]));
}

/** A folder made by hand the way mkdir makes it under umask 022, as /srv/backups would be. */
function openFolder(path: string): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, 0o755);
  return path;
}

/** The messages of the JSON log lines at warn level in `stderr`. */
function logWarnings(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 40)
    .map((line) => line.msg);
}

/** The one line Daybook gives for a file or folder it leaves open to others. */
function openWarning(what: string, path: string, mode: string, fix: string): string {
  return (
    `${what} ${path} is open to group or others (mode ${mode}); the books and their backups hold the pay-link secret. ` +
    `Daybook does not change permissions it did not set: close it with chmod ${fix} ${path}`
  );
}

describe('private files under umask 022 (books, backups, exports)', function () {
  this.timeout(60_000);
  let harness: CliHarness;
  let businessId: string;
  beforeEach(async () => {
    harness = new CliHarness();
    businessId = await harness.createBusiness(await harness.createAccount());
  });
  afterEach(() => harness.cleanup());

  it('daybook migrate makes new books 0600 and the folders it creates 0700', async () => {
    const books = join(harness.dir, 'made', 'here', 'books.sqlite');
    const result = await daybook(['--db', books, 'migrate']);
    expectOk(result);
    expect(result.stderr, 'no warning about folders it made itself').to.equal('');
    expect(modeOf(join(harness.dir, 'made'))).to.equal('0700');
    expect(modesIn(join(harness.dir, 'made'))).to.deep.equal({ here: '0700' });
    expect(modesIn(join(harness.dir, 'made', 'here'))).to.deep.equal({ 'books.sqlite': '0600' });
  });

  it('daybook serve makes the books, their -wal and -shm, the counters and the lock 0600 in a 0700 folder', async () => {
    const folder = join(harness.dir, 'served');
    const server = await serve(join(folder, 'books.sqlite'), { DAYBOOK_BACKUP_DIR: join(harness.dir, 'backups') });
    let stderr: string;
    try {
      expect(modeOf(folder)).to.equal('0700');
      expect(modesIn(folder)).to.deep.equal({
        'books.sqlite': '0600',
        'books.sqlite-wal': '0600',
        'books.sqlite-shm': '0600',
        'books.counters.sqlite': '0600',
        'books.counters.sqlite-wal': '0600',
        'books.counters.sqlite-shm': '0600',
        'books.sqlite.lock': '0600',
        'books.sqlite.lock-journal': '0600',
      });
    } finally {
      stderr = await server.stop();
    }
    expect(logWarnings(stderr), 'no warning about files it made itself').to.deep.equal([]);
  });

  it('daybook backup --to writes a 0600 backup into a folder that is there, and --force keeps a stricter mode of the file it replaces', async () => {
    const shared = openFolder(join(harness.dir, 'offsite'));
    const to = join(shared, 'before-upgrade.sqlite');
    expectOk(await daybook(['--db', harness.dbPath, 'backup', '--to', to]));
    expect(modeOf(to)).to.equal('0600');
    chmodSync(to, 0o400);
    expectOk(await daybook(['--db', harness.dbPath, 'backup', '--to', to, '--force']));
    expect(modeOf(to), 'the replaced backup was 0400').to.equal('0400');
    expect(modeOf(shared), 'a folder that was there is left alone').to.equal('0755');
  });

  it('the daily backup job makes its folder 0700 and each backup 0600', async () => {
    const backups = join(harness.dir, 'data', 'backups');
    const result = await daybook(['--db', harness.dbPath, 'jobs', 'run', 'backup'], { DAYBOOK_BACKUP_DIR: backups });
    expectOk(result);
    expect(logWarnings(result.stderr)).to.deep.equal([]);
    expect(modeOf(join(harness.dir, 'data'))).to.equal('0700');
    expect(modeOf(backups)).to.equal('0700');
    const written = readdirSync(backups);
    expect(written).to.have.length(1);
    expect(written[0]).to.match(SCHEDULED_BACKUP);
    expect(modesIn(backups)).to.deep.equal({ [written[0]!]: '0600' });
  });

  it('daybook export ledger --to writes a 0600 journal', async () => {
    const to = join(openFolder(join(harness.dir, 'exports')), 'books.journal');
    expectOk(await daybook(['--db', harness.dbPath, 'export', 'ledger', '--business', businessId, '--to', to]));
    expect(modesIn(join(harness.dir, 'exports'))).to.deep.equal({ 'books.journal': '0600' });
  });

  it('daybook restore --yes over 0600 books leaves them 0600, from a backup that was copied around as 0644', async () => {
    const backup = join(harness.dir, 'copied.sqlite');
    expectOk(await harness.run(['backup', '--to', backup]));
    chmodSync(backup, 0o644);
    chmodSync(harness.dbPath, 0o600);
    const result = await daybook(['--db', harness.dbPath, 'restore', '--from', backup, '--yes']);
    expectOk(result);
    expect(modeOf(harness.dbPath)).to.equal('0600');
    expect(modeOf(backup), 'the backup restored from is left alone').to.equal('0644');
  });

  it('daybook restore into a new folder makes it 0700 and the books 0600, from a 0644 backup', async () => {
    const backup = join(harness.dir, 'copied.sqlite');
    expectOk(await harness.run(['backup', '--to', backup]));
    chmodSync(backup, 0o644);
    const books = join(harness.dir, 'restored', 'books.sqlite');
    expectOk(await daybook(['--db', books, 'restore', '--from', backup]));
    expect(modeOf(join(harness.dir, 'restored'))).to.equal('0700');
    expect(modesIn(join(harness.dir, 'restored'))).to.deep.equal({ 'books.sqlite': '0600', 'books.sqlite.lock': '0600' });
  });

  describe('a folder that was there already, open to others', () => {
    it('the backup job writes into it, leaves it 0755, and says so in one log line', async () => {
      const backups = openFolder(join(harness.dir, 'srv-backups'));
      const result = await daybook(['--db', harness.dbPath, 'jobs', 'run', 'backup'], { DAYBOOK_BACKUP_DIR: backups });
      expectOk(result);
      expect(modeOf(backups)).to.equal('0755');
      expect(Object.values(modesIn(backups))).to.deep.equal(['0600']);
      expect(logWarnings(result.stderr)).to.deep.equal([openWarning('the backup folder', backups, '0755', '700')]);
    });

    it('daybook migrate makes the books in it 0600, leaves it 0755, and says so in one stderr line', async () => {
      const folder = openFolder(join(harness.dir, 'srv'));
      const books = join(folder, 'books.sqlite');
      const result = await daybook(['--db', books, 'migrate']);
      expectOk(result);
      expect(modeOf(folder)).to.equal('0755');
      expect(modesIn(folder)).to.deep.equal({ 'books.sqlite': '0600' });
      expect(result.stderr).to.equal(`daybook: warning: ${openWarning('the books folder', folder, '0755', '700')}\n`);
    });
  });

  it('daybook serve warns at start when the books file or the backup folder is open to others, and changes neither', async () => {
    chmodSync(harness.dbPath, 0o644);
    const backups = openFolder(join(harness.dir, 'backups'));
    // A schedule that does not come round during the test: the folder counts because backups go there.
    const server = await serve(harness.dbPath, { DAYBOOK_BACKUP_DIR: backups, DAYBOOK_JOB_BACKUP: '15 2 * * *' });
    const stderr = await server.stop();
    expect(logWarnings(stderr)).to.deep.equal([
      openWarning('the books file', harness.dbPath, '0644', '600'),
      openWarning('the backup folder', backups, '0755', '700'),
    ]);
    expect(modeOf(harness.dbPath)).to.equal('0644');
    expect(modeOf(backups)).to.equal('0755');
  });
});
