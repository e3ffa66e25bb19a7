import { createKeyCommand, revokeKeyCommand } from '../../door/commands/accounts.js';
import { type ApiKeyInfo, listKeys } from '../../books/keys.js';
import { todayUtc } from '../../clock.js';
import { type AccessFlag, accessFromFlag, accessLabel } from '../args.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';
import { formatTable, inSpecTerms } from '../output.js';

/** A key as the CLI shows it: never the key value, access spelled as on the command line. */
function presentKey(key: ApiKeyInfo): Record<string, unknown> {
  return { ...inSpecTerms(key), access: accessLabel(key.access) };
}

function describeBusinesses(key: ApiKeyInfo): string {
  return key.businessIds === null ? 'all' : key.businessIds.join(',');
}

interface CreateOptions {
  account: string;
  name: string;
  access: AccessFlag;
  business?: string[];
  expires?: string;
}

export async function create(options: CreateOptions, context: CommandContext): Promise<void> {
  const key = await withBooks(context, (db) =>
    writeAsCli(db, context, createKeyCommand, {
      tenantId: options.account,
      name: options.name,
      access: accessFromFlag(options.access),
      businessIds: options.business ?? [],
      expiresOn: options.expires ?? null,
    }),
  );
  if (key.alreadyExpired) {
    context.out.warn(`the key is already expired (it worked through ${key.expiresOn}; today is ${todayUtc(context.io.clock)}): it exists but cannot authenticate`);
  }
  context.out.result({ id: key.id, key: key.key, ...presentKey(key), alreadyExpired: key.alreadyExpired }, [
    `Key created: ${key.name} (${accessLabel(key.access)}, businesses: ${describeBusinesses(key)}, expires: ${key.expiresOn ?? 'never'})`,
    `id: ${key.id}`,
    key.key,
    'This key is shown once and cannot be recovered: store it now. If it is lost, revoke it and create another.',
  ]);
}

export async function list(options: { account: string }, context: CommandContext): Promise<void> {
  const keys = await withBooks(context, (db) => listKeys(db, options.account));
  const rows = keys.map((key) => [
    key.id,
    key.name,
    accessLabel(key.access),
    describeBusinesses(key),
    key.expiresOn ?? 'never',
    key.revokedAt ?? 'no',
  ]);
  const table = formatTable(['ID', 'NAME', 'ACCESS', 'BUSINESSES', 'EXPIRES', 'REVOKED'], rows);
  context.out.result({ keys: keys.map(presentKey) }, keys.length === 0 ? ['No keys.'] : table);
}

export async function revoke(options: { id: string }, context: CommandContext): Promise<void> {
  const key = await withBooks(context, (db) => writeAsCli(db, context, revokeKeyCommand, { id: options.id }));
  const line = key.alreadyRevoked
    ? `Key ${key.id} (${key.name}) was already revoked at ${key.revokedAt}.`
    : `Key ${key.id} (${key.name}) revoked at ${key.revokedAt}; it stops working on the next request.`;
  context.out.result({ ...presentKey(key), alreadyRevoked: key.alreadyRevoked }, [line]);
}

