import { join, resolve } from 'node:path';
import { projectRoot } from '../paths.js';

// Values that both a command's help and its action use, kept apart from the actions so that
// declaring the commands loads none of them.

/** Demo books live in their own file, recreated on every run; never the real books. */
export const DEMO_DB_PATH = './data/demo.sqlite';
export const DEMO_HOST = '127.0.0.1';
export const DEMO_PORT = 3000;

/**
 * One line to paste into another shell, which the guides in docs/ start from: `daybook` runs
 * this install's command on the demo's books, and KEY, H and API are set for curl.
 */
export function demoShellLine(booksPath: string, key: string, url: string): string {
  const command = join(projectRoot, 'bin/daybook.js');
  return `daybook() { node ${shellQuoted(command)} "$@"; }; export DAYBOOK_DB=${shellQuoted(resolve(booksPath))} KEY=${shellQuoted(key)} API=${shellQuoted(`${url}/api/v1`)}; H="Authorization: Bearer $KEY"`;
}

function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The most bad rows `import bank` names on stderr; the rest are counted in one more line. */
export const MAX_PROBLEM_LINES = 50;
