#!/usr/bin/env node
// The installed command runs the compiled CLI; `npm ci` builds it through the prepare script.
// The Node.js check comes before the CLI is loaded: on an older Node the SQLite driver can
// crash the process as it loads, with no word of why.
import { readFileSync } from 'node:fs';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const needed = engines.node.replace(/^>=\s*/, '');
if (isOlder(process.versions.node, needed)) {
  console.error(`daybook: needs Node.js ${needed} or newer; this is Node.js ${process.versions.node}`);
  process.exit(1);
}
const { main } = await import('../dist/src/cli/main.js');
process.exitCode = await main(process.argv);

/** Whether dotted version `running` comes before `wanted` (missing parts count as 0). */
function isOlder(running, wanted) {
  const a = running.split('.').map(Number);
  const b = wanted.split('.').map(Number);
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    if ((a[index] ?? 0) !== (b[index] ?? 0)) return (a[index] ?? 0) < (b[index] ?? 0);
  }
  return false;
}
