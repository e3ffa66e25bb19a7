import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { getBusiness } from '../../src/books/businesses.js';
import { categoriserFor, type Proposal } from '../../src/books/categorise/index.js';
import { recordExpense } from '../../src/books/expenses.js';
import { inTransaction } from '../../src/db/connection.js';
import { accountIdByName, TEST_ACTOR } from '../support/factories.js';
import { CliHarness, expectBadArguments, expectOk, parseOneObject, UNKNOWN_ID } from './support.js';

/**
 * `daybook import bank`, run in-process over a books file whose account and business were made
 * through the CLI. Every refusal is checked to leave the books exactly as they were.
 */

const HEADER = 'date,description,amount,vendor';

/** Six rows: four out (one without a vendor), two in. */
const GOOD_STATEMENT = [
  HEADER,
  '2026-03-01,Morning coffee,-4.50,Blue Bottle',
  '2026-03-01,"Flour, 25 kg",-62.00,Miller & Sons',
  '2026-03-02,Card sales payout,1250.00,Stripe',
  '2026-03-02,"Bank fee ""monthly""",-15,',
  '2026-03-03,"Invoice 1001\npaid by check",300.5,',
  '2026-03-04,Mystery charge,-9.99,Blue Bottle',
].join('\r\n');

interface TransactionRow {
  id: string;
  txn_date: string;
  amount_cents: bigint;
  direction: string;
  vendor: string | null;
  ledger_account_id: string | null;
  status: string;
  source: string;
  description: string;
  rationale: string | null;
  journal_entry_id: string | null;
  import_fingerprint: string;
}

interface ReviewRow {
  transaction_id: string;
  proposed_account_id: string | null;
  confidence: number | null;
  rationale: string | null;
  accepted_at: string | null;
}

describe('daybook import bank', () => {
  let cli: CliHarness;
  let accountId: string;
  let businessId: string;

  beforeEach(async () => {
    cli = new CliHarness();
    accountId = await cli.createAccount();
    businessId = await cli.createBusiness(accountId, ['--name', 'Lakeside Bakery']);
  });
  afterEach(() => cli.cleanup());

  function writeStatement(content: string | Uint8Array, name = 'statement.csv'): string {
    const path = join(cli.dir, name);
    writeFileSync(path, content);
    return path;
  }
  const importFile = (path: string, extra: string[] = []) => cli.run([...extra, 'import', 'bank', '--business', businessId, '--file', path]);
  const importText = (content: string | Uint8Array, extra: string[] = []) => importFile(writeStatement(content), extra);

  const transactions = () =>
    cli.withDb((db) =>
      db
        .prepare(
          `SELECT t.id, t.txn_date, t.amount_cents, t.direction, v.name AS vendor, t.ledger_account_id, t.status, t.source, t.description,
             t.rationale, t.journal_entry_id, t.import_fingerprint
           FROM transactions t LEFT JOIN vendors v ON v.id = t.vendor_id WHERE t.business_id = ? ORDER BY t.txn_date, t.rowid`,
        )
        .all(businessId),
    ) as TransactionRow[];
  const reviewItems = () =>
    cli.withDb((db) =>
      db.prepare('SELECT transaction_id, proposed_account_id, confidence, rationale, accepted_at FROM review_queue_items WHERE business_id = ? ORDER BY rowid').all(businessId),
    ) as ReviewRow[];
  const vendorNames = () => cli.withDb((db) => (db.prepare('SELECT name FROM vendors ORDER BY name').all() as { name: string }[]).map((row) => row.name));
  const auditRows = (action: string) =>
    cli.withDb((db) => db.prepare('SELECT actor_type, business_id, subject_id, detail_json FROM audit_log WHERE action = ? ORDER BY id').all(action)) as {
      actor_type: string;
      business_id: string | null;
      subject_id: string | null;
      detail_json: string;
    }[];
  /** The row count of every table: a refusal must leave all of them as they were. */
  const tableCounts = () =>
    cli.withDb((db) => {
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
        (row) => row.name,
      );
      return Object.fromEntries(tables.map((table) => [table, Number((db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: bigint }).n)]));
    });

  /** Refused with exactly these stderr lines (exit 2, nothing on stdout), and nothing written. */
  async function expectRefused(content: string | Uint8Array, lines: string[]): Promise<void> {
    const before = tableCounts();
    const result = await importText(content);
    expect(result.code, result.stderr).to.equal(2);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal(lines.map((line) => `daybook: ${line}\n`).join(''));
    expect(tableCounts(), 'nothing written').to.deep.equal(before);
  }

  describe('a good statement', () => {
    it('imports every row: money out pending in the review queue, money in uncategorized, and says so', async () => {
      const result = await importText(GOOD_STATEMENT);
      expectOk(result);
      expect(result.stdout).to.equal('Imported 6 rows into Lakeside Bakery: 6 new (4 in the review queue, 2 money in), 0 already imported.\n');
      expect(result.stderr).to.equal('');

      const rows = transactions();
      expect(
        rows.map(({ txn_date, amount_cents, direction, vendor, status, source, description, ledger_account_id, journal_entry_id }) => ({
          txn_date,
          amount_cents,
          direction,
          vendor,
          status,
          source,
          description,
          ledger_account_id,
          journal_entry_id,
        })),
      ).to.deep.equal([
        { txn_date: '2026-03-01', amount_cents: 450n, direction: 'out', vendor: 'Blue Bottle', status: 'pending', source: 'csv', description: 'Morning coffee', ledger_account_id: null, journal_entry_id: null },
        { txn_date: '2026-03-01', amount_cents: 6200n, direction: 'out', vendor: 'Miller & Sons', status: 'pending', source: 'csv', description: 'Flour, 25 kg', ledger_account_id: null, journal_entry_id: null },
        // Money in: no vendor (a payer is not a vendor), no review item, nothing posted.
        { txn_date: '2026-03-02', amount_cents: 125000n, direction: 'in', vendor: null, status: 'uncategorized', source: 'csv', description: 'Card sales payout', ledger_account_id: null, journal_entry_id: null },
        { txn_date: '2026-03-02', amount_cents: 1500n, direction: 'out', vendor: null, status: 'pending', source: 'csv', description: 'Bank fee "monthly"', ledger_account_id: null, journal_entry_id: null },
        { txn_date: '2026-03-03', amount_cents: 30050n, direction: 'in', vendor: null, status: 'uncategorized', source: 'csv', description: 'Invoice 1001\npaid by check', ledger_account_id: null, journal_entry_id: null },
        { txn_date: '2026-03-04', amount_cents: 999n, direction: 'out', vendor: 'Blue Bottle', status: 'pending', source: 'csv', description: 'Mystery charge', ledger_account_id: null, journal_entry_id: null },
      ]);
      expect(new Set(rows.map((row) => row.import_fingerprint)).size, 'a fingerprint each').to.equal(6);
      rows.forEach((row) => expect(row.import_fingerprint).to.match(/^[0-9a-f]{64}$/));

      // One review item per money-out row, holding exactly what the categoriser proposes (the
      // rationale also on the transaction); none accepted.
      const items = reviewItems();
      const outRows = rows.filter((row) => row.direction === 'out');
      expect(items.map((item) => item.transaction_id).sort()).to.deep.equal(outRows.map((row) => row.id).sort());
      const proposals = proposalsFor(outRows);
      for (const row of outRows) {
        const item = items.find((candidate) => candidate.transaction_id === row.id)!;
        const proposal = proposals.get(row.id)!;
        expect({ accountId: item.proposed_account_id, confidence: item.confidence, rationale: item.rationale }, row.description).to.deep.equal(proposal);
        expect(row.rationale).to.equal(proposal.rationale);
        expect(item.accepted_at).to.equal(null);
      }
      expect(items.some((item) => item.proposed_account_id !== null && item.confidence !== null), 'some proposal names an account').to.equal(true);
      expect(rows.filter((row) => row.direction === 'in').every((row) => row.rationale === null)).to.equal(true);

      // Vendors: found or created by exact name, for money out only.
      expect(vendorNames()).to.deep.equal(['Blue Bottle', 'Miller & Sons']);
      expect(auditRows('vendor.create')).to.have.length(2);

      // Nothing posted.
      expect(tableCounts().journal_entries).to.equal(0);
      expect(tableCounts().journal_lines).to.equal(0);

      const audits = auditRows('bank.import');
      expect(audits).to.have.length(1);
      expect(audits[0]).to.deep.include({ actor_type: 'cli', business_id: businessId, subject_id: businessId });
      expect(JSON.parse(audits[0]!.detail_json)).to.deep.equal({ file: 'statement.csv', rows: 6, imported: 6, duplicates: 0, alreadyRecorded: 0, queued: 4 });
    });

    it('prints one JSON object with --json: imported, duplicates, queued', async () => {
      const result = await importText(GOOD_STATEMENT, ['--json']);
      expectOk(result);
      expect(parseOneObject(result.stdout)).to.deep.equal({ imported: 6, duplicates: 0, alreadyRecorded: 0, queued: 4 });
    });

    it('reads a file with a BOM, LF line ends, no vendor column, a header in capitals and no final line break', async () => {
      const text = '\uFEFFDATE,Description,Amount\n2026-03-01,Coffee,-4.50\n2026-03-02,Deposit,100.00';
      const result = await importText(text, ['--json']);
      expectOk(result);
      expect(parseOneObject(result.stdout)).to.deep.equal({ imported: 2, duplicates: 0, alreadyRecorded: 0, queued: 1 });
      expect(transactions().map((row) => [row.description, row.vendor, row.amount_cents])).to.deep.equal([
        ['Coffee', null, 450n],
        ['Deposit', null, 10000n],
      ]);
      expect(vendorNames()).to.deep.equal([]);
    });

    it('uses a vendor that already exists by its exact name instead of making another', async () => {
      expectOk(await importText(`${HEADER}\n2026-03-01,Coffee,-4.50,Blue Bottle\n`));
      expectOk(await importFile(writeStatement(`${HEADER}\n2026-03-05,Coffee beans,-18.00,Blue Bottle\n2026-03-05,Cups,-3.00,blue bottle\n`, 'april.csv')));
      expect(vendorNames()).to.deep.equal(['Blue Bottle', 'blue bottle']);
      expect(transactions().map((row) => row.vendor)).to.deep.equal(['Blue Bottle', 'Blue Bottle', 'blue bottle']);
    });
  });

  /**
   * What the categoriser proposes for each money-out transaction, asked afresh over the books as
   * they are now. Equal to what the import stored only if the import taught it nothing (Blue
   * Bottle comes twice in the good statement).
   */
  function proposalsFor(rows: TransactionRow[]): Map<string, Proposal> {
    return cli.withDb((db) => {
      const categoriser = categoriserFor(db, businessId);
      return new Map(rows.map((row) => [row.id, categoriser.propose({ description: row.description, vendorName: row.vendor, amountCents: row.amount_cents })]));
    });
  }

  describe('refuses the whole file for any bad row (exit 2, one stderr line per bad row, nothing written)', () => {
    const statement = (...rows: string[]) => [HEADER, '2026-03-01,Coffee,-4.50,Blue Bottle', ...rows].join('\n');

    it('a date that is not a real YYYY-MM-DD date', async () => {
      await expectRefused(statement('2026-02-30,Rent,-1200.00,'), ['row 2: date "2026-02-30" is not a date written YYYY-MM-DD']);
    });

    it('an amount that is not a number (a decimal comma)', async () => {
      await expectRefused(statement('2026-03-02,Bread,"12,5",'), ['row 2: amount "12,5" is not a number']);
    });

    it('an amount with a currency symbol, thousands separators, or more than 2 decimals', async () => {
      await expectRefused(statement('2026-03-02,Bread,$12.50,', '2026-03-02,Oven,"-1,200.00",', '2026-03-02,Gas,-1.234,'), [
        'row 2: amount "$12.50" is not a number',
        'row 3: amount "-1,200.00" has thousands separators; write it without them (-1200.00)',
        'row 4: amount "-1.234" has more than 2 decimals',
      ]);
    });

    it('an unquoted amount split at its thousands separator, which would read as a dollar and a vendor "200.00"', async () => {
      await expectRefused(statement('2026-03-02,Oven,-1,200.00', '2026-03-03,Deposit,2,500', '2026-03-04,Mixer,-12,345.60'), [
        'row 2: amount "-1" and vendor "200.00" look like one amount split at a thousands separator; write amounts without separators (-1200.00)',
        'row 3: amount "2" and vendor "500" look like one amount split at a thousands separator; write amounts without separators (-1200.00)',
        'row 4: amount "-12" and vendor "345.60" look like one amount split at a thousands separator; write amounts without separators (-1200.00)',
      ]);
    });

    it('still takes a vendor whose name is digits when the amount has cents', async () => {
      expectOk(await importText(statement('2026-03-02,Parking,-4.00,123')));
      expect(vendorNames()).to.include('123');
    });

    it('a zero amount', async () => {
      await expectRefused(statement('2026-03-02,Nothing,-0.00,'), ['row 2: amount "-0.00" is zero']);
    });

    it('a row with the wrong number of columns', async () => {
      await expectRefused(statement('2026-03-02,Bread,-3.00'), ['row 2: has 3 columns; the header has 4']);
    });

    it('a row that is not valid UTF-8', async () => {
      const bytes = Buffer.concat([Buffer.from(`${HEADER}\n2026-03-01,Coffee,-4.50,\n2026-03-02,Caf`), Buffer.from([0xe9]), Buffer.from(',-3.00,\n')]);
      await expectRefused(bytes, ['row 2: is not valid UTF-8']);
    });

    it('an empty description', async () => {
      await expectRefused(statement('2026-03-02,  ,-3.00,'), ['row 2: description is empty']);
    });

    it('a description over 2000 characters (2000 is fine, counted in characters, not UTF-16 units)', async () => {
      await expectRefused(statement(`2026-03-02,${'é'.repeat(2000)},-3.00,`, `2026-03-02,${'x'.repeat(2001)},-3.00,`, `2026-03-02,${'😀'.repeat(2000)},-3.00,`, `2026-03-02,${'😀'.repeat(2001)},-3.00,`), [
        'row 3: description is longer than 2000 characters',
        'row 5: description is longer than 2000 characters',
      ]);
    });

    it('a vendor name that breaks the name rule', async () => {
      await expectRefused(statement('2026-03-02,Bread,-3.00,"Bad\u0007Bakery"', `2026-03-02,Bread,-3.00,${'v'.repeat(201)}`), [
        'row 2: vendor "Bad\\u0007Bakery" must not be blank or contain control characters',
        `row 3: vendor "${'v'.repeat(40)}…" must be at most 200 characters`,
      ]);
    });

    it('an unterminated quote (named at the row where it opened)', async () => {
      await expectRefused(statement('2026-03-02,"Bread,-3.00,', '2026-03-03,Milk,-2.00,'), ['row 2: a quoted field is never closed (a " is missing)']);
    });

    it('a stray quote in a field that is not quoted', async () => {
      await expectRefused(statement('2026-03-02,12" pizza,-3.00,'), ['row 2: a " inside a field that is not quoted (quote the whole field and write the " twice)']);
    });

    it('every problem of a row on its one line, rows in order, the good rows not imported either', async () => {
      await expectRefused(statement('', '2026-13-01,,abc,', '2026-03-05,Fine,-1.00,'), [
        'row 2: is a blank line',
        'row 3: date "2026-13-01" is not a date written YYYY-MM-DD; description is empty; amount "abc" is not a number',
      ]);
    });

    it('names at most 50 bad rows, then how many more', async () => {
      const bad = Array.from({ length: 63 }, (_, i) => `2026-03-02,Row ${i + 2},x${i + 2},`);
      const lines = Array.from({ length: 50 }, (_, i) => `row ${i + 2}: amount "x${i + 2}" is not a number`);
      await expectRefused(statement(...bad), [...lines, '… and 13 more bad rows']);
    });
  });

  describe('refuses a file that is not a statement (exit 2, one line, nothing written)', () => {
    const refusedWith = async (content: string | Uint8Array, message: RegExp) => {
      const before = tableCounts();
      const result = await importText(content);
      expectBadArguments(result, message);
      expect(tableCounts()).to.deep.equal(before);
    };

    it('an empty file', async () => {
      await refusedWith('', /^daybook: .*statement\.csv: the file is empty\n$/);
      await refusedWith('\n\n', /the file is empty/);
    });

    it('a missing header (the file starts with a data row)', async () => {
      await refusedWith('2026-03-01,Coffee,-4.50\n', /the header date,description,amount .*; it is missing/);
    });

    it('a header other than date,description,amount[,vendor]', async () => {
      await refusedWith('Date,Amount,Description\n2026-03-01,-4.50,Coffee\n', /found "Date,Amount,Description"/);
      await refusedWith('date,description,amount,vendor,memo\n2026-03-01,Coffee,-4.50,,x\n', /found "date,description,amount,vendor,memo"/);
    });

    it('a header and no data rows', async () => {
      await refusedWith(`${HEADER}\r\n`, /the file has a header row but no data rows/);
    });

    it('a UTF-16 file', async () => {
      await refusedWith(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${HEADER}\n`, 'utf16le')]), /the file is UTF-16; save it as UTF-8/);
    });

    it('a file in another encoding (Latin-1) from its header on', async () => {
      await refusedWith(Buffer.from('date,descripción,amount\n2026-03-01,Café,-4.50\n', 'latin1'), /the header row is not valid UTF-8: save the file as UTF-8\n$/);
    });

    it('a file that does not exist', async () => {
      const before = tableCounts();
      expectBadArguments(await importFile(join(cli.dir, 'nope.csv')), /^daybook: cannot read .*nope\.csv: no such file\n$/);
      expect(tableCounts()).to.deep.equal(before);
    });

    it('an unknown business id', async () => {
      const before = tableCounts();
      const path = writeStatement(GOOD_STATEMENT);
      expectBadArguments(await cli.run(['import', 'bank', '--business', UNKNOWN_ID, '--file', path]), /^daybook: no business with id 0b8e1f5e-1111-4111-8111-111111111111\n$/);
      expectBadArguments(await cli.run(['import', 'bank', '--business', 'lakeside', '--file', path]), /--business/);
      expect(tableCounts()).to.deep.equal(before);
    });
  });

  describe('de-duplication', () => {
    it('imports nothing twice when the same file is imported again', async () => {
      const path = writeStatement(GOOD_STATEMENT);
      expectOk(await importFile(path));
      const before = tableCounts();
      const again = await importFile(path);
      expectOk(again);
      expect(again.stdout).to.equal('Imported 6 rows into Lakeside Bakery: 0 new (0 in the review queue, 0 money in), 6 already imported.\n');
      const after = tableCounts();
      expect(after.transactions).to.equal(before.transactions);
      expect(after.review_queue_items).to.equal(before.review_queue_items);
      expect(after.vendors).to.equal(before.vendors);
      expect(after.audit_log, 'the second import is audited too').to.equal(before.audit_log! + 1);
      expect(JSON.parse(auditRows('bank.import')[1]!.detail_json)).to.deep.equal({ file: 'statement.csv', rows: 6, imported: 0, duplicates: 6, alreadyRecorded: 0, queued: 0 });
    });

    it('imports only the new rows of an overlapping statement', async () => {
      expectOk(await importText(`${HEADER}\n2026-03-01,Coffee,-4.50,Blue Bottle\n2026-03-02,Flour,-62.00,Miller\n2026-03-03,Coffee,-4.50,Blue Bottle\n`));
      // The second statement repeats 03-02 and 03-03 (saved with CRLF and a BOM this time) and adds two rows.
      const second = await importFile(
        writeStatement(`\uFEFF${HEADER}\r\n2026-03-02,Flour,-62.00,Miller\r\n2026-03-03,Coffee,-4.50,Blue Bottle\r\n2026-03-04,Sugar,-9.00,Miller\r\n2026-03-04,Refund,9.00,\r\n`, 'second.csv'),
        ['--json'],
      );
      expectOk(second);
      expect(parseOneObject(second.stdout)).to.deep.equal({ imported: 2, duplicates: 2, alreadyRecorded: 0, queued: 1 });
      expect(transactions().map((row) => [row.txn_date, row.description])).to.deep.equal([
        ['2026-03-01', 'Coffee'],
        ['2026-03-02', 'Flour'],
        ['2026-03-03', 'Coffee'],
        ['2026-03-04', 'Sugar'],
        ['2026-03-04', 'Refund'],
      ]);
      expect(reviewItems()).to.have.length(4);
    });

    it('keeps two identical rows of one file (two real coffees), and still adds neither twice', async () => {
      const path = writeStatement(`${HEADER}\n2026-03-01,Coffee,-4.50,Blue Bottle\n2026-03-01,Coffee,-4.50,Blue Bottle\n`);
      const first = await importFile(path, ['--json']);
      expect(parseOneObject(first.stdout)).to.deep.equal({ imported: 2, duplicates: 0, alreadyRecorded: 0, queued: 2 });
      expect(transactions()).to.have.length(2);
      const again = await importFile(path, ['--json']);
      expect(parseOneObject(again.stdout)).to.deep.equal({ imported: 0, duplicates: 2, alreadyRecorded: 0, queued: 0 });
      // A later statement with three that day holds one more coffee.
      const third = await importFile(writeStatement(`${HEADER}\n2026-03-01,Coffee,-4.50,Blue Bottle\n2026-03-01,Coffee,-4.50,\n2026-03-01,Coffee,-4.50,\n`, 'x.csv'), ['--json']);
      expect(parseOneObject(third.stdout)).to.deep.equal({ imported: 1, duplicates: 2, alreadyRecorded: 0, queued: 1 });
    });

    it('knows a row again when the bank changes the description\'s case or spacing', async () => {
      expectOk(await importText(`${HEADER}\n2026-03-01,Crema  Coffee Roasters,-4.50,\n`));
      const again = await importText(`${HEADER}\n2026-03-01, CREMA COFFEE   roasters ,-4.50,\n`, ['--json']);
      expect(parseOneObject(again.stdout)).to.deep.equal({ imported: 0, duplicates: 1, alreadyRecorded: 0, queued: 0 });
    });

    it('tells apart money in and money out of the same size on the same day', async () => {
      const result = await importText(`${HEADER}\n2026-03-01,Transfer,-50.00,\n2026-03-01,Transfer,50.00,\n`, ['--json']);
      expect(parseOneObject(result.stdout)).to.deep.equal({ imported: 2, duplicates: 0, alreadyRecorded: 0, queued: 1 });
    });
  });

  describe('expenses already recorded through the API', () => {
    /** Records an expense (POST /expenses' books function) on the books file, as the API would. */
    const recordOne = (date: string, amountCents: bigint, vendorName: string): string =>
      cli.withDb((db) =>
        inTransaction(db, () => {
          const business = getBusiness(db, businessId);
          return recordExpense(db, cli.clock, TEST_ACTOR, { business, date, amountCents, vendor: { name: vendorName }, accountId: accountIdByName(db, businessId, 'Office Supplies') })
            .transactionId;
        }),
      );
    const fingerprintOf = (transactionId: string) =>
      cli.withDb((db) => (db.prepare('SELECT import_fingerprint FROM transactions WHERE id = ?').get(transactionId) as { import_fingerprint: string | null }).import_fingerprint);
    const entryCount = () => cli.withDb((db) => Number((db.prepare('SELECT count(*) AS n FROM journal_entries').get() as { n: bigint }).n));

    it('does not queue the bank line of a recorded expense (accepting it would book the expense twice)', async () => {
      const recorded = recordOne('2026-03-01', 4599n, 'Crema Coffee Roasters');
      const entries = entryCount();
      const result = await importText(`${HEADER}\n2026-03-03,CREMA COFFEE ROASTERS 0042,-45.99,crema coffee roasters\n2026-03-03,Flour,-62.00,Miller\n`);
      expectOk(result);
      expect(result.stdout).to.equal(
        'Imported 2 rows into Lakeside Bakery: 1 new (1 in the review queue, 0 money in), 0 already imported, 1 already recorded as expenses.\n',
      );
      expect(reviewItems()).to.have.length(1);
      expect(transactions().filter((row) => row.source === 'csv').map((row) => row.description)).to.deep.equal(['Flour']);
      expect(fingerprintOf(recorded), 'the expense takes the row\'s fingerprint').to.match(/^[0-9a-f]{64}$/);
      expect(entryCount(), 'nothing posted').to.equal(entries);
      expect(JSON.parse(auditRows('bank.import')[0]!.detail_json)).to.include({ alreadyRecorded: 1, queued: 1 });
    });

    it('counts the row as a duplicate when the statement is imported again', async () => {
      recordOne('2026-03-01', 4599n, 'Crema Coffee Roasters');
      const path = writeStatement(`${HEADER}\n2026-03-02,Crema,-45.99,\n`);
      expect(parseOneObject((await importFile(path, ['--json'])).stdout)).to.deep.equal({ imported: 0, duplicates: 0, alreadyRecorded: 1, queued: 0 });
      expect(parseOneObject((await importFile(path, ['--json'])).stdout)).to.deep.equal({ imported: 0, duplicates: 1, alreadyRecorded: 0, queued: 0 });
    });

    it('matches each expense once: a second identical line is queued', async () => {
      recordOne('2026-03-01', 450n, 'Blue Bottle');
      const result = await importText(`${HEADER}\n2026-03-01,Coffee,-4.50,Blue Bottle\n2026-03-01,Coffee,-4.50,Blue Bottle\n`, ['--json']);
      expect(parseOneObject(result.stdout)).to.deep.equal({ imported: 1, duplicates: 0, alreadyRecorded: 1, queued: 1 });
      // A later statement with a third coffee two days on does not match the expense again.
      const later = await importText(`${HEADER}\n2026-03-03,Coffee,-4.50,Blue Bottle\n`, ['--json']);
      expect(parseOneObject(later.stdout)).to.deep.equal({ imported: 1, duplicates: 0, alreadyRecorded: 0, queued: 1 });
    });

    it('matches the expense nearest in date', async () => {
      const far = recordOne('2026-03-01', 1000n, 'Miller');
      const near = recordOne('2026-03-05', 1000n, 'Miller');
      expectOk(await importText(`${HEADER}\n2026-03-06,Miller,-10.00,\n`));
      expect([fingerprintOf(far), fingerprintOf(near) !== null]).to.deep.equal([null, true]);
    });

    it('queues a line that differs in amount, in vendor, or lies more than 5 days from the expense', async () => {
      const recorded = recordOne('2026-03-10', 4599n, 'Crema Coffee Roasters');
      const result = await importText(
        `${HEADER}\n2026-03-10,Crema,-46.00,Crema Coffee Roasters\n2026-03-10,Coffee,-45.99,Blue Bottle\n2026-03-04,Crema,-45.99,Crema Coffee Roasters\n2026-03-16,Crema,-45.99,Crema Coffee Roasters\n`,
        ['--json'],
      );
      expect(parseOneObject(result.stdout)).to.deep.equal({ imported: 4, duplicates: 0, alreadyRecorded: 0, queued: 4 });
      expect(fingerprintOf(recorded)).to.equal(null);
      // 5 days either side is still a match.
      const edge = await importText(`${HEADER}\n2026-03-15,Crema,-45.99,Crema Coffee Roasters\n`, ['--json']);
      expect(parseOneObject(edge.stdout)).to.deep.include({ alreadyRecorded: 1 });
    });
  });

  describe('closed periods', () => {
    const lock = async (through: string) => expectOk(await cli.run(['period', 'lock', '--business', businessId, '--through', through]));

    it('refuses a file with new money out dated in a closed period, naming each row, and writes nothing', async () => {
      await lock('2026-02-28');
      await expectRefused(`${HEADER}\n2026-02-27,Rent,-1200.00,\n2026-03-01,Coffee,-4.50,\n2026-02-28,Gas,-30.00,\n`, [
        'row 1: date 2026-02-27 falls in a closed period (locked through 2026-02-28): it could never be booked',
        'row 3: date 2026-02-28 falls in a closed period (locked through 2026-02-28): it could never be booked',
      ]);
    });

    it('takes money in, rows already imported and recorded expenses in a closed period', async () => {
      recordOneExpense();
      const path = writeStatement(`${HEADER}\n2026-02-20,Rent,-1200.00,\n2026-02-21,Deposit,500.00,\n`);
      expectOk(await importFile(path));
      await lock('2026-02-28');
      const again = await importText(`${HEADER}\n2026-02-20,Rent,-1200.00,\n2026-02-21,Deposit,500.00,\n2026-02-22,Refund,12.00,\n2026-02-11,Coffee,-4.50,Blue Bottle\n`, ['--json']);
      expect(parseOneObject(again.stdout)).to.deep.equal({ imported: 1, duplicates: 2, alreadyRecorded: 1, queued: 0 });
    });

    function recordOneExpense(): void {
      cli.withDb((db) =>
        inTransaction(db, () =>
          recordExpense(db, cli.clock, TEST_ACTOR, {
            business: getBusiness(db, businessId),
            date: '2026-02-10',
            amountCents: 450n,
            vendor: { name: 'Blue Bottle' },
            accountId: accountIdByName(db, businessId, 'Office Supplies'),
          }),
        ),
      );
    }
  });

  describe('large files', () => {
    /** `count` rows, about one in nine money in, a dozen vendors, dates across a year; some identical rows. */
    function generatedStatement(count: number): string {
      const lines = [HEADER];
      for (let i = 0; i < count; i += 1) {
        const date = `2025-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`;
        const moneyIn = i % 9 === 0;
        const cents = 100 + ((i * 7919) % 250_000);
        const amount = `${moneyIn ? '' : '-'}${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
        lines.push(`${date},"Card purchase ${i % 5000}, ref ${i}",${amount},Vendor ${i % 12}`);
      }
      return `${lines.join('\n')}\n`;
    }

    it('prints progress every 5,000 rows on stderr only, for a file over 5,000 rows', async function () {
      this.timeout(60_000);
      const result = await importText(generatedStatement(12_000), ['--json']);
      expectOk(result);
      expect(result.stderr).to.equal('daybook: 5000 of 12000 rows…\ndaybook: 10000 of 12000 rows…\n');
      expect(parseOneObject(result.stdout)).to.include({ imported: 12_000, duplicates: 0 });
    });

    it('prints no progress for a file of 5,000 rows or fewer', async function () {
      this.timeout(60_000);
      const result = await importText(generatedStatement(5000));
      expectOk(result);
      expect(result.stderr).to.equal('');
    });

    it('imports 50,000 rows (the rate is printed, not asserted)', async function () {
      this.timeout(300_000);
      const path = writeStatement(generatedStatement(50_000), 'big.csv');
      const started = performance.now();
      const result = await importFile(path, ['--json']);
      const seconds = (performance.now() - started) / 1000;
      expectOk(result);
      const counts = parseOneObject<{ imported: number; duplicates: number; queued: number }>(result.stdout);
      expect(counts.imported).to.equal(50_000);
      expect(counts.queued).to.equal(50_000 - Math.ceil(50_000 / 9));
      expect(result.stderr.trimEnd().split('\n')).to.have.length(9);
      console.log(`      import bank: 50000 rows in ${seconds.toFixed(2)} s, ${Math.round(50_000 / seconds)} rows/s`);

      const startedAgain = performance.now();
      const again = await importFile(path, ['--json']);
      const secondsAgain = (performance.now() - startedAgain) / 1000;
      expect(parseOneObject(again.stdout)).to.deep.equal({ imported: 0, duplicates: 50_000, alreadyRecorded: 0, queued: 0 });
      console.log(`      import bank again (all duplicates): ${secondsAgain.toFixed(2)} s, ${Math.round(50_000 / secondsAgain)} rows/s`);
    });
  });

  it('explains the format, the row numbers and money in in its help', async () => {
    const result = await cli.run(['import', 'bank', '--help']);
    expectOk(result);
    expect(result.stdout).to.include('date,description,amount,vendor');
    expect(result.stdout).to.include('counts the data rows from 1 (the header');
    expect(result.stdout).to.include('Money in (positive');
  });
});
