import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildApiTenant, sendRaw, type ApiTenant } from '../support/api.js';
import { captureLog, type CapturedLog } from '../support/log-capture.js';
import { addBilledCustomer, createInvoice, invoiceBody, sendInvoice } from '../support/invoicing.js';

const FIELDS = ['requestId', 'method', 'route', 'status', 'durationMs', 'client', 'scheme', 'keyId', 'operationId'];

/** One pino line per request, over real sockets: what it names, and what it never does. */
describe('access log', () => {
  let app: TestApp;
  let tenant: ApiTenant;
  let logged: CapturedLog;

  before(async () => {
    logged = captureLog('info');
    app = await startTestApp(undefined, { log: logged.log });
    tenant = buildApiTenant(app, { plan: 'large' });
  });
  after(() => app.close());

  const lineOf = (res: { headers: Record<string, unknown> }) => logged.accessLine(res.headers['x-request-id'] as string);

  it('names the request id, method, route template, status, duration, client, key id and operation id', async () => {
    const customerId = addBilledCustomer(app, tenant.id);
    const { invoiceId } = await createInvoice(app, tenant.key, invoiceBody(app, tenant.business.id, customerId));
    const res = await app.get(`/api/v1/invoices/${invoiceId}`, tenant.key);
    expect(res.status).to.equal(200);
    const line = await lineOf(res);
    expect(line).to.include({
      level: 30,
      msg: 'request',
      requestId: res.headers['x-request-id'],
      method: 'GET',
      route: '/api/v1/invoices/:id',
      status: 200,
      client: '127.0.0.1',
      scheme: 'http',
      keyId: tenant.keys[0]!.id,
      operationId: 'invoices.get',
    });
    expect(line.durationMs).to.be.a('number').and.to.be.greaterThan(0);
    expect(Object.keys(line)).to.include.members(FIELDS);
  });

  it('never writes the path with its ids, the key, or the body', async () => {
    const secretName = 'Body Secret Customer 7781';
    const res = await app.post('/api/v1/customers', tenant.key, { name: secretName });
    expect(res.status).to.equal(201);
    const line = await lineOf(res);
    const text = JSON.stringify(line);
    expect(line).to.include({ method: 'POST', route: '/api/v1/customers', status: 201, operationId: 'customers.create' });
    expect(text).to.not.include(secretName);
    expect(text).to.not.include(tenant.key);
    expect(text).to.not.include(res.body.id);
  });

  it('logs a refused request: the status it was given, no key id when the key did not work', async () => {
    const res = await app.get('/api/v1/businesses', 'dbk_not_a_working_key');
    expect(res.status).to.equal(401);
    expect(await lineOf(res)).to.include({ status: 401, keyId: null, route: null, operationId: null });
    expect(JSON.stringify(await lineOf(res))).to.not.include('dbk_not_a_working_key');
  });

  it('logs a pay page by its template, never the token', async () => {
    const customerId = addBilledCustomer(app, tenant.id);
    const { invoiceId, webUrl } = await createInvoice(app, tenant.key, invoiceBody(app, tenant.business.id, customerId));
    await sendInvoice(app, tenant.key, invoiceId);
    const path = new URL(webUrl).pathname;
    const res = await app.get(path, null);
    expect(res.status).to.equal(200);
    const line = await lineOf(res);
    expect(line).to.include({ route: '/pay/:token', status: 200, keyId: null, operationId: null });
    expect(JSON.stringify(line)).to.not.include(path.slice('/pay/'.length));
  });

  it('logs an unmatched path with no route (the path itself may carry anything)', async () => {
    const res = await app.get('/no/such/place/secret-token-123', null);
    expect(res.status).to.equal(404);
    const line = await lineOf(res);
    expect(line).to.include({ route: null, status: 404, method: 'GET' });
    expect(JSON.stringify(line)).to.not.include('secret-token-123');
  });

  it('writes exactly one line per request', async () => {
    const res = await app.get('/healthz', null);
    await lineOf(res);
    // A second line for the first request would come before the next request's own.
    await lineOf(await app.get('/healthz', null));
    expect(logged.lines.filter((line) => line.requestId === res.headers['x-request-id'])).to.have.length(1);
  });

  it('logs a request refused before it reached the app (it did not parse), with the 422 it was given and why', async () => {
    const res = await sendRaw(app.url, { method: 'POST', path: '/api/v1/customers', headers: { 'content-length': 'twelve', authorization: `Bearer ${tenant.key}` }, body: Buffer.from('{}') });
    expect(res.status).to.equal(422);
    const line = await lineOf(res);
    expect(line).to.deep.include({ status: 422, method: null, route: null, client: '127.0.0.1', scheme: 'http', keyId: null, operationId: null, refused: 'request is not a well-formed HTTP/1.1 request' });
    expect(JSON.stringify(line)).to.not.include(tenant.key);
  });

  it('is off when DAYBOOK_LOG_LEVEL is above info', async () => {
    const quiet = captureLog('warn');
    const other = await startTestApp(undefined, { log: quiet.log });
    try {
      await other.get('/healthz', null);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(quiet.lines.filter((line) => line.msg === 'request')).to.deep.equal([]);
    } finally {
      await other.close();
    }
  });
});
