import { expect } from 'chai';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { freshDb, type TempDb } from '../support/db.js';

/**
 * src/db/schema.sql is the readable schema every migration produces. This test fails whenever
 * the migrated schema and the snapshot differ, so a schema change cannot land without its
 * migration and a reviewed snapshot. Regenerate with UPDATE_SCHEMA_SNAPSHOT=1 npm test.
 */
const SNAPSHOT = join(projectRoot, 'src', 'db', 'schema.sql');

function dumpSchema(temp: TempDb): string {
  const rows = temp.db
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'knex_%' AND name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all() as { type: string; name: string; sql: string }[];
  return `${rows.map((row) => `${row.sql.replace(/[ \t]+$/gm, '')};`).join('\n\n')}\n`;
}

describe('schema snapshot (src/db/schema.sql)', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it('matches what the migrations produce', () => {
    const actual = dumpSchema(temp);
    if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') writeFileSync(SNAPSHOT, actual);
    expect(existsSync(SNAPSHOT), 'src/db/schema.sql is missing: run UPDATE_SCHEMA_SNAPSHOT=1 npm test').to.equal(true);
    expect(actual).to.equal(readFileSync(SNAPSHOT, 'utf8'), 'schema changed: add a migration and run UPDATE_SCHEMA_SNAPSHOT=1 npm test');
  });
});
