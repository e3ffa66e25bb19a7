import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding package.json, whether running from src/ or from dist/src/. */
export const projectRoot: string = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

function findProjectRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
}

let version: string | undefined;

/** The version in package.json (the OpenAPI document's info.version). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
