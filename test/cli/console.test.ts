import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { inTransaction } from '../../src/db/connection.js';
import { all } from '../../src/db/statements.js';
import { osUserName } from '../../src/store/audit.js';
import { checkSignInLink, endSession, findLiveSession, type ListedSession, startSession, type StartedSession } from '../../src/store/console-sessions.js';
import { CLI_TEST_ENV, CLOCK_START, CliHarness, expectBadArguments, expectOk, UNKNOWN_ID } from './support.js';

/**
 * `daybook console`: the operator's side of the owner's console. `link` prints a one-time
 * sign-in link ({siteUrl}/console/sign-in/{token}), 15 minutes by default and at most a day;
 * `sessions` lists an account's sessions and what became of each; `revoke` ends one session, or
 * every live one of an account. Each write leaves its audit row under the admin command.
 */

const SITE_URL = loadConfig(CLI_TEST_ENV).siteUrl;
const LINK = new RegExp(`^${SITE_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/console/sign-in/([A-Za-z0-9_-]{43})$`);
const MINUTE = 60_000;

const at = (offsetMs: number) => new Date(Date.parse(CLOCK_START) + offsetMs).toISOString();

interface AuditRow {
  actor_type: string;
  actor_name: string;
  command: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  detail_json: string;
}

describe('daybook console: sign-in links and console sessions', () => {
  let cli: CliHarness;
  let accountId: string;
  beforeEach(async () => {
    cli = new CliHarness();
    accountId = await cli.createAccount();
  });
  afterEach(() => cli.cleanup());

  /** `console link --json`: the token of the printed link, and when it stops working. */
  async function makeLink(extra: string[] = []): Promise<{ token: string; expiresAt: string }> {
    const printed = await cli.json<{ url: string; expiresAt: string }>(['console', 'link', '--account', accountId, ...extra]);
    expect(Object.keys(printed).sort()).to.deep.equal(['expiresAt', 'url']);
    const token = LINK.exec(printed.url)?.[1];
    expect(token, printed.url).to.be.a('string');
    return { token: token!, expiresAt: printed.expiresAt };
  }

  /** Uses a sign-in link as the console's sign-in button does. */
  function useLink(token: string): StartedSession | { problem: string } {
    return cli.withDb((db) => inTransaction(db, () => startSession(db, cli.clock, token, randomUUID(), 'Test Browser/1.0')));
  }

  async function signedInSession(): Promise<StartedSession> {
    const started = useLink((await makeLink()).token);
    expect(started).to.not.have.property('problem');
    return started as StartedSession;
  }

  async function sessionStates(account = accountId): Promise<Record<string, ListedSession['state']>> {
    const { sessions } = await cli.json<{ sessions: ListedSession[] }>(['console', 'sessions', '--account', account]);
    return Object.fromEntries(sessions.map((session) => [session.id, session.state]));
  }

  function auditRows(action: string): AuditRow[] {
    return cli.withDb((db) =>
      all<AuditRow>(db, 'SELECT actor_type, actor_name, command, action, subject_type, subject_id, detail_json FROM audit_log WHERE tenant_id = ? AND action = ? ORDER BY id', accountId, action),
    );
  }

  describe('console link', () => {
    it('prints {siteUrl}/console/sign-in/{43 characters}, working for 15 minutes by default', async () => {
      const result = await cli.run(['console', 'link', '--account', accountId]);
      expectOk(result);
      expect(result.stderr).to.equal('');
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines).to.have.length(3);
      expect(lines[0]).to.equal(`Sign-in link for the owner's console (works once, until ${at(15 * MINUTE)}):`);
      expect(lines[1]).to.match(LINK);
      expect(lines[2]).to.match(/anyone holding it can sign in as the Owner/);

      const printed = await makeLink();
      expect(printed.expiresAt).to.equal(at(15 * MINUTE));
    });

    it('uses the site URL the server is configured with', async () => {
      const result = await cli.run(['--json', 'console', 'link', '--account', accountId], { env: { ...CLI_TEST_ENV, DAYBOOK_SITE_URL: 'https://books.example.com' } });
      expectOk(result);
      expect(JSON.parse(result.stdout).url).to.match(/^https:\/\/books\.example\.com\/console\/sign-in\/[A-Za-z0-9_-]{43}$/);
    });

    it('takes --minutes from 1 to 1440, and refuses 0, 1441 and what is not a number with exit 2', async () => {
      expect((await makeLink(['--minutes', '1'])).expiresAt).to.equal(at(MINUTE));
      expect((await makeLink(['--minutes', '1440'])).expiresAt).to.equal(at(1440 * MINUTE));
      const before = auditRows('console.link').length;
      for (const minutes of ['0', '1441', '-5', 'ten', '1.5']) {
        expectBadArguments(await cli.run(['console', 'link', '--account', accountId, '--minutes', minutes]), /--minutes.*Must be a whole number from 1 to 1440/);
      }
      // A refused command makes no link.
      expect(auditRows('console.link')).to.have.length(before);
    });

    it('refuses an account that does not exist, and a missing --account, with exit 2', async () => {
      expectBadArguments(await cli.run(['console', 'link', '--account', UNKNOWN_ID]), /^daybook: No such account\.\n$/);
      expectBadArguments(await cli.run(['console', 'link']), /--account/);
    });

    it('signs in once: the link is good until used, then used up', async () => {
      const { token, expiresAt } = await makeLink();
      // Opening it (the page before the button) uses nothing.
      expect(cli.withDb((db) => checkSignInLink(db, cli.clock, token))).to.deep.equal({ tenantId: accountId });
      expect(cli.withDb((db) => checkSignInLink(db, cli.clock, token))).to.deep.equal({ tenantId: accountId });
      const started = useLink(token) as StartedSession;
      expect(started.tenantId).to.equal(accountId);
      expect(cli.withDb((db) => findLiveSession(db, cli.clock, started.secret))).to.include({ id: started.id, tenantId: accountId });
      expect(useLink(token)).to.deep.equal({ problem: 'used' });
      expect(cli.withDb((db) => checkSignInLink(db, cli.clock, token))).to.deep.equal({ problem: 'used' });
      // The token is not stored: only its fingerprint.
      expect(cli.withDb((db) => JSON.stringify(all(db, 'SELECT * FROM console_sign_in_links')))).to.not.contain(token);
      expect(expiresAt).to.equal(at(15 * MINUTE));
    });

    it('stops working when it expires, unused', async () => {
      const { token } = await makeLink(['--minutes', '5']);
      cli.clock.advanceMs(5 * MINUTE);
      expect(useLink(token)).to.deep.equal({ problem: 'expired' });
    });

    it('leaves a console.link row under the admin command', async () => {
      const { expiresAt } = await makeLink(['--minutes', '30']);
      expect(auditRows('console.link')).to.deep.equal([
        {
          actor_type: 'cli',
          actor_name: osUserName(),
          command: 'daybook console link',
          action: 'console.link',
          subject_type: 'tenant',
          subject_id: accountId,
          detail_json: JSON.stringify({ expiresAt }),
        },
      ]);
    });
  });

  describe('console sessions', () => {
    it('says there are none yet', async () => {
      const result = await cli.run(['console', 'sessions', '--account', accountId]);
      expectOk(result);
      expect(result.stdout).to.equal('No console sessions.\n');
      expect(await cli.json(['console', 'sessions', '--account', accountId])).to.deep.equal({ sessions: [] });
    });

    it('lists each session as live, signed_out, revoked or expired, newest first', async () => {
      const idle = await signedInSession();
      // 12 hours without a request end the first session.
      cli.clock.advanceMs(12 * 60 * MINUTE + 1000);
      const live = await signedInSession();
      cli.clock.advanceMs(MINUTE);
      const signedOut = await signedInSession();
      cli.withDb((db) => inTransaction(db, () => endSession(db, cli.clock, findLiveSession(db, cli.clock, signedOut.secret)!)));
      cli.clock.advanceMs(MINUTE);
      const revoked = await signedInSession();
      expectOk(await cli.run(['console', 'revoke', '--session', revoked.id]));

      const { sessions } = await cli.json<{ sessions: ListedSession[] }>(['console', 'sessions', '--account', accountId]);
      expect(sessions.map((session) => [session.id, session.state])).to.deep.equal([
        [revoked.id, 'revoked'],
        [signedOut.id, 'signed_out'],
        [live.id, 'live'],
        [idle.id, 'expired'],
      ]);
      expect(sessions[0]).to.include({ tenantId: accountId, userAgent: 'Test Browser/1.0', endedAt: cli.clock.now().toISOString() });
      expect(sessions[2]).to.include({ endedAt: null, expiresAt: live.expiresAt });

      const table = await cli.run(['console', 'sessions', '--account', accountId]);
      expectOk(table);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).to.match(/^ID\s+STATE\s+STARTED\s+LAST SEEN\s+ENDED\/EXPIRES\s+BROWSER$/);
      expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 2))).to.deep.equal([
        [revoked.id, 'revoked'],
        [signedOut.id, 'signed_out'],
        [live.id, 'live'],
        [idle.id, 'expired'],
      ]);
    });

    it('lists only the account’s own sessions', async () => {
      const mine = await signedInSession();
      const otherAccount = await cli.createAccount();
      const other = await cli.json<{ url: string }>(['console', 'link', '--account', otherAccount]);
      const started = useLink(LINK.exec(other.url)![1]!) as StartedSession;
      expect(started.tenantId).to.equal(otherAccount);
      expect(await sessionStates()).to.deep.equal({ [mine.id]: 'live' });
      expect(await sessionStates(otherAccount)).to.deep.equal({ [started.id]: 'live' });
    });
  });

  describe('console revoke', () => {
    it('--session ends that session only: its cookie no longer signs in', async () => {
      const first = await signedInSession();
      const second = await signedInSession();
      const result = await cli.run(['console', 'revoke', '--session', first.id]);
      expectOk(result);
      expect(result.stdout).to.equal(`Ended 1 console session(s): ${first.id}; their next request is signed out.\n`);
      expect(cli.withDb((db) => findLiveSession(db, cli.clock, first.secret))).to.equal(undefined);
      expect(cli.withDb((db) => findLiveSession(db, cli.clock, second.secret))).to.not.equal(undefined);
      expect(await sessionStates()).to.deep.equal({ [first.id]: 'revoked', [second.id]: 'live' });
      // Again: nothing left to end, and no row written.
      expect(await cli.json(['console', 'revoke', '--session', first.id])).to.deep.equal({ ended: [] });
      expect(auditRows('console.revoke')).to.have.length(1);
    });

    it('--all --account ends every live session of the account and says how many', async () => {
      const sessions = [await signedInSession(), await signedInSession(), await signedInSession()];
      cli.withDb((db) => inTransaction(db, () => endSession(db, cli.clock, findLiveSession(db, cli.clock, sessions[2]!.secret)!)));
      const result = await cli.run(['console', 'revoke', '--all', '--account', accountId]);
      expectOk(result);
      expect(result.stdout).to.match(/^Ended 2 console session\(s\): /);
      const ended = /: (.*); their next request/.exec(result.stdout)![1]!.split(', ');
      expect(ended).to.have.members([sessions[0]!.id, sessions[1]!.id]);
      expect(await sessionStates()).to.deep.equal({ [sessions[0]!.id]: 'revoked', [sessions[1]!.id]: 'revoked', [sessions[2]!.id]: 'signed_out' });
      for (const session of sessions) expect(cli.withDb((db) => findLiveSession(db, cli.clock, session.secret))).to.equal(undefined);

      const again = await cli.run(['console', 'revoke', '--all', '--account', accountId]);
      expectOk(again);
      expect(again.stdout).to.equal('No live session to end.\n');
    });

    it('--all leaves other accounts’ sessions alone', async () => {
      const mine = await signedInSession();
      const otherAccount = await cli.createAccount();
      const other = await cli.json<{ url: string }>(['console', 'link', '--account', otherAccount]);
      const theirs = useLink(LINK.exec(other.url)![1]!) as StartedSession;
      expect(await cli.json(['console', 'revoke', '--all', '--account', accountId])).to.deep.equal({ ended: [mine.id] });
      expect(cli.withDb((db) => findLiveSession(db, cli.clock, theirs.secret))).to.include({ id: theirs.id });
    });

    it('leaves one console.revoke row per session ended, under the admin command', async () => {
      const first = await signedInSession();
      const second = await signedInSession();
      await cli.json(['console', 'revoke', '--session', first.id]);
      await cli.json(['console', 'revoke', '--all', '--account', accountId]);
      const byRevoke = { actor_type: 'cli', actor_name: osUserName(), command: 'daybook console revoke', action: 'console.revoke', subject_type: 'console_session', detail_json: '{}' };
      expect(auditRows('console.revoke')).to.deep.equal([
        { ...byRevoke, subject_id: first.id },
        { ...byRevoke, subject_id: second.id },
      ]);
    });

    it('is a usage error (exit 2) with neither option, with both, or --all without the account, and ends nothing', async () => {
      const session = await signedInSession();
      expectBadArguments(await cli.run(['console', 'revoke']), /give --session ID, or --all with --account ID/);
      expectBadArguments(await cli.run(['console', 'revoke', '--account', accountId]), /give --session ID, or --all with --account ID/);
      expectBadArguments(await cli.run(['console', 'revoke', '--session', session.id, '--all', '--account', accountId]), /give --session ID, or --all with --account ID/);
      expectBadArguments(await cli.run(['console', 'revoke', '--all']), /give the account \(--account ID\)/);
      expectBadArguments(await cli.run(['console', 'revoke', '--session', 'not-an-id']), /--session.*Must be an id/);
      expectBadArguments(await cli.run(['console', 'revoke', '--session', UNKNOWN_ID]), /no console session/);
      expect(await sessionStates()).to.deep.equal({ [session.id]: 'live' });
      expect(auditRows('console.revoke')).to.deep.equal([]);
    });

    it('refuses a session named with another account’s id, rather than end nothing quietly', async () => {
      const session = await signedInSession();
      const otherAccount = await cli.createAccount();
      expectBadArguments(await cli.run(['console', 'revoke', '--session', session.id, '--account', otherAccount]), /is not one of account/);
      expect(await sessionStates()).to.deep.equal({ [session.id]: 'live' });
      // With its own account it is ended as with --session alone.
      expect(await cli.json(['console', 'revoke', '--session', session.id, '--account', accountId])).to.deep.equal({ ended: [session.id] });
    });

    it('refuses --all for an account that does not exist', async () => {
      expectBadArguments(await cli.run(['console', 'revoke', '--all', '--account', UNKNOWN_ID]), /^daybook: No such account\.\n$/);
    });
  });
});
