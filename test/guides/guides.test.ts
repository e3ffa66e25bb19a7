import { expect } from 'chai';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../../src/paths.js';
import { type BlockRun, FAILED_MARK, type GuideBlock, guideBlocks, problemOf } from '../support/guides.js';
import { freePort } from '../support/free-port.js';

/**
 * The guides run as written. Each guide's shell blocks are pasted, in order, into one bash
 * (so a variable one block sets, the next uses), in a scratch folder, against fresh demo books
 * the way `npm run demo` makes them, on the demo's fixed day (--clock). A block must exit 0,
 * find every command, hold no `<…>` placeholder and answer no error the page does not show;
 * where the page shows a sample answer right after the block, the answer must have its shape
 * and its figures (ids, keys, pay links and times aside). A failure names the file and line.
 *
 * Blocks not meant to run here carry the visible marker `_Not run by the guide tests: why._`
 * on the line above them (a deployment's files, the README's container lines, which the image
 * check runs). The runner builds first: `daybook` runs dist/.
 */

/** The day the demo books are made for; the guides' dates are this day's. */
const GUIDES_DAY = '2026-11-20';

/**
 * Guides not yet made runnable (issue "Every command in the guides runs as written"). Every
 * other guide with a shell block runs, a new one included.
 */
const NOT_YET: readonly string[] = [
];

const BLOCK_SECONDS = 60;

interface Demo {
  child: ChildProcess;
  port: number;
  /** The line the demo prints for a reader's shell: the `daybook` command, its books, KEY, H and API. */
  shell: string;
}

async function startDemo(folder: string): Promise<Demo> {
  // A port of its own, so the demo's pay links and evidence links name it (with --port 0 they
  // would name the default 3000); the answers are read back as the page's port 3000.
  const port = await freePort();
  const child = spawn(process.execPath, [join(projectRoot, 'bin/daybook.js'), '--json', 'demo', '--port', String(port), '--clock', GUIDES_DAY], {
    cwd: folder,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DAYBOOK_LOG_LEVEL: 'warn', DAYBOOK_DB: '' },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const [line] = (await Promise.race([
    createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next().then((next) => [next.value as string]),
    new Promise((_resolve, reject) => child.once('exit', (code) => reject(new Error(`the demo exited (${String(code)}) before it was ready: ${stderr}`)))),
  ])) as [string];
  if (line === undefined) throw new Error(`the demo printed nothing before it ended: ${stderr}`);
  const printed = JSON.parse(line) as { shell: string };
  return { child, port, shell: printed.shell };
}


/**
 * Pastes `blocks` into one bash, in order, and returns each one's exit status and output. The
 * page's address (port 3000) becomes the demo's, and the demo's port in the answers 3000 again.
 */
function runBlocks(blocks: readonly GuideBlock[], demo: Demo, folder: string): BlockRun[] {
  const separator = '\u001eDAYBOOK-GUIDE';
  const script = [
    // Standard error beside standard output, in order, so each block's messages stay with it.
    'exec 2>&1',
    // Any command that fails, not only a block's last, is a failure of its block.
    `trap 'printf "\\n${FAILED_MARK} %s (exit %d)\\n" "$BASH_COMMAND" "$?"' ERR`,
    demo.shell,
    ...blocks.map((block, index) => [`printf '\\n${separator} %d\\n' ${index}`, atPort(block.code, demo.port), `printf '\\n${separator}-STATUS %d %d\\n' ${index} "$?"`].join('\n')),
  ].join('\n');
  const ran = spawnSync('bash', ['-c', script], { cwd: folder, encoding: 'utf8', timeout: BLOCK_SECONDS * 1000 * blocks.length, env: { ...process.env, DAYBOOK_DB: '', LANG: process.env['LANG'] || 'C.UTF-8' } });
  const text = `${ran.stdout}${ran.stderr}`.replaceAll(`127.0.0.1:${demo.port}`, '127.0.0.1:3000').replaceAll(`localhost:${demo.port}`, 'localhost:3000');
  return blocks.map((_block, index) => {
    const start = text.indexOf(`${separator} ${index}\n`);
    const end = text.indexOf(`${separator}-STATUS ${index} `);
    if (start === -1 || end === -1) return { status: -1, output: text.slice(start === -1 ? 0 : start) };
    const status = Number(/^(\d+)/.exec(text.slice(end + `${separator}-STATUS ${index} `.length))?.[1] ?? -1);
    return { status, output: text.slice(start + separator.length + String(index).length + 2, end).trim() };
  });
}

function atPort(code: string, port: number): string {
  return code.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`).replaceAll('localhost:3000', `127.0.0.1:${port}`);
}

describe('the guides run as written (README.md, docs/)', function () {
  this.timeout(600_000);
  const guidesOnDisk = ['README.md', ...readdirSync(join(projectRoot, 'docs')).map((name) => `docs/${name}`)].filter(
    (file) => file.endsWith('.md') && guideBlocks(join(projectRoot, file), file).length > 0,
  );

  // GUIDES=docs/a.md,docs/b.md runs only those (while working on a guide).
  const only = process.env['GUIDES']?.split(',').filter(Boolean);
  const runnable = guidesOnDisk.filter((file) => !NOT_YET.includes(file) && (!only || only.includes(file)));

  it('lists as not yet runnable only guides that exist and have shell blocks', () => {
    expect(NOT_YET.filter((file) => !guidesOnDisk.includes(file))).to.deep.equal([]);
  });

  describe('each runnable guide, on fresh demo books of its own', () => {
    before(function () {
      if (runnable.length === 0) return;
      const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, encoding: 'utf8' });
      expect(built.status, built.stderr).to.equal(0);
    });

    for (const file of runnable) {
      it(`${file}: every block runs and answers what the page shows`, async () => {
        const scratch = mkdtempSync(join(tmpdir(), 'daybook-guides-'));
        mkdirSync(join(scratch, 'data'));
        const demo = await startDemo(scratch);
        try {
          const blocks = guideBlocks(join(projectRoot, file), file).filter((block) => block.notRun === null);
          const runs = runBlocks(blocks, demo, scratch);
          const problems = blocks.flatMap((block, index) => {
            const problem = problemOf(block, runs[index]!);
            return problem ? [`${block.file}:${block.line}: ${problem}`] : [];
          });
          expect(problems, problems.join('\n\n')).to.deep.equal([]);
          process.stdout.write(`      ${file}: ${blocks.length} blocks run\n`);
        } finally {
          demo.child.kill('SIGTERM');
          rmSync(scratch, { recursive: true, force: true });
        }
      });
    }
  });
});
