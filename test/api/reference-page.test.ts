import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/app.js';

/** GET /docs: the reference page, its scripts served by Daybook itself, under a strict policy. */
describe('the reference page (GET /docs)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const policy = (csp: string): Map<string, string> => new Map(csp.split('; ').map((directive) => [directive.split(' ')[0]!, directive.slice(directive.indexOf(' ') + 1)]));

  it('serves HTML that loads only scripts from Daybook, and the document from /openapi/v1.json', async () => {
    const res = await app.get('/docs', null);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    const sources = [...res.text.matchAll(/<script src="([^"]+)"><\/script>/g)].map((match) => match[1]);
    expect(sources).to.deep.equal(['/docs/redoc.standalone.js', '/docs/reference.js']);
    expect(res.text).not.to.match(/<script>|<style|https?:\/\//);
    expect(res.text).to.contain('data-spec-url="/openapi/v1.json"');
  });

  it('sends a strict policy: no inline script, inline styles only with the nonce made for this page', async () => {
    const [first, second] = [await app.get('/docs', null), await app.get('/docs', null)];
    const csp = policy(String(first.headers['content-security-policy']));
    expect(csp.get('default-src')).to.equal("'none'");
    expect(csp.get('script-src')).to.equal("'self'");
    const nonce = /data-nonce="([^"]+)"/.exec(first.text)![1]!;
    expect(nonce).to.have.length.greaterThan(20);
    const [self, pageNonce, ...hashes] = csp.get('style-src')!.split(' ');
    expect([self, pageNonce]).to.deep.equal(["'self'", `'nonce-${nonce}'`]);
    // Besides the nonce, only styles of known content (Redoc's own, inserted before it has the nonce).
    for (const hash of hashes) expect(hash).to.match(/^'sha256-[A-Za-z0-9+/]{43}='$/);
    expect(csp.get('connect-src')).to.equal("'self'");
    expect(csp.get('frame-ancestors')).to.equal("'none'");
    expect(second.text).not.to.contain(nonce);
    expect(first.headers).to.include({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
  });

  it("serves Redoc's bundle and the starter script as JavaScript", async () => {
    const bundle = await app.get('/docs/redoc.standalone.js', null);
    expect(bundle.status).to.equal(200);
    expect(bundle.headers['content-type']).to.equal('application/javascript; charset=utf-8');
    expect(bundle.text.length).to.be.greaterThan(500_000);
    expect(bundle.text).to.contain('Redoc');
    // The one thing the bundle would fetch from another host, its credit's logo, is drawn in place.
    expect(bundle.text).not.to.contain('cdn.redoc.ly');
    const start = await app.get('/docs/reference.js', null);
    expect(start.status).to.equal(200);
    expect(start.text).to.match(/Redoc\.init\(element\.dataset\.specUrl, \{ nonce: element\.dataset\.nonce/);
  });

  it('answers only GET: a POST to /docs is the JSON 404', async () => {
    const res = await app.request('POST', '/docs', { body: {} });
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('not_found');
  });
});
