import { expect } from 'chai';
import type { TestApp, TestResponse } from '../support/app.js';
import { countRows, expectInvalid, type ApiTenant, useFreshTenantPerTest } from '../support/api.js';
import { accountIdByName } from '../support/factories.js';
import { addBilledCustomer, createInvoice, invoiceBody, invoiceLine, sendInvoice } from '../support/invoicing.js';

/**
 * Names that read alike and text that hides what it says (a security probe's finding): a
 * customer name that only looks like an existing one finds that customer; a vendor name with
 * characters that show as nothing is refused (vendors are matched exactly); a description or
 * memo refuses control characters and bidirectional overrides, newline and tab aside.
 */

const START = '2026-03-15T12:00:00.000Z';
const EXISTING = 'Harbor Pine Supply';

/** Each spelling reads as EXISTING; before the fix each made a second customer. */
const LOOK_ALIKES: Array<[what: string, name: string]> = [
  ['a no-break space (U+00A0) for a space', 'Harbor\u00a0Pine Supply'],
  ['a zero-width space (U+200B) inside a word', 'Har\u200bbor Pine Supply'],
  ['a zero-width joiner (U+200D) inside a word', 'Harbor Pi\u200dne Supply'],
  ['a byte order mark (U+FEFF) in front', '\ufeffHarbor Pine Supply'],
  ['a soft hyphen (U+00AD) inside a word', 'Harbor Pine Sup\u00adply'],
  ['fullwidth letters', 'Ｈａｒｂｏｒ Ｐｉｎｅ Ｓｕｐｐｌｙ'],
  ['a leading space', ' Harbor Pine Supply'],
  ['a trailing space', 'Harbor Pine Supply '],
  ['a double space', 'Harbor  Pine Supply'],
  ['an ideographic space (U+3000) and a word joiner (U+2060)', 'Harbor\u3000Pine\u2060 Supply'],
  ['all of the above at once, in two cases', '\u00a0ＨＡＲＢＯＲ  pine\u200b sup\u00adply\ufeff '],
];

/** Characters that show as nothing, each refused in a vendor name. */
const INVISIBLES: Array<[what: string, char: string]> = [
  ['a zero-width space (U+200B)', '\u200b'],
  ['a zero-width non-joiner (U+200C)', '\u200c'],
  ['a zero-width joiner (U+200D) between letters', '\u200d'],
  ['a word joiner (U+2060)', '\u2060'],
  ['a byte order mark (U+FEFF)', '\ufeff'],
  ['a soft hyphen (U+00AD)', '\u00ad'],
  ['a Hangul filler (U+3164)', '\u3164'],
  ['a tag character (U+E0041)', '\u{e0041}'],
];

/** Characters a description or memo refuses. */
const REFUSED_IN_TEXT: Array<[what: string, char: string]> = [
  ['a right-to-left override (U+202E)', '\u202e'],
  ['a left-to-right embedding (U+202A)', '\u202a'],
  ['a right-to-left isolate (U+2067)', '\u2067'],
  ['a pop directional isolate (U+2069)', '\u2069'],
  ['NUL', '\u0000'],
  ['ESC (a terminal escape sequence)', '\u001b[31m'],
  ['BEL', '\u0007'],
  ['DEL', '\u007f'],
  ['a carriage return', '\r'],
  ['a C1 control (CSI, U+009B)', '\u009b'],
];

describe('look-alike names and hidden characters', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useFreshTenantPerTest((started) => ({ app, tenant } = started), { at: START, tenant: { plan: 'large' } });

  const createCustomer = (body: Record<string, unknown>): Promise<TestResponse> => app.post('/api/v1/customers', tenant.key, body);
  const customerCount = (): number => countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ?', tenant.id);
  const storedName = (id: string): string => (app.db.prepare('SELECT name FROM customers WHERE id = ?').get(id) as { name: string }).name;

  describe('POST /customers: a name that reads as an existing customer\'s finds it (200 {id, created: false})', () => {
    for (const [what, name] of LOOK_ALIKES) {
      it(`finds "${EXISTING}" when sent with ${what}`, async () => {
        const first = await createCustomer({ name: EXISTING });
        expect(first.status, first.text).to.equal(201);
        const before = customerCount();

        const again = await createCustomer({ name, email: 'copy@example.test' });
        expect(again.status, again.text).to.equal(200);
        expect(again.body).to.deep.equal({ id: first.body.id, created: false });
        expect(customerCount(), 'no second customer').to.equal(before);
        expect(storedName(first.body.id), 'the existing customer is unchanged').to.equal(EXISTING);
      });
    }

    it('finds it the other way round too: the look-alike first, the plain name second', async () => {
      const first = await createCustomer({ name: 'Ｏｃｅａｎ\u00a0Ｖｉｅｗ' });
      const again = await createCustomer({ name: 'ocean view' });
      expect([first.status, again.status]).to.deep.equal([201, 200]);
      expect(again.body.id).to.equal(first.body.id);
    });

    it('stores a new name as sent, less the white space and invisible characters at its ends', async () => {
      const res = await createCustomer({ name: '\u200b Bay\u00a0Street  Deli \ufeff' });
      expect(res.status, res.text).to.equal(201);
      expect(storedName(res.body.id)).to.equal('Bay\u00a0Street  Deli');
      const listed = await app.get(`/api/v1/customers?search=${encodeURIComponent('ＢＡＹ STREET')}`, tenant.key);
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.body.customers.map((customer: { id: string; name: string }) => [customer.id, customer.name])).to.deep.equal([
        [res.body.id, 'Bay\u00a0Street  Deli'],
      ]);
    });

    it('pages past customers whose names key to 3,600 characters (U+FDFA is 18 under NFKC; a cursor holds the last key served)', async () => {
      const names = ['\ufdfa'.repeat(200), `${'\ufdfa'.repeat(199)}x`];
      for (const name of names) expect((await createCustomer({ name })).status).to.equal(201);
      const first = await app.get('/api/v1/customers?limit=1', tenant.key);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.nextCursor.length).to.be.greaterThan(4096);
      const second = await app.get(`/api/v1/customers?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, tenant.key);
      expect(second.status, second.text).to.equal(200);
      expect([first.body.customers[0].name, second.body.customers[0].name].sort()).to.deep.equal([...names].sort());
    });

    for (const name of ['\u200b', '\u00ad\u200d\ufeff', '\u2800 \u3164']) {
      it(`refuses a name of nothing but invisible or blank characters (${JSON.stringify(name)}: 422 "name:")`, async () => {
        const before = customerCount();
        expectInvalid(await createCustomer({ name }), 'name');
        expect(customerCount()).to.equal(before);
      });
    }
  });

  describe('POST /expenses: a vendorName with characters that show as nothing is refused (422 "vendorName:")', () => {
    const expense = (vendorName: string) => ({
      date: '2026-03-10',
      amountCents: '1250',
      vendorName,
      accountId: accountIdByName(app.db, tenant.business.id, 'Office Supplies'),
    });
    const vendorCount = (): number => countRows(app.db, 'SELECT count(*) FROM vendors WHERE tenant_id = ?', tenant.id);

    for (const [what, char] of INVISIBLES) {
      it(`refuses ${what}, creating no vendor`, async () => {
        expect((await app.post('/api/v1/expenses', tenant.key, expense('Staples'))).status).to.equal(201);
        const before = vendorCount();
        const res = await app.post('/api/v1/expenses', tenant.key, expense(`Sta${char}ples`));
        expectInvalid(res, 'vendorName');
        expect(res.body.error.message).to.equal('vendorName: must not be blank or contain control or invisible characters');
        expect(vendorCount()).to.equal(before);
      });
    }

    it('still matches vendors exactly: a no-break space or another case is another vendor (spec: case sensitive)', async () => {
      for (const name of ['Blue Bottle', 'Blue\u00a0Bottle', 'BLUE BOTTLE']) {
        expect((await app.post('/api/v1/expenses', tenant.key, expense(name))).status).to.equal(201);
      }
      expect(vendorCount()).to.equal(3);
    });

    it('accepts the joiners and variation selectors an emoji is made of', async () => {
      for (const name of ['Café ☕️', 'Family 👩‍👩‍👧 Diner', 'Rainbow 🏳️‍🌈 Bar', 'Keycap 1️⃣ Books']) {
        const res = await app.post('/api/v1/expenses', tenant.key, expense(name));
        expect(res.status, `${name}: ${res.text}`).to.equal(201);
      }
    });
  });

  describe('descriptions and memos refuse control characters and bidi overrides (422 naming the field)', () => {
    const newInvoice = (overrides: Record<string, unknown>): Promise<TestResponse> =>
      app.post('/api/v1/invoices', tenant.key, invoiceBody(app, tenant.business.id, addBilledCustomer(app, tenant.id), overrides));
    const newExpense = (memo: string): Promise<TestResponse> =>
      app.post('/api/v1/expenses', tenant.key, {
        date: '2026-03-10',
        amountCents: '1250',
        vendorName: 'Staples',
        accountId: accountIdByName(app.db, tenant.business.id, 'Office Supplies'),
        memo,
      });
    const sentInvoice = async (): Promise<string> => {
      const created = await createInvoice(app, tenant.key, invoiceBody(app, tenant.business.id, addBilledCustomer(app, tenant.id)));
      await sendInvoice(app, tenant.key, created.invoiceId);
      return created.invoiceId;
    };
    const written = () => ({
      invoices: countRows(app.db, 'SELECT count(*) FROM invoices WHERE business_id = ?', tenant.business.id),
      expenses: countRows(app.db, 'SELECT count(*) FROM expenses WHERE business_id = ?', tenant.business.id),
      payments: countRows(app.db, 'SELECT count(*) FROM invoice_payments WHERE invoice_id IN (SELECT id FROM invoices WHERE business_id = ?)', tenant.business.id),
    });

    for (const [what, char] of REFUSED_IN_TEXT) {
      it(`refuses ${what} in an invoice line's description, the invoice's memo, an expense's memo and a payment's memo`, async () => {
        const invoiceId = await sentInvoice();
        const before = written();
        const text = `Consulting ${char}for March`;

        const description = await newInvoice({ lines: [invoiceLine(app, tenant.business.id), invoiceLine(app, tenant.business.id, { description: text })] });
        expectInvalid(description, 'lines.1.description');
        expect(description.body.error.message).to.equal(
          'lines.1.description: must not contain control characters (other than newline and tab) or bidirectional override marks',
        );
        expectInvalid(await newInvoice({ memo: text }), 'memo');
        expectInvalid(await newExpense(text), 'memo');
        expectInvalid(await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '100', method: 'check', memo: text }), 'memo');
        expect(written(), 'nothing written').to.deep.equal(before);
      });
    }

    it('refuses them in a customer\'s address too (422 "addressLine1:")', async () => {
      expectInvalid(await createCustomer({ name: 'Address Co', addressLine1: '1 Main St\u202e' }), 'addressLine1');
    });

    it('accepts newline and tab, and stores them as sent', async () => {
      const text = 'Design work:\n\t- logo\n\t- letterhead';
      const invoice = await newInvoice({ lines: [invoiceLine(app, tenant.business.id, { description: text })], memo: text });
      expect(invoice.status, invoice.text).to.equal(201);
      const stored = app.db.prepare('SELECT i.memo, l.description FROM invoices i JOIN invoice_lines l ON l.invoice_id = i.id WHERE i.id = ?').get(invoice.body.invoiceId);
      expect(stored).to.deep.equal({ memo: text, description: text });

      const expense = await newExpense(text);
      expect(expense.status, expense.text).to.equal(201);
      expect(app.db.prepare('SELECT memo FROM expenses WHERE id = ?').get(expense.body.expenseId)).to.deep.equal({ memo: text });

      const invoiceId = await sentInvoice();
      const payment = await app.post(`/api/v1/invoices/${invoiceId}/payments`, tenant.key, { amountCents: '100', method: 'check', memo: text });
      expect(payment.status, payment.text).to.equal(201);
      expect(app.db.prepare('SELECT memo FROM invoice_payments WHERE id = ?').get(payment.body.paymentId)).to.deep.equal({ memo: text });
    });
  });
});
