import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { expectOneErrorLine } from './support.js';

interface Spawned {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from sources in its own process, as `node --import tsx src/cli/run.ts`. */
function spawnCli(args: string[]): Promise<Spawned> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), ...args],
      { cwd: projectRoot, env: { ...process.env, DAYBOOK_DB: '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe('daybook as a process', () => {
  it('exits 0 for --help and prints the usage', async () => {
    const result = await spawnCli(['--help']);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/^Usage: daybook /);
    expect(result.stderr).to.equal('');
  });

  it('the installed command on a Node.js older than engines.node stops with one line naming the version it needs', async () => {
    // The running Node reports itself as 20.19.0 before bin/daybook.js runs.
    const older = 'Object.defineProperty(process, "versions", { value: { ...process.versions, node: "20.19.0" } });';
    const result = await new Promise<Spawned>((resolve) => {
      execFile(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(older)}`, join(projectRoot, 'bin/daybook.js'), '--help'], { cwd: projectRoot }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
    expect(result.code).to.equal(1);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal('daybook: needs Node.js 24.11.0 or newer; this is Node.js 20.19.0\n');
  });

  it('exits 2 for a bad argument with one line on stderr', async () => {
    const result = await spawnCli(['account', 'create', '--name', 'x', '--plan', 'enormous']);
    expect(result.code).to.equal(2);
    expect(result.stdout).to.equal('');
    expectOneErrorLine(result.stderr);
  });

  describe('writing to standard output', () => {
    let dir: string;
    let db: string;
    let businessId: string;
    before(async function () {
      this.timeout(20_000);
      dir = mkdtempSync(join(tmpdir(), 'daybook-process-'));
      db = join(dir, 'books.sqlite');
      const account = JSON.parse((await spawnCli(['--db', db, '--json', 'account', 'create', '--name', 'Pipes Ltd'])).stdout) as { id: string };
      const business = await spawnCli(['--db', db, '--json', 'business', 'create', '--account', account.id, '--name', 'Pipe Works']);
      businessId = (JSON.parse(business.stdout) as { id: string }).id;
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    /** `daybook export ledger` in its own process, its stdout a pipe or an open file. */
    function spawnExport(stdout: 'pipe' | number) {
      return spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), '--db', db, 'export', 'ledger', '--business', businessId], {
        cwd: projectRoot,
        stdio: ['ignore', stdout, 'pipe'],
      });
    }

    async function ended(child: ReturnType<typeof spawnExport>): Promise<{ code: number | null; stderr: string }> {
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      return { code, stderr };
    }

    it('ends quietly with exit 0 when the reader has gone, without claiming to have exported', async () => {
      const child = spawnExport('pipe');
      // The reader goes before the export writes anything: the first write meets a closed pipe.
      child.stdout!.destroy();
      expect(await ended(child)).to.deep.equal({ code: 0, stderr: '' });
    });

    it('stops with exit 1 and one line saying why when the disk is full, without claiming to have exported', async function () {
      // Skipped only where the system has no /dev/full (Linux's device on which every write fails
      // with ENOSPC, as CI's Debian has): elsewhere a full disk cannot be made without root.
      if (!existsSync('/dev/full')) this.skip(); // reason: no /dev/full on this system (see above)
      const full = openSync('/dev/full', 'w');
      try {
        expect(await ended(spawnExport(full))).to.deep.equal({ code: 1, stderr: 'daybook: cannot write to standard output: the disk is full\n' });
      } finally {
        closeSync(full);
      }
    });
  });
});
