import type { Knex } from 'knex';
import * as initial from './20261122_0001_initial.js';
import * as tenants from './20261123_0002_tenants.js';

/**
 * Every migration, in order. Listed explicitly (not read from a folder) so the same list
 * runs from the TypeScript sources and from the compiled build. knex refuses to run when the
 * recorded history names a migration this list does not have.
 */
export const migrations: { name: string; module: Pick<Knex.Migration, 'up' | 'down'> }[] = [
  { name: '20261122_0001_initial', module: initial },
  { name: '20261123_0002_tenants', module: tenants },
];
