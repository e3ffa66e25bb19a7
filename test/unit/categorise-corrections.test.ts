import { expect } from 'chai';
import { categoriserFor, CORRECTION_WEIGHT } from '../../src/books/categorise/index.js';
import { freshDb, type TempDb } from '../support/db.js';
import { accountIdByName, buildBusiness, testClock } from '../support/factories.js';

/**
 * A booking that corrected a proposal (an `edited` item) says more than one that agreed with
 * it: it counts as CORRECTION_WEIGHT bookings (src/books/categorise/index.ts).
 */
describe('the categoriser weighs corrections above agreeing accepts', () => {
  let temp: TempDb;
  before(async () => {
    temp = await freshDb();
  });
  after(() => temp.close());

  it(`counts a correction as ${CORRECTION_WEIGHT} bookings: two corrections outweigh three accepts`, () => {
    const business = buildBusiness(temp.db, testClock());
    const supplies = accountIdByName(temp.db, business.id, 'Office Supplies');
    const software = accountIdByName(temp.db, business.id, 'Software and Subscriptions');
    const booked = (accountId: string, corrected: boolean) => ({ vendorName: 'Notion Labs', description: null, amountCents: 1000n, accountId, corrected });

    const agreeing = categoriserFor(temp.db, business.id);
    for (let i = 0; i < 3; i += 1) agreeing.learn(booked(supplies, false));
    for (let i = 0; i < 2; i += 1) agreeing.learn(booked(software, false));
    expect(agreeing.propose({ vendorName: 'Notion Labs', description: null, amountCents: 1000n }).accountId, 'two plain bookings do not outweigh three').to.equal(supplies);

    const corrected = categoriserFor(temp.db, business.id);
    for (let i = 0; i < 3; i += 1) corrected.learn(booked(supplies, false));
    for (let i = 0; i < 2; i += 1) corrected.learn(booked(software, true));
    const proposal = corrected.propose({ vendorName: 'Notion Labs', description: null, amountCents: 1000n });
    expect(proposal.accountId).to.equal(software);
    // The rationale still counts payments, not weights.
    expect(proposal.rationale).to.equal("The last 2 payments to Notion Labs were booked to Software and Subscriptions (2 of 5 in all), as 'notion' usually is.");
  });

  it('reads edited rows of the booked history as corrections', () => {
    const business = buildBusiness(temp.db, testClock());
    const supplies = accountIdByName(temp.db, business.id, 'Office Supplies');
    const software = accountIdByName(temp.db, business.id, 'Software and Subscriptions');
    const insert = temp.db.prepare(
      `INSERT INTO transactions (id, business_id, txn_date, amount_cents, direction, vendor_id, ledger_account_id, status, source, description, created_at)
       VALUES (?, ?, ?, 1000, 'out', NULL, ?, ?, 'csv', 'NOTION LABS', ?)`,
    );
    const rows: Array<[string, string]> = [[supplies, 'accepted'], [supplies, 'accepted'], [supplies, 'accepted'], [software, 'edited'], [software, 'edited']];
    rows.forEach(([accountId, status], i) => insert.run(`00000000-0000-4000-8000-00000000000${i}`, business.id, `2026-03-0${i + 1}`, accountId, status, `2026-03-0${i + 1}T12:00:00.000Z`));
    const proposal = categoriserFor(temp.db, business.id).propose({ vendorName: null, description: 'NOTION LABS', amountCents: 1000n });
    expect(proposal.accountId).to.equal(software);
  });
});
