import { createSignInLink, endSession, type ConsoleSession, revokeSessions, startSession } from '../../store/console-sessions.js';
import { defineCommand } from '../door.js';

/** The owner's console: sign-in links, sessions begun, ended and revoked. */

/** `daybook console link`: a one-time sign-in link for an account's Owner. */
export const createSignInLinkCommand = defineCommand({
  name: 'console.link',
  scope: (input: { tenantId: string; minutes: number }) => ({ account: input.tenantId }),
  run: ({ db, clock, actor }, input) => createSignInLink(db, clock, actor, input.tenantId, input.minutes),
});

/**
 * The sign-in button: uses the link up and starts a session. The link is the credential, so
 * the writer is the operator's reach and the session to be (its id made beforehand, so the
 * audit row names it); a link that cannot be used writes nothing.
 */
export const startSessionCommand = defineCommand({
  name: 'console.sign_in',
  scope: () => ({ installation: true }),
  run: ({ db, clock }, input: { token: string; sessionId: string; userAgent: string | undefined }) => startSession(db, clock, input.token, input.sessionId, input.userAgent),
  leavesNoRowWhen: (result) => 'problem' in result,
});

export const endSessionCommand = defineCommand({
  name: 'console.sign_out',
  scope: (input: ConsoleSession) => ({ account: input.tenantId }),
  run: ({ db, clock }, input) => endSession(db, clock, input),
});

/** `daybook console revoke`: one session, or every live one of the account. */
export const revokeSessionsCommand = defineCommand({
  name: 'console.revoke',
  scope: (input: { tenantId: string; sessionId?: string }) => ({ account: input.tenantId }),
  run: ({ db, clock, actor }, input) => revokeSessions(db, clock, actor, input.tenantId, input.sessionId),
  leavesNoRowWhen: (ended) => ended.length === 0,
});
