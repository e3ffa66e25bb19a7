import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * A command loads only what it runs: printing the help or setting a rate on books that are
 * current loads no migration tool, PDF maker, mailer, HTTP stack or card processor client.
 * Proved by the modules a real process loads, never by how long it takes.
 */

/** Packages that only some commands need; none of them may load for the light ones. */
const HEAVY = ['knex', 'pdfkit', 'nodemailer', 'koa', '@koa/router', 'stripe'];

/** Loaded first: records the URL of every module the process loads, and writes them out as it exits. */
const RECORDER = `
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.DAYBOOK_LOADED_FILE, loaded.join('\\n')));
`;

interface Run {
  code: number;
  stderr: string;
  /** The packages (node_modules/NAME) the process loaded. */
  packages: Set<string>;
}

describe('what a command loads as it starts', function () {
  this.timeout(30_000);
  let dir: string;
  let books: string;
  let runs = 0;

  /** Runs the CLI from sources in its own process, recording the modules it loads. */
  function runRecorded(args: string[]): Promise<Run> {
    const file = join(dir, `loaded-${(runs += 1)}.txt`);
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(RECORDER)}`, '--import', 'tsx', join(projectRoot, 'src/cli/run.ts'), ...args],
        { cwd: projectRoot, env: { ...process.env, DAYBOOK_DB: '', DAYBOOK_LOADED_FILE: file } },
        (error, _stdout, stderr) => {
          const urls = readFileSync(file, 'utf8').split('\n');
          const packages = new Set(urls.flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? []));
          resolve({ code: error ? Number(error.code) : 0, stderr, packages });
        },
      );
    });
  }

  function heavyIn(run: Run): string[] {
    return HEAVY.filter((name) => run.packages.has(name));
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-loading-'));
    books = join(dir, 'books.sqlite');
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('migrating new books loads knex (the record sees a package that loads)', async () => {
    const run = await runRecorded(['--db', books, 'migrate']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.packages.has('knex')).to.equal(true);
    expect(run.packages.has('commander')).to.equal(true);
  });

  it('--help loads none of the heavy packages', async () => {
    const run = await runRecorded(['--help']);
    expect(run.code, run.stderr).to.equal(0);
    expect(heavyIn(run)).to.deep.equal([]);
  });

  it('a command\'s --help loads none of them either', async () => {
    const run = await runRecorded(['invoice', 'void', '--help']);
    expect(run.code, run.stderr).to.equal(0);
    expect(heavyIn(run)).to.deep.equal([]);
  });

  it('rate set on books that are current loads none of them, knex included', async () => {
    const run = await runRecorded(['--db', books, 'rate', 'set', '--currency', 'EUR', '--date', '2026-11-20', '--usd-per-unit', '1.08']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.packages.has('better-sqlite3')).to.equal(true);
    expect(heavyIn(run)).to.deep.equal([]);
  });

  it('migrate on books that are current does not load knex', async () => {
    const run = await runRecorded(['--db', books, 'migrate']);
    expect(run.code, run.stderr).to.equal(0);
    expect(heavyIn(run)).to.deep.equal([]);
  });
});
