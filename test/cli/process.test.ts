import { expect } from 'chai';
import { execFile } from 'node:child_process';
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

  it('exits 2 for a bad argument with one line on stderr', async () => {
    const result = await spawnCli(['account', 'create', '--name', 'x', '--plan', 'enormous']);
    expect(result.code).to.equal(2);
    expect(result.stdout).to.equal('');
    expectOneErrorLine(result.stderr);
  });
});
