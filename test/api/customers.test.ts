import { expect } from 'chai';
import type { TestApp } from '../support/app.js';
import { buildApiTenant, countRows, expectInvalid, rateLimitHeaders, setTenant, type ApiTenant, useTenantApp } from '../support/api.js';

interface CustomerRow {
  id: string;
  tenant_id: string;
  name: string;
  email: string | null;
  phone: string | null;
  address_line1: string | null;
  address_line2: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
  currency: string;
  payment_terms_days: bigint | null;
  reminders_enabled: bigint;
  archived: bigint;
}

describe('POST /customers', () => {
  let app: TestApp;
  let tenant: ApiTenant;

  useTenantApp((started) => ({ app, tenant } = started));

  const customer = (id: string): CustomerRow => app.db.prepare('SELECT * FROM customers WHERE id = ?').get(id) as CustomerRow;
  const customersOf = (tenantId: string): number => countRows(app.db, 'SELECT count(*) FROM customers WHERE tenant_id = ?', tenantId);
  const create = (body: unknown, key = tenant.key) => app.post('/api/v1/customers', key, body);

  it('creates a customer with every field (201 {id, created: true})', async () => {
    const res = await create({
      name: 'Acme Roofing',
      email: 'ap@acme.example',
      phone: '+1 555 0100',
      addressLine1: '1 Main St',
      addressLine2: 'Suite 2',
      city: 'Springfield',
      state: 'IL',
      postalCode: '62701',
      currency: 'CAD',
      paymentTermsDays: 45,
      remindersEnabled: true,
    });
    expect(res.status, res.text).to.equal(201);
    expect(Object.keys(res.body).sort()).to.deep.equal(['created', 'id']);
    expect(res.body.created).to.equal(true);
    expect(res.body.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    rateLimitHeaders(res);
    expect(customer(res.body.id)).to.deep.include({
      tenant_id: tenant.id,
      name: 'Acme Roofing',
      email: 'ap@acme.example',
      phone: '+1 555 0100',
      address_line1: '1 Main St',
      address_line2: 'Suite 2',
      city: 'Springfield',
      state: 'IL',
      postal_code: '62701',
      currency: 'CAD',
      payment_terms_days: 45n,
      reminders_enabled: 1n,
      archived: 0n,
    });
  });

  it('creates a customer from a name alone, with USD and no terms (201)', async () => {
    const res = await create({ name: 'Bare Name LLC' });
    expect(res.status).to.equal(201);
    expect(customer(res.body.id)).to.deep.include({ email: null, currency: 'USD', payment_terms_days: null, reminders_enabled: 0n });
  });

  it('returns the existing customer for the same name in another case (200 {id, created: false}), ignoring other fields', async () => {
    const first = await create({ name: 'ACME Widgets', email: 'first@acme.example', currency: 'USD' });
    expect(first.status).to.equal(201);
    const before = customersOf(tenant.id);

    const again = await create({ name: 'acme widgets', email: 'second@acme.example', currency: 'EUR', paymentTermsDays: 10 });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ id: first.body.id, created: false });
    expect(customersOf(tenant.id)).to.equal(before);
    expect(customer(first.body.id)).to.deep.include({ name: 'ACME Widgets', email: 'first@acme.example', currency: 'USD', payment_terms_days: null });
  });

  it('matches names case-insensitively beyond ASCII (ÉCOLE and école, 200)', async () => {
    const first = await create({ name: 'ÉCOLE Dupont' });
    expect(first.status).to.equal(201);
    const again = await create({ name: 'école dupont' });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ id: first.body.id, created: false });
  });

  it('matches a name written with a combining accent to its composed form (200)', async () => {
    const first = await create({ name: 'Caf\u00e9 Central' });
    const again = await create({ name: 'CAFE\u0301 CENTRAL' });
    expect(again.status).to.equal(200);
    expect(again.body.id).to.equal(first.body.id);
  });

  it('does not match names that differ by more than case (201)', async () => {
    const first = await create({ name: 'Smith & Sons' });
    const second = await create({ name: 'Smith and Sons' });
    // A trailing space is no difference (test/api/look-alike-names.test.ts); a missing letter is.
    const third = await create({ name: 'Smith & Son' });
    expect([first.status, second.status, third.status]).to.deep.equal([201, 201, 201]);
  });

  it('skips archived customers: the same name creates a new one (201)', async () => {
    const first = await create({ name: 'Archived Bakery' });
    app.db.prepare('UPDATE customers SET archived = 1 WHERE id = ?').run(first.body.id);
    const again = await create({ name: 'archived bakery' });
    expect(again.status).to.equal(201);
    expect(again.body.created).to.equal(true);
    expect(again.body.id).to.not.equal(first.body.id);
    const third = await create({ name: 'ARCHIVED BAKERY' });
    expect(third.status).to.equal(200);
    expect(third.body.id).to.equal(again.body.id);
  });

  it('keeps customers per account: another account\'s customer of the same name is not returned (201)', async () => {
    const mine = await create({ name: 'Shared Name Inc' });
    const other = buildApiTenant(app);
    const theirs = await create({ name: 'Shared Name Inc' }, other.key);
    expect(theirs.status).to.equal(201);
    expect(theirs.body.id).to.not.equal(mine.body.id);
    expect(customer(theirs.body.id).tenant_id).to.equal(other.id);
  });

  it('records the write in the audit log under the key\'s name (actor_type api_key)', async () => {
    const res = await create({ name: 'Audited Co' });
    const rows = app.db
      .prepare("SELECT actor_type, actor_id, actor_name, action, subject_type, tenant_id FROM audit_log WHERE subject_id = ?")
      .all(res.body.id);
    expect(rows).to.deep.equal([
      {
        actor_type: 'api_key',
        actor_id: tenant.keys[0]!.id,
        actor_name: tenant.keys[0]!.name,
        action: 'customer.create',
        subject_type: 'customer',
        tenant_id: tenant.id,
      },
    ]);
  });

  it('records a request that returns an existing customer as customer.match under the key\'s name (authentication rule 9)', async () => {
    const first = await create({ name: 'Quiet Co' });
    await create({ name: 'QUIET CO' });
    const rows = app.db
      .prepare('SELECT action, actor_name, detail_json FROM audit_log WHERE subject_id = ? ORDER BY id')
      .all(first.body.id) as { action: string; actor_name: string; detail_json: string }[];
    expect(rows.map((row) => [row.action, row.actor_name, JSON.parse(row.detail_json)])).to.deep.equal([
      ['customer.create', tenant.keys[0]!.name, { name: 'Quiet Co' }],
      ['customer.match', tenant.keys[0]!.name, { name: 'QUIET CO' }],
    ]);
  });

  it('still creates customers while billing is past due (201: it posts nothing)', async () => {
    const pastDue = buildApiTenant(app);
    setTenant(app, pastDue.id, { billingState: 'past_due' });
    const res = await create({ name: 'Past Due Client' }, pastDue.key);
    expect(res.status, res.text).to.equal(201);
    expect(customer(res.body.id).tenant_id).to.equal(pastDue.id);
    expect((await app.get('/api/v1/businesses', pastDue.key)).status).to.equal(200);
  });

  describe('body validation (422 validation_failed naming the field)', () => {
    const invalid: Array<[label: string, body: unknown, field: string]> = [
      ['a missing name', { email: 'a@b.example' }, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
      ['a name of only spaces', { name: '   ' }, 'name'],
      ['a name with a control character', { name: 'Null\u0000Co' }, 'name'],
      ['a name that is a number', { name: 42 }, 'name'],
      ['a null name', { name: null }, 'name'],
      ['an email that is not an address', { name: 'Mail Co', email: 'nobody' }, 'email'],
      ['an email over 320 characters', { name: 'Mail Co', email: `${'a'.repeat(64)}@${'b'.repeat(250)}.example` }, 'email'],
      ['a null email', { name: 'Mail Co', email: null }, 'email'],
      ['a phone over 40 characters', { name: 'Phone Co', phone: '1'.repeat(41) }, 'phone'],
      ['addressLine1 over 200 characters', { name: 'Addr Co', addressLine1: 'a'.repeat(201) }, 'addressLine1'],
      ['addressLine2 over 200 characters', { name: 'Addr Co', addressLine2: 'a'.repeat(201) }, 'addressLine2'],
      ['city over 200 characters', { name: 'Addr Co', city: 'a'.repeat(201) }, 'city'],
      ['state over 200 characters', { name: 'Addr Co', state: 'a'.repeat(201) }, 'state'],
      ['postalCode over 200 characters', { name: 'Addr Co', postalCode: 'a'.repeat(201) }, 'postalCode'],
      ['an unsupported currency', { name: 'Yen Co', currency: 'JPY' }, 'currency'],
      ['a lowercase currency', { name: 'Usd Co', currency: 'usd' }, 'currency'],
      ['paymentTermsDays over 365', { name: 'Terms Co', paymentTermsDays: 366 }, 'paymentTermsDays'],
      ['paymentTermsDays below 0', { name: 'Terms Co', paymentTermsDays: -1 }, 'paymentTermsDays'],
      ['a fractional paymentTermsDays', { name: 'Terms Co', paymentTermsDays: 30.5 }, 'paymentTermsDays'],
      ['paymentTermsDays as a string', { name: 'Terms Co', paymentTermsDays: '30' }, 'paymentTermsDays'],
      ['remindersEnabled as a string', { name: 'Remind Co', remindersEnabled: 'true' }, 'remindersEnabled'],
      ['remindersEnabled as a number', { name: 'Remind Co', remindersEnabled: 1 }, 'remindersEnabled'],
      ['an id field', { name: 'Id Co', id: '00000000-0000-4000-8000-000000000000' }, 'id'],
    ];
    for (const [label, body, field] of invalid) {
      it(`refuses ${label} ("${field}:")`, async () => {
        const before = customersOf(tenant.id);
        expectInvalid(await create(body), field);
        expect(customersOf(tenant.id)).to.equal(before);
      });
    }

    it('accepts every text field at its maximum length, and the bounds of paymentTermsDays (201)', async () => {
      const atMax = await create({
        name: 'm'.repeat(200),
        phone: '1'.repeat(40),
        addressLine1: 'a'.repeat(200),
        addressLine2: 'a'.repeat(200),
        city: 'c'.repeat(200),
        state: 's'.repeat(200),
        postalCode: 'p'.repeat(200),
        paymentTermsDays: 365,
        remindersEnabled: false,
      });
      expect(atMax.status, atMax.text).to.equal(201);
      const zero = await create({ name: 'Zero Terms Co', paymentTermsDays: 0, currency: 'MXN' });
      expect(zero.status, zero.text).to.equal(201);
      expect(customer(zero.body.id)).to.deep.include({ payment_terms_days: 0n, currency: 'MXN' });
    });

    it('counts name length in characters, not bytes (200 accented characters, 201)', async () => {
      const res = await create({ name: '\u00e9'.repeat(200) });
      expect(res.status, res.text).to.equal(201);
    });
  });
});
