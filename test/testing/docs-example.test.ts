import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * The mocha example of docs/testing-with-daybook.md, run the way a reader would run it: the
 * block copied as it is into a project of its own, whose node_modules/daybook is this package
 * (its built dist/, as an installed copy would be), under mocha in a child process with none
 * of Daybook's own test settings. A doc example that stops working fails here.
 */

const DOC = join(projectRoot, 'docs/testing-with-daybook.md');

/** The ```js block under the "## mocha" heading. */
function mochaExample(): string {
  const doc = readFileSync(DOC, 'utf8');
  const section = /^## mocha\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(doc)?.[1];
  if (section === undefined) throw new Error(`${DOC} has no "## mocha" section`);
  const code = /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1];
  if (code === undefined) throw new Error(`the "## mocha" section of ${DOC} has no \`\`\`js block`);
  return code;
}

/** The TypeScript sources under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The example imports the package as installed, that is the build in dist/ (`npm ci` makes it
 * through the prepare script). A build missing, or older than a source it is made from, would
 * test yesterday's code: refuse, saying so, rather than build here behind the run's back.
 */
function checkBuild(): void {
  const stale = ['src'].flatMap((folder) => sources(join(projectRoot, folder))).filter((source) => {
    const built = join(projectRoot, 'dist', relative(projectRoot, source).replace(/\.ts$/, '.js'));
    return !existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs;
  });
  if (stale.length > 0) {
    const names = stale.slice(0, 5).map((source) => relative(projectRoot, source));
    throw new Error(
      `dist/ is missing or older than ${stale.length} source file(s) (${names.join(', ')}${stale.length > 5 ? ', …' : ''}): run \`npm run build\` first; the docs example runs against the built package`,
    );
  }
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs Daybook's own mocha in `cwd` on `file`, without any config file; null code: killed after `limitMs`. */
function runMocha(cwd: string, file: string, limitMs: number): Promise<Run> {
  const mocha = join(projectRoot, 'node_modules/.bin/mocha');
  const child = spawn(process.execPath, [mocha, '--no-config', '--no-package', '--no-color', '--reporter', 'spec', file], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('docs/testing-with-daybook.md: the mocha example', function () {
  this.timeout(90_000);
  let dir: string | undefined;
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes as written, against the built package, and mocha exits by itself afterwards', async () => {
    const example = mochaExample();
    const tests = example.match(/^\s*it\(/gm)?.length ?? 0;
    expect(tests, 'it() calls in the example').to.be.greaterThan(0);
    checkBuild();

    // A reader's project: an ES module package with daybook in node_modules (a link to this
    // package, so `daybook/testing` resolves through package.json's exports to dist/).
    dir = mkdtempSync(join(tmpdir(), 'daybook-docs-example-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'docs-example', private: true, type: 'module' }));
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(projectRoot, join(dir, 'node_modules/daybook'), 'junction');
    writeFileSync(join(dir, 'invoicing.test.js'), example);

    const run = await runMocha(dir, 'invoicing.test.js', 60_000);
    const report = `mocha's output:\n${run.output}`;
    expect(run.code, `exit code (null: still running 60 s later, killed); ${report}`).to.equal(0);
    expect(run.output, report).to.match(new RegExp(`^\\s*${tests} passing`, 'm'));
    expect(run.output, report).not.to.match(/failing|pending/);
  });
});
