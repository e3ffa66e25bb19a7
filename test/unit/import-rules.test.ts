import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * The import rules of src/ (.dependency-cruiser.cjs, docs/architecture.md): folders form
 * layers and import only downwards, and no files import each other in a loop, type-only
 * imports included. Checked by dependency-cruiser over the real tree, and over a small tree
 * that breaks each rule, so a rule that stopped biting would be seen.
 */

const CONFIG = join(projectRoot, '.dependency-cruiser.cjs');
const DEPCRUISE = join(projectRoot, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

/** The violations dependency-cruiser finds in `folder` of the tree at `root`, with the project's rules. */
function violationsIn(root: string, folder: string): Violation[] {
  // It exits non-zero when it finds a violation; the JSON on stdout says which, either way.
  const run = spawnSync(process.execPath, [DEPCRUISE, folder, '--config', CONFIG, '--output-type', 'json'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.stdout === '') throw new Error(`dependency-cruiser printed nothing: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

function describeViolation(violation: Violation): string {
  const loop = violation.cycle ? ` (${violation.cycle.map((step) => step.name).join(' -> ')})` : '';
  return `${violation.rule.name}: ${violation.from} -> ${violation.to}${loop}`;
}

describe('import rules (.dependency-cruiser.cjs)', function () {
  this.timeout(60_000);

  it('src/ imports only downwards between its layers, and has no import cycle, type-only ones included', () => {
    expect(violationsIn(projectRoot, 'src').map(describeViolation)).to.deep.equal([]);
  });

  describe('the rules bite', () => {
    let root: string;
    before(() => {
      root = mkdtempSync(join(tmpdir(), 'daybook-import-rules-'));
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      file('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
      file('package.json', JSON.stringify({ type: 'module' }));
      // The books reaching up into the request pipeline.
      file('src/http/context.ts', 'export const pipeline = 1;\n');
      file('src/books/ledger.ts', "import { pipeline } from '../http/context.js';\nexport const ledger = pipeline;\n");
      // Two records importing each other, one of them for a type only.
      file('src/store/audit.ts', "import type { Claim } from './idempotency.js';\nexport interface Row { claim: Claim }\n");
      file('src/store/idempotency.ts', "import type { Row } from './audit.js';\nexport interface Claim { row?: Row }\n");
      // Shipped code loading a test helper.
      file('test/support/db.ts', 'export const helper = 1;\n');
      file('src/db/connection.ts', "import { helper } from '../../test/support/db.js';\nexport const connection = helper;\n");
      // A downward import breaks nothing.
      file('src/api/v1/list.ts', "import { ledger } from '../../books/ledger.js';\nexport const list = ledger;\n");
    });
    after(() => rmSync(root, { recursive: true, force: true }));

    it('names an upward import, a type-only cycle and shipped code loading tests, and nothing else', () => {
      const found = violationsIn(root, 'src').map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`);
      expect(found.sort()).to.deep.equal(
        [
          'no-upward-from-books: src/books/ledger.ts -> src/http/context.ts',
          'no-circular: src/store/audit.ts -> src/store/idempotency.ts',
          'no-src-to-test-or-bench: src/db/connection.ts -> test/support/db.ts',
        ].sort(),
      );
    });
  });
});
