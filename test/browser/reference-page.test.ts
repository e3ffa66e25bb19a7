import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { outputPath, startBrowserOrSkip, watchCspViolations, watchPage, type PageProblems } from '../support/browser.js';

/**
 * GET /docs in a real browser: Redoc renders every operation of the served OpenAPI document,
 * under the page's policy, and the page asks nothing of any host but Daybook's own.
 */

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface DocumentedOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
}

/** Every operation of an OpenAPI document, in the document's order. */
function operationsOf(document: { paths: Record<string, Record<string, { operationId: string; summary: string }>> }): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((method) => item[method] !== undefined).map((method) => ({ operationId: item[method]!.operationId, method, path, summary: item[method]!.summary })),
  );
}

/** The origin a request goes to; a blob: address belongs to the origin that made it, data: stays in the page. */
function destination(url: string): string {
  if (url.startsWith('data:')) return 'data:';
  return new URL(url.startsWith('blob:') ? url.slice('blob:'.length) : url).origin;
}

describe('the reference page (GET /docs) in Chromium', function () {
  this.timeout(60_000);
  let browser: Browser;
  let app: TestApp;
  let documented: DocumentedOperation[];

  before(async function () {
    browser = await startBrowserOrSkip(this);
    app = await startTestApp();
    const res = await app.get('/openapi/v1.json', null);
    expect(res.status).to.equal(200);
    documented = operationsOf(res.body);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  interface Visit {
    context: BrowserContext;
    page: Page;
    problems: PageProblems;
    /** Every address the page asked for. */
    requested: string[];
    /** Requests to any origin but the app's, stopped before they left. */
    refused: string[];
  }

  /**
   * Opens /docs and waits until Redoc has rendered the last operation. Every request is recorded;
   * with `stopOthers` one to another origin is also aborted before it leaves. Interception changes
   * how the browser loads a little (it skips the icon, for one), so the rendering test, which holds
   * the page to no console errors, goes without.
   */
  async function visitReference(options: { stopOthers: boolean }): Promise<Visit> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await watchCspViolations(context);
    const requested: string[] = [];
    const refused: string[] = [];
    context.on('request', (request) => requested.push(request.url()));
    if (options.stopOthers) {
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (destination(url) === app.url) return route.continue();
        refused.push(url);
        return route.abort('blockedbyclient');
      });
    }
    const page = await context.newPage();
    const problems = watchPage(page);
    const response = await page.goto(`${app.url}/docs`);
    expect(response?.status()).to.equal(200);
    const last = documented.at(-1)!.operationId;
    await page
      .locator(`[data-section-id="operation/${last}"]`)
      .waitFor({ timeout: 30_000 })
      .catch((error: Error) => {
        throw new Error(`Redoc did not render ${last} (${error.message.split('\n')[0]}); console errors: ${JSON.stringify(problems.consoleErrors)}`);
      });
    await page.waitForLoadState('networkidle');
    return { context, page, problems, requested, refused };
  }

  it('the served document has the 22 operations of the contract', () => {
    expect(documented).to.have.lengthOf(22);
    expect(new Set(documented.map((operation) => operation.operationId)).size, 'each operationId once').to.equal(22);
  });

  it('renders every operation of the served document: in the menu, and as a section with its summary, method and path', async () => {
    const visit = await visitReference({ stopOthers: false });
    try {
      const { page } = visit;
      const sections = await page.locator('[data-section-id^="operation/"]').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-section-id')!.slice('operation/'.length)));
      expect([...sections].sort()).to.deep.equal(documented.map((operation) => operation.operationId).sort());
      expect(sections, 'the count the issue states').to.have.lengthOf(22);
      const menuItems = await page.locator('[data-item-id*="/operation/"]').count();
      expect(menuItems, 'one menu entry per operation').to.equal(documented.length);

      for (const operation of documented) {
        const section = page.locator(`[data-section-id="operation/${operation.operationId}"]`);
        expect(await section.locator('h2').first().innerText(), operation.operationId).to.equal(operation.summary);
        const text = await section.innerText();
        expect(text.toLowerCase(), `${operation.operationId}: method`).to.include(operation.method);
        expect(text, `${operation.operationId}: path`).to.include(operation.path);
      }
      await page.screenshot({ path: outputPath('reference-page.png') });

      expect([...new Set(visit.requested.map(destination))], 'origins asked').to.deep.equal([app.url]);
      expect(visit.problems.consoleErrors, 'console errors').to.deep.equal([]);
      expect(visit.problems.pageErrors, 'uncaught errors').to.deep.equal([]);
      expect(visit.problems.cspMessages, 'console messages about the policy').to.deep.equal([]);
      expect(await visit.problems.cspViolations(), 'securitypolicyviolation events').to.deep.equal([]);
    } finally {
      await visit.context.close();
    }
  });

  it('asks nothing of any host but Daybook’s own, loading or searching (any other request is stopped and fails the test)', async () => {
    const visit = await visitReference({ stopOthers: true });
    try {
      // A search runs in Redoc's worker (made from a blob of its own script) and fills in more of the page.
      await visit.page.getByRole('textbox', { name: 'Search' }).fill('invoice');
      const results = visit.page.locator('[data-role="search:results"] li');
      await results.first().waitFor({ timeout: 10_000 });
      expect(await results.allInnerTexts()).to.include.members(['GET\nGet one invoice', 'POST\nSend a draft: post it and email it']);
      await visit.page.waitForLoadState('networkidle');

      expect(visit.refused, 'requests to other hosts').to.deep.equal([]);
      expect([...new Set(visit.requested.map(destination))], 'origins asked').to.deep.equal([app.url]);
      expect(visit.requested.map((url) => new URL(url).pathname)).to.include.members(['/docs', '/docs/redoc.standalone.js', '/docs/reference.js', '/openapi/v1.json']);
      expect(await visit.problems.cspViolations(), 'securitypolicyviolation events').to.deep.equal([]);
    } finally {
      await visit.context.close();
    }
  });
});
