// The functions these tests hand to the page run there: type-check them against the browser's globals.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import axe from 'axe-core';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { projectRoot } from '../../src/paths.js';

/**
 * The real-browser tests drive Debian's `chromium` with playwright-core: headless, quiet
 * (nothing it does on its own reaches the network) and found the same way on every machine.
 * Where it is missing the tests skip, except in CI, which installs it (.ci/run) and must run them.
 */

/** Where the browser tests write what a person may want to look at (screenshots, printed PDFs). Ignored by git. */
export const BROWSER_OUTPUT_DIR = join(projectRoot, 'test-output', 'browser');

/** The program names tried on PATH, in order, when DAYBOOK_CHROMIUM does not name one. */
const CHROMIUM_NAMES = ['chromium', 'chromium-browser'] as const;

/**
 * Switches that stop Chromium calling home: no field trials, component or extension updates,
 * sync, default apps, crash or metrics uploads, phishing model, domain-reliability beacons or
 * hyperlink pings. playwright-core passes most of these already; naming them here keeps them
 * if its defaults change. The resolver rule makes every host but 127.0.0.1 (where the tests
 * serve the app) fail to resolve, so even a request something forgot to switch off cannot
 * leave the machine.
 */
export const QUIET_CHROMIUM_ARGS: readonly string[] = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-field-trial-config',
  '--disable-breakpad',
  '--disable-crash-reporter',
  '--metrics-recording-only',
  '--disable-client-side-phishing-detection',
  '--disable-domain-reliability',
  '--no-pings',
  '--no-first-run',
  '--no-default-browser-check',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

export type ChromiumLookup = { found: true; path: string } | { found: false; why: string };

/** DAYBOOK_CHROMIUM when set (a path, or a name looked up on PATH), else `chromium` or `chromium-browser` on PATH. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): ChromiumLookup {
  const asked = env.DAYBOOK_CHROMIUM;
  if (asked !== undefined && asked !== '') {
    const path = isAbsolute(asked) || asked.includes('/') ? (isExecutable(asked) ? asked : null) : onPath(asked, env);
    return path ? { found: true, path } : { found: false, why: `DAYBOOK_CHROMIUM=${asked} names no executable file` };
  }
  for (const name of CHROMIUM_NAMES) {
    const path = onPath(name, env);
    if (path) return { found: true, path };
  }
  return { found: false, why: `neither ${CHROMIUM_NAMES.join(' nor ')} is on PATH (apt-get install chromium, or set DAYBOOK_CHROMIUM)` };
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The browser for a suite's `before` hook. Without Chromium the suite is skipped, except under
 * CI=true, where a missing browser is a failure: CI installs it and must run these tests.
 */
export async function startBrowserOrSkip(context: Mocha.Context): Promise<Browser> {
  const lookup = findChromium();
  if (!lookup.found) {
    if (process.env.CI === 'true') throw new Error(`Chromium is missing: ${lookup.why}. CI must run the browser tests (.ci/run installs it)`);
    console.warn(`      skipped: ${lookup.why}; CI runs these tests`);
    context.skip(); // reason: Chromium is not installed on this machine; CI installs it and never skips (see above)
  }
  return startBrowser(lookup.path);
}

/**
 * Headless Chromium at `executablePath`. Its sandbox is off: Chromium refuses to start as root
 * with it, and CI containers often lack the user namespaces it needs; these tests open only
 * pages the suite's own server serves on loopback.
 */
export async function startBrowser(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    chromiumSandbox: false,
    args: [...QUIET_CHROMIUM_ARGS],
    timeout: 30_000,
  });
}

/** Creates the output folder and returns the path of `name` inside it. */
export function outputPath(name: string): string {
  mkdirSync(BROWSER_OUTPUT_DIR, { recursive: true });
  return join(BROWSER_OUTPUT_DIR, name);
}

/** What a page did wrong while it was watched: console errors, uncaught exceptions and Content-Security-Policy violations. */
export interface PageProblems {
  consoleErrors: string[];
  pageErrors: string[];
  /** Console messages of any level that speak of the Content-Security-Policy. */
  cspMessages: string[];
  /** The `securitypolicyviolation` events the page fired, read by `cspViolations()`. */
  cspViolations(): Promise<string[]>;
}

/**
 * Records a `securitypolicyviolation` listener into every document the context opens (an init
 * script, which the page's own policy does not govern), so a refused script, style or load is
 * seen even when the browser says nothing on the console.
 */
export async function watchCspViolations(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const seen: string[] = [];
    Object.defineProperty(window, '__cspViolations', { value: seen });
    document.addEventListener('securitypolicyviolation', (event) => {
      seen.push(`${event.effectiveDirective} refused ${event.blockedURI || '(inline)'} at ${event.sourceFile}:${event.lineNumber}`);
    });
  });
}

/** Listens to `page` from now on; the context must have had watchCspViolations. */
export function watchPage(page: Page): PageProblems {
  const problems = {
    consoleErrors: [] as string[],
    pageErrors: [] as string[],
    cspMessages: [] as string[],
    cspViolations: () => page.evaluate(() => [...((window as unknown as { __cspViolations?: string[] }).__cspViolations ?? ['(the violation listener is missing)'])]),
  };
  page.on('console', (message) => {
    const text = `${message.type()}: ${message.text()} (${message.location().url})`;
    if (message.type() === 'error') problems.consoleErrors.push(text);
    if (/content.security.policy/i.test(message.text())) problems.cspMessages.push(text);
  });
  page.on('pageerror', (error) => problems.pageErrors.push(String(error)));
  return problems;
}

/**
 * Runs axe-core on the page and returns its serious and critical findings, each with the
 * elements it names. Evaluated through the DevTools protocol, which the page's
 * Content-Security-Policy does not govern: the page keeps its real policy (no inline script),
 * so the test sees it as a visitor does.
 */
export async function seriousAccessibilityFindings(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
  const results = await page.evaluate(() => (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }));
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
}
