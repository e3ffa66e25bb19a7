import { domainToASCII } from 'node:url';
import nodemailer from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Logger } from '../log.js';

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

/** An SMTP mailer when an SMTP URL is set; otherwise a LogMailer (mail goes to the log). */
export function createMailer(config: MailerConfig, log: Logger): Mailer {
  if (config.smtpUrl === null) return new LogMailer(log);
  return new SmtpMailer(config.smtpUrl, config.mailFrom);
}

class SmtpMailer implements Mailer {
  private readonly transport: nodemailer.Transporter<SMTPTransport.SentMessageInfo>;
  private readonly messageIdDomain: string;

  constructor(smtpUrl: string, mailFrom: string) {
    // createTransport({ url, ... }) would drop every option beside the URL: build the transport here.
    this.transport = nodemailer.createTransport(new SMTPTransport({ url: smtpUrl, ...SMTP_TIMEOUTS_MS }), { from: mailFrom });
    this.messageIdDomain = messageIdDomain(mailFrom);
  }

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({
      messageId: `<${message.id}@${this.messageIdDomain}>`,
      // An address object is taken as one address; a string would be parsed as a list.
      to: { name: '', address: message.to },
      subject: message.subject,
      text: message.text,
      ...(message.html === '' ? {} : { html: message.html }),
      attachments: message.attachments,
    });
    if (info.rejected.length > 0 || info.accepted.length === 0) {
      throw new Error(`the SMTP server did not accept the recipient: ${info.response}`);
    }
  }

  close(): void {
    this.transport.close();
  }
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
