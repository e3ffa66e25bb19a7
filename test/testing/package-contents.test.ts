import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/paths.js';

const run = promisify(execFile);

/**
 * What a project that installs Daybook gets: `daybook/testing` and `npx daybook` run from the
 * built dist/, so the package must carry it (git ignores it) along with the settings file the
 * server reads at run time, and need not carry the tests or the benchmarks.
 */
describe('the published package', function () {
  this.timeout(60_000);

  it('carries the built code, the command, the default settings and the migrations; not tests or benchmarks', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: projectRoot });
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path);
    expect(files).to.include.members(['package.json', 'bin/daybook.js', 'config/default.json', 'dist/src/testing/index.js', 'dist/src/testing/index.d.ts', 'dist/src/cli/main.js']);
    expect(files.some((path) => path.startsWith('dist/src/db/migrations/') && path.endsWith('.js')), 'compiled migrations').to.equal(true);
    expect(files.filter((path) => /^(test|bench|\.ci|test-output)\//.test(path))).to.deep.equal([]);
  });
});
