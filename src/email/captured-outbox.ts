import type { MailMessage, Mailer } from './mailer.js';

/**
 * The outbox of daybook/testing: a mailer that keeps every email instead of sending it, for
 * a test to read, with each email's pay link pointed at the test's own server.
 */

/** An email Daybook sent, as the customer would have received it. */
export interface CapturedEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The email's pay link, pointing at this server so a test can follow it; null when it has none. */
  payUrl: string | null;
  /** The files sent with it (an invoice email's PDF), in order; empty for none. */
  attachments: CapturedAttachment[];
}

/** A file sent with an email, as plain data (it also travels as JSON from the control surface). */
export interface CapturedAttachment {
  /** E.g. INV-0001.pdf */
  filename: string;
  /** E.g. application/pdf */
  contentType: string;
  /** Bytes. */
  size: number;
  /** The file itself, base64: `Buffer.from(contentBase64, 'base64')`. */
  contentBase64: string;
}

export interface Outbox {
  /** Every email sent so far, oldest first. */
  messages(): CapturedEmail[];
  /** The first email (already sent or still to come) for which `predicate` holds; rejects after `timeoutMs` (default 5 s). */
  waitFor(predicate: (email: CapturedEmail) => boolean, timeoutMs?: number): Promise<CapturedEmail>;
}

const PAY_LINK = /https?:\/\/\S+?\/pay\/([A-Za-z0-9_-]+)/;

/** A mailer that keeps what it is given, for a test to read. */
export class CapturingMailer implements Mailer, Outbox {
  private readonly sent: CapturedEmail[] = [];
  private readonly waiting = new Set<() => void>();
  private serverUrl = '';

  /** Where the pay pages are served: each email's payUrl points there. */
  payPagesAt(url: string): void {
    this.serverUrl = url;
  }

  send(message: MailMessage): Promise<void> {
    const token = PAY_LINK.exec(message.text)?.[1];
    this.sent.push({
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      payUrl: token === undefined ? null : `${this.serverUrl}/pay/${token}`,
      attachments: message.attachments.map((attachment) => ({
        filename: attachment.filename,
        contentType: attachment.contentType,
        size: attachment.content.length,
        contentBase64: attachment.content.toString('base64'),
      })),
    });
    for (const wake of this.waiting) wake();
    return Promise.resolve();
  }

  close(): void {}

  messages(): CapturedEmail[] {
    return [...this.sent];
  }

  waitFor(predicate: (email: CapturedEmail) => boolean, timeoutMs = 5_000): Promise<CapturedEmail> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.sent.find(predicate);
        if (!found) return false;
        this.waiting.delete(wake);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        this.waiting.delete(wake);
        reject(new Error(`no email matching within ${timeoutMs} ms; ${this.sent.length} sent: ${this.sent.map((email) => `"${email.subject}" to ${email.to}`).join(', ') || 'none'}`));
      }, timeoutMs);
      this.waiting.add(wake);
      check();
    });
  }
}
