import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findCardProcessor } from '../../src/books/card-processors.js';
import { CLI_TEST_ENV, CliHarness, expectBadArguments, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';

/**
 * `daybook business set-payments`: a business is connected to card payments with its own
 * Stripe secrets, read from files, kept in the books and never shown; the command prints the
 * webhook address to register; running it again rotates the secrets and keeps the address;
 * --off disconnects. Each change is audited, without the secrets.
 */

const SECRET_KEY = 'sk_test_51Daybook0000000000000000000000000000';
const WEBHOOK_SECRET = 'whsec_daybookTestSigningSecret0000000000';
const SITE = 'https://books.example.com';
const ENV = { ...CLI_TEST_ENV, DAYBOOK_SITE_URL: SITE };

describe('daybook business set-payments: a business connected to card payments, secrets never shown', () => {
  let cli: CliHarness;
  let businessId: string;
  let keyFile: string;
  let webhookFile: string;
  beforeEach(async () => {
    cli = new CliHarness();
    businessId = await cli.createBusiness(await cli.createAccount());
    keyFile = join(cli.dir, 'stripe-key');
    webhookFile = join(cli.dir, 'stripe-webhook');
    writeFileSync(keyFile, `${SECRET_KEY}\n`, { mode: 0o600 });
    writeFileSync(webhookFile, `${WEBHOOK_SECRET}\n`, { mode: 0o600 });
  });
  afterEach(() => cli.cleanup());

  const connect = (extra: string[] = []) =>
    cli.run(['business', 'set-payments', '--business', businessId, '--stripe-key-file', keyFile, '--webhook-secret-file', webhookFile, ...extra], { env: ENV });
  const auditRows = () =>
    cli.withDb((db) => db.prepare("SELECT action, detail_json FROM audit_log WHERE action LIKE 'card_payments.%' ORDER BY id").all() as { action: string; detail_json: string }[]);

  it('stores the secrets, trimmed, and prints the webhook address under the site URL, never a secret', async () => {
    const result = await connect();
    expectOk(result);
    const stored = cli.withDb((db) => findCardProcessor(db, businessId))!;
    expect(stored).to.include({ businessId, processor: 'stripe', secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
    expect(stored.endpointId).to.match(/^[A-Za-z0-9_-]{22}$/);
    const webhookUrl = `${SITE}/webhooks/stripe/${stored.endpointId}`;
    expect(result.stdout.trimEnd().split('\n')).to.deep.equal([
      `Business ${businessId} takes card payments through Stripe. Register this webhook address in the Stripe dashboard`,
      'for checkout.session.completed and checkout.session.async_payment_succeeded:',
      webhookUrl,
    ]);
    for (const secret of [SECRET_KEY, WEBHOOK_SECRET]) {
      expect(result.stdout + result.stderr, 'no secret printed').not.to.contain(secret);
      expect(JSON.stringify(auditRows()), 'no secret in the audit trail').not.to.contain(secret);
    }
    expect(auditRows().map((row) => [row.action, JSON.parse(row.detail_json)])).to.deep.equal([
      ['card_payments.connect', { processor: 'stripe', endpointId: stored.endpointId, livemode: false }],
    ]);
  });

  it('rotates the secrets on a second run, keeping the webhook address; --json says so', async () => {
    expectOk(await connect());
    const first = cli.withDb((db) => findCardProcessor(db, businessId))!;
    writeFileSync(keyFile, 'rk_live_RotatedRestrictedKey000000');
    const rotated = await connect(['--json']);
    expectOk(rotated);
    expect(parseOneObject(rotated.stdout)).to.deep.equal({ businessId, connected: true, webhookUrl: `${SITE}/webhooks/stripe/${first.endpointId}`, replaced: true });
    expect(cli.withDb((db) => findCardProcessor(db, businessId))).to.include({ endpointId: first.endpointId, secretKey: 'rk_live_RotatedRestrictedKey000000' });
    expect(auditRows().map((row) => row.action)).to.deep.equal(['card_payments.connect', 'card_payments.rotate']);
    expect(JSON.parse(auditRows()[1]!.detail_json)).to.include({ livemode: true });
  });

  it('--off deletes the secrets and is harmless to repeat; a later connection gets a new address', async () => {
    expectOk(await connect());
    const first = cli.withDb((db) => findCardProcessor(db, businessId))!;
    const off = await cli.run(['--json', 'business', 'set-payments', '--business', businessId, '--off'], { env: ENV });
    expectOk(off);
    expect(parseOneObject(off.stdout)).to.deep.equal({ businessId, connected: false, wasConnected: true });
    expect(cli.withDb((db) => findCardProcessor(db, businessId))).to.equal(undefined);
    const again = await cli.run(['business', 'set-payments', '--business', businessId, '--off'], { env: ENV });
    expectOk(again);
    expect(again.stdout).to.equal(`Business ${businessId} was not connected to card payments.\n`);
    expect(auditRows().map((row) => row.action)).to.deep.equal(['card_payments.connect', 'card_payments.disconnect']);
    expectOk(await connect());
    expect(cli.withDb((db) => findCardProcessor(db, businessId))!.endpointId).not.to.equal(first.endpointId);
  });

  it('refuses (exit 2, one line, nothing stored) what is not a key, a missing file, an unknown business and mixed flags', async () => {
    writeFileSync(keyFile, 'pk_test_publishableKeyIsNotSecret0000');
    expectBadArguments(await connect(), /secretKey: is not a Stripe secret key \(sk_live_…, sk_test_… or rk_…\)/);
    writeFileSync(keyFile, SECRET_KEY);
    writeFileSync(webhookFile, 'not-a-signing-secret');
    const badWebhook = await connect();
    expectBadArguments(badWebhook, /webhookSecret: is not a Stripe webhook signing secret/);
    expect(badWebhook.stderr, 'the bad value is not shown').not.to.contain('not-a-signing-secret');
    const missing = await cli.run(['business', 'set-payments', '--business', businessId, '--stripe-key-file', join(cli.dir, 'nowhere'), '--webhook-secret-file', webhookFile], { env: ENV });
    expectBadArguments(missing, /--stripe-key-file: cannot read .*nowhere: no such folder/);
    expectBadArguments(await cli.run(['business', 'set-payments', '--business', UNKNOWN_ID, '--off'], { env: ENV }), /No such business/);
    expectBadArguments(await cli.run(['business', 'set-payments', '--business', businessId], { env: ENV }), /give --stripe-key-file and --webhook-secret-file/);
    expectBadArguments(await cli.run(['business', 'set-payments', '--business', businessId, '--off', '--stripe-key-file', keyFile], { env: ENV }), /not both/);
    expect(cli.withDb((db) => findCardProcessor(db, businessId))).to.equal(undefined);
    expect(auditRows()).to.deep.equal([]);
  });
});
