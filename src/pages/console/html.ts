import { escapeHtml } from '../../books/invoice-mail.js';

/**
 * The console's pages: plain server-rendered HTML, one stylesheet, one small script and an icon
 * of our own (served from /console/assets/), every stored text escaped. The policy lets nothing else
 * load or run, forms go only to the console itself, and no page may be framed.
 */

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const e = escapeHtml;

/** The console's sections, in the order the navigation lists them. */
const SECTIONS = [
  ['today', 'Today'],
  ['review', 'Review queue'],
  ['keys', 'API keys'],
  ['audit', 'Audit trail'],
] as const;

export type Section = (typeof SECTIONS)[number][0];

export interface PageFrame {
  title: string;
  /** The section shown, for the navigation; none on the sign-in pages. */
  section?: Section;
  /** The account's name, shown in the header of a signed-in page. */
  accountName?: string;
  /** The session's CSRF token, for the sign-out form. */
  csrf?: string;
}

/** A whole page: the frame (header, navigation, sign-out) around `body`. */
export function page(frame: PageFrame, body: string): string {
  const nav =
    frame.csrf === undefined
      ? ''
      : `<header class="top"><p class="account">${e(frame.accountName ?? '')}</p><nav aria-label="Console"><ul>${SECTIONS.map(
          ([section, label]) => `<li><a href="/console/${section}"${section === frame.section ? ' aria-current="page"' : ''}>${label}</a></li>`,
        ).join('')}</ul></nav>${form('/console/sign-out', frame.csrf, '<button type="submit" class="link">Sign out</button>', 'sign-out')}</header>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(frame.title)} · Daybook console</title>
<link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
${nav}
<main id="main">
<h1>${e(frame.title)}</h1>
${body}
</main>
</body>
</html>`;
}

/** A POST form carrying the session's CSRF token. */
export function form(action: string, csrf: string, inner: string, className = ''): string {
  return `<form method="post" action="${e(action)}"${className ? ` class="${className}"` : ''}><input type="hidden" name="_csrf" value="${e(csrf)}">${inner}</form>`;
}

/** A short notice above a page's content: what just happened, or why nothing did. */
export function notice(text: string, kind: 'ok' | 'problem' = 'ok'): string {
  return `<p class="notice ${kind}" role="${kind === 'problem' ? 'alert' : 'status'}">${e(text)}</p>`;
}

/** A `<select>` of options, the one matching `selected` chosen. */
export function select(name: string, label: string, options: readonly (readonly [value: string, text: string])[], selected?: string): string {
  const id = `field-${name}`;
  return `<label for="${id}">${e(label)}</label><select id="${id}" name="${e(name)}">${options
    .map(([value, text]) => `<option value="${e(value)}"${value === selected ? ' selected' : ''}>${e(text)}</option>`)
    .join('')}</select>`;
}
