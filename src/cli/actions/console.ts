import { loadConfig } from '../../config.js';
import { createSignInLinkCommand, revokeSessionsCommand } from '../../door/commands/console.js';
import { findSession, listSessions } from '../../store/console-sessions.js';
import { SIGN_IN_DEFAULT_MINUTES } from '../../store/sign-in-minutes.js';
import { type CommandContext, withBooks, writeAsCli } from '../context.js';
import { UsageError } from '../errors.js';
import { formatTable } from '../output.js';

/** The owner's console address a sign-in token opens. */
export function signInUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/console/sign-in/${token}`;
}

export async function link(options: { account: string; minutes?: number }, context: CommandContext): Promise<void> {
  const minutes = options.minutes ?? SIGN_IN_DEFAULT_MINUTES;
  const { siteUrl } = loadConfig(context.io.env);
  const made = await withBooks(context, (db) => writeAsCli(db, context, createSignInLinkCommand, { tenantId: options.account, minutes }));
  const url = signInUrl(siteUrl, made.token);
  context.out.result({ url, expiresAt: made.expiresAt }, [
    `Sign-in link for the owner's console (works once, until ${made.expiresAt}):`,
    url,
    'Open it in the browser you will use; anyone holding it can sign in as the Owner until it is used or expires.',
  ]);
}

export async function sessions(options: { account: string }, context: CommandContext): Promise<void> {
  const found = await withBooks(context, (db) => listSessions(db, context.io.clock, options.account));
  const rows = found.map((session) => [session.id, session.state, session.createdAt, session.lastSeenAt, session.endedAt ?? session.expiresAt, session.userAgent ?? '']);
  const table = formatTable(['ID', 'STATE', 'STARTED', 'LAST SEEN', 'ENDED/EXPIRES', 'BROWSER'], rows);
  context.out.result({ sessions: found }, found.length === 0 ? ['No console sessions.'] : table);
}

export async function revoke(options: { session?: string; all?: boolean; account?: string }, context: CommandContext): Promise<void> {
  if ((options.session === undefined) === (options.all === undefined)) throw new UsageError('console revoke: give --session ID, or --all with --account ID');
  if (options.all && options.account === undefined) throw new UsageError('console revoke --all: give the account (--account ID)');
  const ended = await withBooks(context, (db) => {
    if (options.session === undefined) return writeAsCli(db, context, revokeSessionsCommand, { tenantId: options.account! });
    const session = findSession(db, options.session);
    if (session === undefined) throw new UsageError(`console revoke: no console session ${options.session}`);
    // A session named with another account's id would otherwise end nothing and say there was no live session.
    if (options.account !== undefined && options.account !== session.tenantId) {
      throw new UsageError(`console revoke: session ${session.id} is not one of account ${options.account}'s sessions`);
    }
    return writeAsCli(db, context, revokeSessionsCommand, { tenantId: session.tenantId, sessionId: session.id });
  });
  context.out.result({ ended }, [ended.length === 0 ? 'No live session to end.' : `Ended ${ended.length} console session(s): ${ended.join(', ')}; their next request is signed out.`]);
}
