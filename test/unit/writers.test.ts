import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createTenant } from '../../src/books/tenants.js';
import { fixedClock } from '../../src/clock.js';
import { guardBookWrites, inTransaction } from '../../src/db/connection.js';
import { createAccount } from '../../src/door/commands/accounts.js';
import { COMMANDS } from '../../src/door/commands/index.js';
import { batch, defineCommand, writeNow } from '../../src/door/door.js';
import { INSTALLATION_REACH } from '../../src/door/reach.js';
import { projectRoot } from '../../src/paths.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { freshDb, type TempDb } from '../support/db.js';

/**
 * Every write to the books goes through the write door (src/door/door.ts): the list of its
 * commands is the list of the books' writers, each with the entry points that use it. Anything
 * else that writes is housekeeping, named below with its reason. A connection the server or
 * the CLI opened refuses an audited write made outside the door.
 */

/** Each command, and who runs it. */
const WRITERS: Record<string, string> = {
  'account.create': 'daybook account create; the test double',
  'account.update': 'daybook account set; the test double (rate limit off)',
  'business.create': 'daybook business create; the test double',
  'api_key.create': "daybook key create; the test double; the console's keys page",
  'api_key.revoke': "daybook key revoke; the console's keys page",
  'period.lock': 'daybook period lock',
  'business.setCardPayments': 'daybook business set-payments',
  'customer.create': 'POST /customers',
  'customer.archive': 'daybook customer archive|unarchive',
  'vendor.set': 'daybook vendor set|archive|unarchive',
  'ledger_account.archive': 'daybook ledger-account archive|unarchive',
  'expense.create': 'POST /expenses',
  'bill.create': 'daybook bill create',
  'bill.pay': 'daybook bill pay',
  'bank.import': 'daybook import bank',
  'review.accept': "POST /review-queue/{id}/accept; the console's review queue",
  'invoice.create': 'POST /invoices',
  'invoice.send': 'POST /invoices/{id}/send',
  'invoice.remind': 'POST /invoices/{id}/remind',
  'invoice.recordPayment': 'POST /invoices/{id}/payments',
  'invoice.void': 'daybook invoice void',
  'invoice.relink': 'daybook invoice relink',
  'invoice.view': 'GET /pay/{token} (the pay page)',
  'card_payment.receive': 'POST /webhooks/stripe/{endpointId}; GET /pay/{token}/return; the card-payments job',
  'card_payment.post': 'the same three, once a payment is received',
  'card_payment.notice': 'POST /webhooks/stripe/{endpointId} (a refund or dispute)',
  'console.link': 'daybook console link',
  'console.sign_in': 'POST /console/sign-in/{token}',
  'console.sign_out': 'POST /console/sign-out',
  'console.revoke': 'daybook console revoke',
  'invoice.overdue': 'the overdue job',
  'rate.set': 'daybook rate set',
  'rates.store': 'the rates job; a send or payment that looks a rate up',
  'books.migrate': 'daybook migrate, serve and every command that migrates first; a server started by other code',
  'books.restore': 'daybook restore',
};

/**
 * The places in src/ that open a transaction of their own, and why. The door's are the books';
 * inside the door, a books function's own transaction is a SAVEPOINT of the door's. The rest
 * write no book record.
 */
const TRANSACTION_OPENERS: Record<string, string> = {
  'src/door/door.ts': 'the write door; and the Idempotency-Key claimed in_progress before an awaited write',
  'src/door/group-commit.ts': "the write door's group: the writes ready together, each in its SAVEPOINT, one commit",
  'src/app.ts': '/healthz asking for the write lock and giving it back at once (writes nothing)',
  'src/db/restore.ts': 'restore making sure no process holds the old books (writes nothing)',
  'src/db/server-lock.ts': "the server lock: an exclusive transaction on the lock file, not the books",
  'src/db/connection.ts': 'the two openers: inTransaction and doorTransaction',
  'src/db/rebuild.ts': 'a migration rebuilding a table',
  'src/db/migrations/20261127_0016_card_settlement.ts': "a migration adding the card accounts to every chart, outside knex's transaction (it rebuilds tables)",
  'src/store/outbox.ts': 'email delivery attempts (claiming and settling outbox rows)',
  'src/store/counters.ts': 'request counters, written in batches to their own file',
  'src/books/today.ts': "Today's signal bookkeeping (GET /today writes which signals it raised)",
  'src/books/reports/ledger-export.ts': 'a read: the ledger export reads one snapshot',
  'src/rates/store.ts': 'a quote stored at once (runs inside the door: rates.store)',
  'src/books/businesses.ts': 'a business with its chart, at once (inside the door: a SAVEPOINT)',
  'src/books/keys.ts': 'a key with its grants, at once (inside the door: a SAVEPOINT)',
  'src/books/tenants.ts': 'an account with its settings, at once (inside the door: a SAVEPOINT)',
  'src/books/fx.ts': 'a rate with its audit row, at once (inside the door: a SAVEPOINT)',
  'src/books/periods.ts': 'a lock with its audit row, at once (inside the door: a SAVEPOINT)',
  'src/books/import/bank-import.ts': 'a statement, all rows or none (inside the door: a SAVEPOINT)',
  'src/books/ledger.ts': 'an entry with its lines and balances, at once (inside the door: a SAVEPOINT)',
};

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [relative(projectRoot, path)] : [];
  });
}

/** Calls that open a transaction, in code (comments left out): the helpers, the driver's, and a statement that is a plain BEGIN. */
const OPENER = /(?<![\w.])(inTransaction|doorTransaction)\(|\.transaction\(|['"`]BEGIN\b/;

function opensTransactions(file: string): boolean {
  return readFileSync(join(projectRoot, file), 'utf8')
    .split('\n')
    .some((line) => !/^\s*(\*|\/\/|\/\*)/.test(line) && OPENER.test(line));
}

describe('the books’ writers (src/door)', () => {
  it('lists every command of the write door, each with the entry points that run it', () => {
    expect(COMMANDS.map((command) => command.name).sort()).to.deep.equal(Object.keys(WRITERS).sort());
    expect(new Set(COMMANDS.map((command) => command.name)).size, 'names are unique').to.equal(COMMANDS.length);
  });

  it('names every place in src/ that opens a transaction, with its reason; nothing else does', () => {
    const found = sourceFiles(join(projectRoot, 'src')).filter(opensTransactions).sort();
    expect(found).to.deep.equal(Object.keys(TRANSACTION_OPENERS).sort());
  });

  describe('a guarded connection (the server’s and every CLI command’s)', () => {
    let temp: TempDb;
    const clock = fixedClock('2026-03-15T12:00:00.000Z');
    const operator = { actor: CLI_ACTOR, reach: INSTALLATION_REACH };
    beforeEach(async () => {
      temp = await freshDb();
      guardBookWrites(temp.db);
    });
    afterEach(() => temp.close());

    const accounts = () => Number(temp.db.prepare('SELECT count(*) FROM tenants').pluck().get());

    it('refuses a write to the books made outside the door, and keeps nothing of it', () => {
      expect(() => createTenant(temp.db, clock, CLI_ACTOR, { name: 'Around the door' })).to.throw(/write door/);
      expect(() => inTransaction(temp.db, () => createTenant(temp.db, clock, CLI_ACTOR, { name: 'In a housekeeping transaction' }))).to.throw(/write door/);
      expect(accounts()).to.equal(0);
    });

    it('takes the same write through the door, with its audit row', () => {
      const tenant = writeNow({ db: temp.db, clock }, operator, createAccount, { name: 'Through the door' });
      expect(accounts()).to.equal(1);
      expect(temp.db.prepare("SELECT actor_name, command FROM audit_log WHERE action = 'account.create' AND subject_id = ?").get(tenant.id)).to.deep.equal({
        actor_name: CLI_ACTOR.name,
        command: CLI_ACTOR.command,
      });
    });

    it('runs a batch of commands in one transaction, each in a SAVEPOINT: a refused one undoes only itself', () => {
      batch(temp.db, () => {
        writeNow({ db: temp.db, clock }, operator, createAccount, { name: 'First' });
        expect(() => writeNow({ db: temp.db, clock }, operator, createAccount, { name: '' })).to.throw();
        writeNow({ db: temp.db, clock }, operator, createAccount, { name: 'Third' });
      });
      expect(temp.db.prepare('SELECT name FROM tenants ORDER BY name').pluck().all()).to.deep.equal(['First', 'Third']);
    });

    it('refuses a command that appends no audit row, and rolls its write back', () => {
      const forgetful = defineCommand({
        name: 'test.forgetful',
        scope: () => ({ installation: true }),
        run: ({ db }) => db.prepare("INSERT INTO tenants (id, name, plan, created_at) VALUES ('t-forgetful', 'Forgetful', 'small', '2026-03-15T12:00:00.000Z')").run(),
      });
      expect(() => writeNow({ db: temp.db, clock }, operator, forgetful, undefined)).to.throw(/appended no audit row/);
      expect(accounts()).to.equal(0);
    });
  });
});
