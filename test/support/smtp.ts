import { expect } from 'chai';
import { type AddressObject, type EmailAddress, type HeaderLines, type Headers, type HeaderValue, simpleParser, type StructuredHeader } from 'mailparser';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestCertificate } from './certificates.js';

/**
 * A real SMTP server on loopback (smtp-server) that keeps each message's envelope and raw bytes
 * and each login, and a parsed view of a message (mailparser) for the checks on its headers and
 * its text and HTML parts. By default it offers no STARTTLS (a plain relay: its url says
 * ?tls=off, as Daybook then needs); with a certificate it offers STARTTLS. Either way it takes
 * any login, even over a connection still in clear, so a test sees whether a password was sent.
 */

/** One message as the server received it: the SMTP envelope and the DATA, as sent. */
export interface ReceivedMessage {
  /** MAIL FROM, or null for the null sender. */
  from: string | null;
  /** Every RCPT TO. */
  to: string[];
  raw: string;
  /** Whether the session had been upgraded with STARTTLS when the message came. */
  secure: boolean;
}

/** One AUTH the server was given. */
export interface ReceivedLogin {
  method: string;
  username: string;
  /** Undefined for a method that sends none (XOAUTH2). */
  password: string | undefined;
  /** Whether the session had been upgraded with STARTTLS before it. */
  secure: boolean;
}

/** One refusal the server answers once: instead of its greeting (`connect`) or to one RCPT TO (`rcpt`). */
export interface SmtpRefusal {
  at: 'connect' | 'rcpt';
  /** 421 or 450 (try again later), 550 (no such mailbox), ... */
  responseCode: number;
  message: string;
}

export interface TestSmtp {
  /** smtp://127.0.0.1:PORT?tls=off for a server without STARTTLS; smtp://127.0.0.1:PORT for one with it. */
  url: string;
  port: number;
  /** In the order they arrived; empty it (`received.length = 0`) between tests. */
  received: ReceivedMessage[];
  /** Every AUTH, in order. */
  logins: ReceivedLogin[];
  /**
   * Refusals still to answer, first one first: when the first is for the step a session has
   * reached, it is answered and removed. Once none is left the server accepts. Push onto it
   * (or empty it) from a test.
   */
  refusals: SmtpRefusal[];
  /** The refusals answered so far, in order. */
  refused: SmtpRefusal[];
  /** Errors of the server other than a client dropping its connection. */
  errors: Error[];
  stop(): Promise<void>;
}

export interface SmtpOptions {
  /** The port to listen on; 0 (the default) takes a free one. */
  port?: number;
  /** Refuse every recipient with a 550. */
  rejectRecipient?: boolean;
  /** The first refusals to answer (TestSmtp.refusals). */
  refusals?: SmtpRefusal[];
  /** Offer STARTTLS with this certificate (test/support/certificates.ts); without it, no STARTTLS. */
  starttls?: TestCertificate;
}

/** An SMTP server listening on 127.0.0.1. */
export async function startSmtp(options: SmtpOptions = {}): Promise<TestSmtp> {
  const received: ReceivedMessage[] = [];
  const refusals: SmtpRefusal[] = [...(options.refusals ?? [])];
  const refused: SmtpRefusal[] = [];
  /** The error that answers the next refusal when it is for `at`; undefined when there is none. */
  const refusalAt = (at: SmtpRefusal['at']): Error | undefined => {
    if (refusals[0]?.at !== at) return undefined;
    const refusal = refusals.shift()!;
    refused.push(refusal);
    return Object.assign(new Error(refusal.message), { responseCode: refusal.responseCode });
  };
  const logins: ReceivedLogin[] = [];
  const tls = options.starttls ? { key: readFileSync(options.starttls.keyPath), cert: readFileSync(options.starttls.certPath) } : null;
  const server = new SMTPServer({
    authOptional: true,
    // A login in clear is taken (and kept), not refused: the tests must see one if it is sent.
    allowInsecureAuth: true,
    secure: false,
    ...(tls ? tls : { disabledCommands: ['STARTTLS'] }),
    // No reverse look-up of 127.0.0.1: without a resolver that answers, each session would wait for it.
    disableReverseLookup: true,
    logger: false,
    onConnect(_session, callback) {
      callback(refusalAt('connect'));
    },
    onAuth(auth, session, callback) {
      logins.push({ method: auth.method, username: auth.username ?? '', password: auth.password ?? undefined, secure: session.secure });
      callback(null, { user: auth.username ?? '' });
    },
    onRcptTo(_address, _session, callback) {
      if (options.rejectRecipient) return callback(Object.assign(new Error('no such mailbox'), { responseCode: 550 }));
      callback(refusalAt('rcpt'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom;
        received.push({
          from: mailFrom === false ? null : mailFrom.address,
          to: session.envelope.rcptTo.map((address) => address.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
        });
        callback();
      });
    },
  });
  // A client that dies mid-session (the crash tests kill the server sending) is not the SMTP
  // server's fault; anything else is kept for the test to look at (a throw here would end the run).
  const errors: Error[] = [];
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') errors.push(error);
  });
  const listening = await new Promise<AddressInfo>((resolve, reject) => {
    const netServer = server.listen(options.port ?? 0, '127.0.0.1', () => resolve(netServer.address() as AddressInfo));
    netServer.once('error', reject);
  });
  return {
    url: `smtp://127.0.0.1:${listening.port}${tls ? '' : '?tls=off'}`,
    port: listening.port,
    received,
    logins,
    refusals,
    refused,
    errors,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A message read back by mailparser, with what a parser would normalise away kept as sent. */
export interface ParsedMessage {
  /** Header values by lower-cased name, decoded (encoded words, addresses, parameters). */
  headers: Headers;
  /** Every header line of the message, as sent (folded), with its lower-cased name. */
  headerLines: HeaderLines;
  /** The raw header section, as sent: for the checks that a header did not get in (CR/LF injection). */
  headerBlock: string;
  /** The Content-Type line of the message and then of each part, in order, as sent (first line of a folded one). */
  contentTypes: string[];
  /** The text/plain part, decoded, with \n line ends; undefined when there is none. */
  text: string | undefined;
  /** The text/html part, decoded, with \n line ends; undefined when there is none. */
  html: string | undefined;
  /** The attached files, decoded, in order. */
  attachments: ParsedAttachment[];
}

export interface ParsedAttachment {
  filename: string | undefined;
  contentType: string;
  /** inline or attachment, from Content-Disposition. */
  disposition: string | undefined;
  content: Buffer;
}

export async function parseMessage(raw: string): Promise<ParsedMessage> {
  const end = raw.indexOf('\r\n\r\n');
  expect(end, 'a blank line ends the headers').to.be.greaterThan(0);
  // Neither part is made up from the other: text comes only from text/plain, html only from text/html.
  const mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, keepCidLinks: true });
  const lf = (body: string | false | undefined) => (typeof body === 'string' ? body.replace(/\r\n/g, '\n') : undefined);
  return {
    headers: mail.headers,
    headerLines: mail.headerLines,
    headerBlock: raw.slice(0, end),
    contentTypes: [...raw.matchAll(/^Content-Type:[ \t]*([^\r\n]*)/gim)].map((match) => match[1]!),
    text: lf(mail.text),
    html: lf(mail.html),
    attachments: mail.attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      disposition: attachment.contentDisposition,
      content: attachment.content,
    })),
  };
}

function oneHeader(message: ParsedMessage, name: string): HeaderValue | undefined {
  expect(message.headerLines.filter((line) => line.key === name), `exactly one ${name} header`).to.have.lengthOf(1);
  return message.headers.get(name);
}

/** The decoded value of the message's one `name` header (lower-case); of a structured one (Content-Type), its value without parameters. */
export function header(message: ParsedMessage, name: string): string {
  const value = oneHeader(message, name);
  if (typeof value === 'string') return value;
  expect(value, `${name} is a text or structured header`).to.have.property('params');
  return (value as StructuredHeader).value;
}

/** The mailboxes of the message's one `name` address header (lower-case: from, to, ...). */
export function addresses(message: ParsedMessage, name: string): EmailAddress[] {
  const value = oneHeader(message, name) as AddressObject | undefined;
  expect(value?.value, `${name} is an address header`).to.be.an('array');
  return value!.value;
}

/** The message's text/plain (`text`) or text/html (`html`) part, which it must have. */
export function part(message: ParsedMessage, kind: 'text' | 'html'): string {
  const body = message[kind];
  expect(body, `a text/${kind === 'text' ? 'plain' : 'html'} part`).to.be.a('string');
  return body!;
}
