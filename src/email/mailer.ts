import { domainToASCII } from 'node:url';
import { createRequire } from 'node:module';
import type nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { ConfigError } from '../config.js';
import type { Logger } from '../log.js';
import { redactUrl } from '../redact.js';
import { readSmtpUrl, type SmtpSettings, TLS_OFF } from '../smtp-url.js';

/** One email to one recipient; `from` is the mailer's own (config mailFrom). */
export interface MailMessage {
  /**
   * The outbox email's id. The Message-ID is made from it, so a copy sent again after a crash
   * (see deliverEmails) is the same message to the recipient's mail system, which can drop it.
   */
  id: string;
  /** One bare address. */
  to: string;
  subject: string;
  text: string;
  /** An empty string sends the text part alone. */
  html: string;
  /** Files sent with the message (an invoice's PDF); empty for none. */
  attachments: MailAttachment[];
}

/** One file attached to an email. */
export interface MailAttachment {
  /** Plain characters only (e.g. INV-0001.pdf): it goes into the part's headers. */
  filename: string;
  contentType: string;
  content: Buffer;
}

/** Where outbox emails go. send() resolves once the server accepted the message, or throws. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export interface MailerConfig {
  smtpUrl: string | null;
  mailFrom: string;
}

/**
 * Delivery is tried right after a write commits, before the response, so a dead or stalled
 * server must fail fast: the job pool retries later. A query parameter in the SMTP URL
 * (e.g. ?connectionTimeout=10000) overrides these.
 */
export const SMTP_TIMEOUTS_MS = {
  dnsTimeout: 5_000,
  connectionTimeout: 5_000,
  greetingTimeout: 5_000,
  socketTimeout: 15_000,
} as const;

/**
 * An SMTP mailer when an SMTP URL is set; otherwise a LogMailer (mail goes to the log). Built at
 * start-up: a ?tls=off for a server that is not this machine is warned about here, once.
 */
export function createMailer(config: MailerConfig, log: Logger): Mailer {
  if (config.smtpUrl === null) return new LogMailer(log);
  const settings = readSmtpUrl(config.smtpUrl);
  if (settings.tls === 'off' && !settings.loopback) {
    log.warn(
      { smtpUrl: redactUrl(config.smtpUrl) },
      `DAYBOOK_SMTP_URL has ${TLS_OFF} for a mail server that is not this machine: if it offers no STARTTLS, the password and every email (pay links, invoice PDFs) cross the network unencrypted`,
    );
  }
  return new SmtpMailer(settings, config.mailFrom);
}

/**
 * nodemailer, loaded when an SMTP mailer is built: a server that logs its mail instead never
 * holds its 18 MB. Required (nodemailer is CommonJS), so building the mailer stays synchronous.
 */
const require = createRequire(import.meta.url);
function loadNodemailer(): { nodemailer: typeof nodemailer; SMTPTransport: typeof SMTPTransport } {
  return { nodemailer: require('nodemailer') as typeof nodemailer, SMTPTransport: require('nodemailer/lib/smtp-transport/index.js') as typeof SMTPTransport };
}

class SmtpMailer implements Mailer {
  private readonly transport: nodemailer.Transporter<SMTPTransport.SentMessageInfo>;
  private readonly messageIdDomain: string;

  constructor(settings: SmtpSettings, mailFrom: string) {
    const { nodemailer, SMTPTransport } = loadNodemailer();
    // createTransport({ url, ... }) would drop every option beside the URL: build the transport here.
    const smtp = new SMTPTransport({ url: settings.transportUrl, ...SMTP_TIMEOUTS_MS, requireTLS: settings.tls === 'starttls' });
    assertStartTlsRequired(settings, smtp.options);
    this.transport = nodemailer.createTransport(smtp, { from: mailFrom });
    this.messageIdDomain = messageIdDomain(mailFrom);
  }

  async send(message: MailMessage): Promise<void> {
    let info: SMTPTransport.SentMessageInfo;
    try {
      info = await this.transport.sendMail({
        messageId: `<${message.id}@${this.messageIdDomain}>`,
        // An address object is taken as one address; a string would be parsed as a list.
        to: { name: '', address: message.to },
        subject: message.subject,
        text: message.text,
        ...(message.html === '' ? {} : { html: message.html }),
        attachments: message.attachments,
      });
    } catch (error) {
      throw startTlsRefusal(error) ?? error;
    }
    if (info.rejected.length > 0 || info.accepted.length === 0) {
      throw new Error(`the SMTP server did not accept the recipient: ${info.response}`);
    }
  }

  close(): void {
    this.transport.close();
  }
}

/**
 * The options nodemailer ended with must still require STARTTLS where the settings do. A query
 * option wins over the ones passed beside the URL: readSmtpUrl refuses the ones that would undo
 * it, but a well-known service (?service=Maildev) brings options of its own.
 */
function assertStartTlsRequired(settings: SmtpSettings, options: SMTPTransport.Options): void {
  if (settings.tls !== 'starttls') return;
  if (options.secure === true || (options.requireTLS === true && !options.ignoreTLS && !options.opportunisticTLS)) return;
  throw new ConfigError(`DAYBOOK_SMTP_URL: its options (a ?service among them) turn STARTTLS off, which smtp:// requires; for a relay without STARTTLS that you trust, add ${TLS_OFF}`);
}

/** The code of the error a send fails with when the server offered no STARTTLS on an smtp:// URL that requires it. */
export const NO_STARTTLS = 'ENOSTARTTLS';

/**
 * nodemailer's error when the server answered STARTTLS with a refusal (it did not offer it: with
 * requireTLS nodemailer asks anyway), as one that says what happened and what to do. Nothing was
 * sent on that connection but EHLO and STARTTLS. Its reply code and command are kept, so the
 * outbox retries it like any refusal of the session (a settings problem: once fixed, the retries
 * deliver). Any other error (a certificate that fails the check, among others): null.
 */
function startTlsRefusal(error: unknown): Error | null {
  if (!(error instanceof Error)) return null;
  const { code, command, responseCode, response } = error as { code?: unknown; command?: unknown; responseCode?: unknown; response?: unknown };
  if (code !== 'ETLS' || command !== 'STARTTLS' || typeof responseCode !== 'number') return null;
  const answer = typeof response === 'string' ? response.trim().split(/\r?\n/)[0] : String(responseCode);
  return Object.assign(
    new Error(
      `the mail server offered no STARTTLS, so nothing was sent (no login, no email); use smtps://, turn STARTTLS on at the server, or add ${TLS_OFF} to DAYBOOK_SMTP_URL for a relay you trust to carry mail unencrypted (its answer: ${answer})`,
    ),
    { code: NO_STARTTLS, command, responseCode, response },
  );
}

const MESSAGE_ID_FALLBACK_DOMAIN = 'daybook.invalid';
const HOST_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/**
 * The right-hand side of a Message-ID: the sender address's domain (an international one in
 * its ASCII form), or "daybook.invalid" when the sender has none that is a plain host name
 * (no domain, an address literal, a malformed one).
 */
export function messageIdDomain(mailFrom: string): string {
  const address = /<([^<>]*)>/.exec(mailFrom)?.[1] ?? mailFrom.trim();
  const at = address.lastIndexOf('@');
  if (at < 0) return MESSAGE_ID_FALLBACK_DOMAIN;
  const domain = domainToASCII(address.slice(at + 1).trim().replace(/\.$/, '')).toLowerCase();
  return HOST_NAME.test(domain) ? domain : MESSAGE_ID_FALLBACK_DOMAIN;
}

/**
 * Without an SMTP server (the demo, a local install) each email is written to the log at info
 * level instead, and counts as sent. Attachments are named in the log with their size, never
 * written out.
 */
export class LogMailer implements Mailer {
  constructor(private readonly log: Logger) {}

  send(message: MailMessage): Promise<void> {
    const attachments = message.attachments.map((attachment) => ({ filename: attachment.filename, contentType: attachment.contentType, bytes: attachment.content.length }));
    this.log.info({ mail: { to: message.to, subject: message.subject, text: message.text, attachments } }, 'email written to the log (no SMTP server is set)');
    return Promise.resolve();
  }

  close(): void {}
}
