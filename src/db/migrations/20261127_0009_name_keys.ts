import type { Knex } from 'knex';

/**
 * Name keys that compare names as they read: every customer's and vendor's `name_key` is
 * recomputed in the form src/names.ts `nameKey` gives from now on (NFKC, invisible characters
 * dropped, white space runs as one space and trimmed, then case-folded).
 *
 * Customers are matched by the key (POST /customers), so customers kept apart until now may
 * now compare equal: "Acme" and "Acme\u00a0" (a no-break space), "ACME" and "ＡＣＭＥ". Nothing
 * is merged, renamed or deleted: each keeps its id, its invoices and the same key (the key has
 * no UNIQUE constraint, and POST /customers prefers the customer whose name is exactly the one
 * sent, then the oldest, so each stays reachable). They are listed in one log line on stderr
 * for the operator to tidy up (archive the copies). Vendors are matched by their exact name;
 * their keys only order and search them, and are recomputed so a search finds them the same
 * way.
 */

export const MIGRATION_NAME = '20261127_0009_name_keys';

/** How many groups of look-alike customers the log line lists; the count says how many more. */
const LISTED_GROUPS = 100;

/**
 * src/names.ts nameKey as this migration ran, frozen here: a later change to the folding needs a
 * migration of its own.
 */
export function nameKey(name: string): string {
  const reads = name
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .replace(/[\s\u2800]+/gu, ' ')
    .trim();
  return reads
    .normalize('NFC')
    .toLocaleUpperCase('en-US')
    .toLocaleLowerCase('en-US')
    .replace(/ς/g, 'σ')
    .normalize('NFC')
    .replace(/ß/g, 'ss')
    .normalize('NFKC');
}

interface NamedRow {
  id: string;
  tenant_id: string;
  name: string;
  name_key: string;
}

export interface LookAlike {
  id: string;
  name: string;
}

/** Recomputes every key of `table`, writing only those that change; returns the rows with their new keys. */
async function rekey(knex: Knex, table: 'customers' | 'vendors'): Promise<NamedRow[]> {
  const rows = (await knex.raw(`SELECT id, tenant_id, name, name_key FROM ${table} ORDER BY tenant_id, created_at, id`)) as NamedRow[];
  const rekeyed: NamedRow[] = [];
  for (const row of rows) {
    const key = nameKey(row.name);
    if (key !== row.name_key) await knex.raw(`UPDATE ${table} SET name_key = ? WHERE id = ?`, [key, row.id]);
    rekeyed.push({ ...row, name_key: key });
  }
  return rekeyed;
}

/** Customers of one account sharing a key, two or more to a group, oldest first (rows come in that order). */
export function lookAlikeGroups(customers: readonly NamedRow[]): LookAlike[][] {
  const byKey = new Map<string, LookAlike[]>();
  for (const row of customers) {
    const group = `${row.tenant_id}\u0000${row.name_key}`;
    byKey.set(group, [...(byKey.get(group) ?? []), { id: row.id, name: row.name }]);
  }
  return [...byKey.values()].filter((group) => group.length > 1);
}

/** The log line, JSON as the server's log lines are: a warning naming each group of look-alike customers. */
export function lookAlikeLine(groups: readonly LookAlike[][], time: string): string {
  return `${JSON.stringify({
    level: 40,
    time,
    migration: MIGRATION_NAME,
    msg: 'customers whose names now compare equal: each keeps its id, nothing was merged; archive the copies you do not want',
    groups: groups.length,
    customers: groups.slice(0, LISTED_GROUPS),
    ...(groups.length > LISTED_GROUPS ? { notListed: groups.length - LISTED_GROUPS } : {}),
  })}\n`;
}

export async function up(knex: Knex): Promise<void> {
  const customers = await rekey(knex, 'customers');
  await rekey(knex, 'vendors');
  const groups = lookAlikeGroups(customers);
  if (groups.length > 0) process.stderr.write(lookAlikeLine(groups, new Date().toISOString()));
}

export async function down(): Promise<void> {
  throw new Error('migrations are not rolled back; restore a backup instead');
}
