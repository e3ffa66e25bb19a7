/**
 * What a setting that can hold a credential (DAYBOOK_SMTP_URL, DAYBOOK_SITE_URL,
 * DAYBOOK_FX_PROVIDER_URL) may show of itself in a message: a refusal at start-up, a warning, a
 * log line. Those messages end up in service logs, which more people read than may know the
 * mail server's password.
 */

/** What stands in for a withheld part. */
export const REDACTED = '***';

/** A scheme as RFC 3986 spells it, with the `//` of an authority. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** Query parameters whose value is a credential by its name (api_key, access_token, pass, tls.key, ...). */
const SECRET_PARAMETER = /([?&][^=&#]*(?:pass|secret|token|key|auth|sig|credential)[^=&#]*=)[^&#]*/gi;

/** An authority that holds no credential: a host name or address, and a port. */
const HOST_AND_PORT = /^(?:[A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]*\])(?::[0-9]*)?$/;

/**
 * `text` with its user information (`user:password@`, both parts: some providers take the API
 * key as the user name) and the values of secret-named query parameters replaced by ***.
 *
 * It works on the text as written, with no URL parser, because the values to hide are above all
 * the ones a parser refuses (`smtp//user:pass@host`, a password with a raw `/` or `#`): the user
 * information runs to the last `@`, and an authority with no `@` that has a colon but is not a
 * host and a port (`smtp://user:pass`) is withheld whole. It hides too much rather than too little.
 */
export function redactUrl(text: string): string {
  const scheme = SCHEME.exec(text)?.[0] ?? '';
  let rest = text.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  if (at >= 0) rest = `${REDACTED}${rest.slice(at)}`;
  else {
    const authority = /^[^/?#]*/.exec(rest)![0];
    if (authority.includes(':') && !HOST_AND_PORT.test(authority)) rest = `${REDACTED}${rest.slice(authority.length)}`;
  }
  return `${scheme}${rest.replace(SECRET_PARAMETER, `$1${REDACTED}`)}`;
}
