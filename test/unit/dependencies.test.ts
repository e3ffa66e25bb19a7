import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import { projectRoot } from '../../src/paths.js';

/**
 * src/http/rate-limit.ts replaces private methods of rate-limiter-flexible's SQLite store (to
 * read time from our clock and prepare statements once). A private method may change in any
 * release, so the library is pinned to one exact version, and the methods we replace must exist.
 */
describe('rate-limiter-flexible (its private methods are replaced)', () => {
  const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { version?: string; dependencies?: Record<string, string> };

  it('is pinned to an exact version in package.json, the one installed', () => {
    const wanted = readJson(join(projectRoot, 'package.json')).dependencies?.['rate-limiter-flexible'];
    expect(wanted, 'package.json must pin an exact version').to.match(/^[0-9]+\.[0-9]+\.[0-9]+$/);
    const installed = readJson(join(projectRoot, 'node_modules', 'rate-limiter-flexible', 'package.json')).version;
    expect(installed).to.equal(wanted);
  });

  it('still has the store methods Daybook replaces', () => {
    for (const name of ['_upsert', '_get', '_getRateLimiterRes']) {
      expect(typeof (RateLimiterSQLite.prototype as unknown as Record<string, unknown>)[name], name).to.equal('function');
    }
  });
});
