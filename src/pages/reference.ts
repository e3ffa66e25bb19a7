import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { projectRoot } from '../paths.js';

/**
 * GET /docs: the OpenAPI document rendered as a reference by Redoc, whose script Daybook
 * serves itself (self-hosted networks may be offline, and no page of Daybook loads anything
 * from another host). Scripts come only from Daybook's own origin; the styles Redoc injects
 * carry a nonce made fresh for each page, so the policy allows no other inline style.
 */

/** Where the build copies Redoc's bundle (a production install has only this), else the installed package. */
export function referenceBundlePath(): string | null {
  const built = join(projectRoot, 'dist/assets/redoc.standalone.js');
  if (existsSync(built)) return built;
  try {
    return createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  } catch {
    return null;
  }
}

export const REFERENCE_SCRIPT_PATH = '/docs/redoc.standalone.js';
export const REFERENCE_START_PATH = '/docs/reference.js';

/** Starts Redoc on the page's one element, handing it the page's nonce for the styles it injects. */
export const REFERENCE_START_SCRIPT = `'use strict';
const element = document.getElementById('reference');
Redoc.init(element.dataset.specUrl, { nonce: element.dataset.nonce, expandResponses: '200,201', hideHostname: false, sortTagsAlphabetically: true }, element);
`;

export function referenceNonce(): string {
  return randomBytes(18).toString('base64');
}

/**
 * Redoc 2.5.4's bundle (the pinned version) inserts two style elements as it loads, before it
 * is handed the nonce: an empty one and its scrollbar stylesheet. They are allowed by their
 * hashes alone; a newer bundle with other styles would be refused, and the browser test of
 * this page would say so.
 */
const BUNDLE_LOAD_STYLE_HASHES = ["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='"];

export function referencePageCsp(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}' ${BUNDLE_LOAD_STYLE_HASHES.join(' ')}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    // Redoc runs its search index in a worker it makes from a blob of its own script.
    'worker-src blob:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The empty icon stops the browser asking for /favicon.ico, which Daybook does not serve (a 404 on every visit). */
export function renderReferencePage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Daybook API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="reference" data-spec-url="/openapi/v1.json" data-nonce="${nonce}"></div>
<noscript>The reference needs JavaScript; the contract itself is at <a href="/openapi/v1.json">/openapi/v1.json</a>.</noscript>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
<script src="${REFERENCE_START_PATH}"></script>
</body>
</html>
`;
}

/**
 * Redoc's sidebar credit ("API docs by Redocly") shows a logo fetched from its CDN. Served
 * Daybook's way, the credit stays and its logo is an empty image drawn in place, so opening
 * the reference sends nothing to another host.
 */
const CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const BLANK_LOGO = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';

/** The bundle's text as served, read once. */
let bundle: string | undefined;
export function referenceBundle(path: string): string {
  bundle ??= readFileSync(path, 'utf8').replaceAll(CDN_LOGO, BLANK_LOGO);
  return bundle;
}
