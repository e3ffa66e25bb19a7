import { isIP } from 'node:net';

/**
 * DAYBOOK_SMTP_URL as start-up (src/config.ts) and the mailer both read it, so what start-up
 * accepts is what the mailer does.
 *
 * `smtp://` requires STARTTLS: a server that does not offer it is refused before the login or any
 * email is sent. Without that, anyone on the path could strip the server's offer and read the
 * password and every email (pay links, invoice PDFs). `?tls=off` is the one way out, for a relay
 * without TLS the operator trusts; it is Daybook's own parameter and never reaches nodemailer.
 * `smtps://` is TLS from the first byte, as before.
 */

/** `implicit`: smtps://. `starttls`: smtp://, which must upgrade. `off`: smtp:// with ?tls=off. */
export type SmtpTls = 'implicit' | 'starttls' | 'off';

export interface SmtpSettings {
  /** The URL nodemailer reads: the one given, less Daybook's own ?tls. */
  transportUrl: string;
  tls: SmtpTls;
  /** Whether the server is this machine (localhost, 127.0.0.0/8, ::1): mail to it never crosses a network. */
  loopback: boolean;
}

/** The opt-out as messages name it. */
export const TLS_OFF = '?tls=off';

/**
 * nodemailer options a query may set that would let smtp:// go on unencrypted after all (its
 * query options win over the ones the mailer passes), each with the one value that agrees with
 * requiring STARTTLS.
 */
const STARTTLS_OPTIONS: Readonly<Record<string, string>> = { requireTLS: 'true', ignoreTLS: 'false', opportunisticTLS: 'false' };

/** Reads and checks an SMTP URL; a problem throws an Error saying what to write instead (never echoing the URL). */
export function readSmtpUrl(text: string): SmtpSettings {
  const url = parseSmtpUrl(text);
  const tls = tlsOf(url);
  if (tls === 'starttls') checkNothingUndoesStartTls(url.searchParams);
  if (tls === 'off' && url.searchParams.has('requireTLS')) {
    throw new Error(`${TLS_OFF} and ?requireTLS contradict each other: leave ?requireTLS out`);
  }
  return { transportUrl: withoutTlsParameter(text, url), tls, loopback: isLoopbackHost(url.hostname) };
}

function parseSmtpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('must be an smtp:// or smtps:// URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error('must be an smtp:// or smtps:// URL');
  return url;
}

function tlsOf(url: URL): SmtpTls {
  const values = url.searchParams.getAll('tls');
  if (values.length === 0) return url.protocol === 'smtps:' ? 'implicit' : 'starttls';
  if (values.length > 1 || values[0] !== 'off') throw new Error(`?tls takes one value, off (${TLS_OFF}: send over smtp:// without requiring STARTTLS)`);
  if (url.protocol === 'smtps:') throw new Error(`${TLS_OFF} is for smtp:// only: smtps:// is encrypted from the first byte`);
  return 'off';
}

function checkNothingUndoesStartTls(params: URLSearchParams): void {
  for (const [name, required] of Object.entries(STARTTLS_OPTIONS)) {
    if (params.getAll(name).some((value) => value !== required)) {
      throw new Error(
        `?${name} may only be ${required} here: smtp:// requires STARTTLS, so the password and the emails are never sent unencrypted; to send to a relay without STARTTLS that you trust, write ${TLS_OFF} instead`,
      );
    }
  }
}

/** The URL as given when it has no ?tls (nothing re-encoded); else rebuilt without it. */
function withoutTlsParameter(text: string, url: URL): string {
  if (!url.searchParams.has('tls')) return text;
  const rebuilt = new URL(url.href);
  rebuilt.searchParams.delete('tls');
  return rebuilt.href;
}

/** localhost, 127.0.0.0/8 or ::1 (as a URL writes it, in brackets; or IPv4-mapped). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^::ffff:7f[0-9a-f]{2}:/.test(host);
  return false;
}
