import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for the card processor's API, speaking what the official SDK sends
 * (form-encoded bodies with bracketed keys, `Authorization: Bearer`, `Idempotency-Key`) and
 * answering its shapes. Daybook's SDK is pointed at it with DAYBOOK_STRIPE_API_URL; its hosted
 * checkout page lives under `checkoutOrigin`. No test reaches the internet.
 */

export interface FakeSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  customer_email: string | null;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  success_url: string;
  cancel_url: string;
  url: string;
  created: number;
  livemode: false;
  /** What the SDK sent, parsed: for assertions. */
  sent: Record<string, unknown>;
}

export interface FakeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  form: Record<string, unknown>;
}

export interface FakeStripe {
  /** The API's origin, for DAYBOOK_STRIPE_API_URL. */
  url: string;
  /** The hosted page's origin, for DAYBOOK_STRIPE_CHECKOUT_ORIGIN. */
  checkoutOrigin: string;
  sessions: Map<string, FakeSession>;
  requests: FakeRequest[];
  /** The next API request answers this error (status and Stripe error body), once. */
  failNext(status: number, message: string): void;
  close(): Promise<void>;
}

/** `a[b][0][c]=1` as nested objects and arrays, as the SDK encodes them. */
export function parseStripeForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter((part) => part !== '');
    let at: Record<string, unknown> | unknown[] = root;
    path.forEach((part, index) => {
      const last = index === path.length - 1;
      const slot = part as keyof typeof at;
      if (last) {
        (at as Record<string, unknown>)[slot as string] = value;
        return;
      }
      const nextIsIndex = /^[0-9]+$/.test(path[index + 1]!);
      (at as Record<string, unknown>)[slot as string] ??= nextIsIndex ? [] : {};
      at = (at as Record<string, unknown>)[slot as string] as Record<string, unknown>;
    });
  }
  return root;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${Date.now()}` });
  res.end(JSON.stringify(body));
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const sessions = new Map<string, FakeSession>();
  const byIdempotencyKey = new Map<string, string>();
  const requests: FakeRequest[] = [];
  let failure: { status: number; message: string } | null = null;
  let counter = 0;
  let checkoutOrigin = '';

  const api = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const form = parseStripeForm(req.method === 'GET' ? url.search.slice(1) : body);
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      requests.push({ method: req.method ?? '', path: url.pathname, authorization: req.headers.authorization, idempotencyKey, form });
      if (failure) {
        const { status, message } = failure;
        failure = null;
        return reply(res, status, { error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message } });
      }
      if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const known = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
        if (known) return reply(res, 200, publicSession(sessions.get(known)!));
        const session = newSession(form, (counter += 1), checkoutOrigin);
        sessions.set(session.id, session);
        if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, session.id);
        return reply(res, 200, publicSession(session));
      }
      const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && retrieve) {
        const session = sessions.get(decodeURIComponent(retrieve[1]!));
        return session ? reply(res, 200, publicSession(session)) : reply(res, 404, { error: { type: 'invalid_request_error', message: 'No such checkout.session' } });
      }
      return reply(res, 404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method} ${url.pathname})` } });
    })();
  });
  const hosted = createServer((req, res) => {
    const id = /^\/pay\/([^/?]+)/.exec(req.url ?? '')?.[1];
    const session = id ? sessions.get(id) : undefined;
    res.writeHead(session ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(session ? `<!doctype html><title>Fake checkout</title><h1>Pay ${session.amount_total} ${session.currency}</h1>` : 'no such session');
  });
  const url = await listen(api);
  checkoutOrigin = await listen(hosted);
  return {
    url,
    checkoutOrigin,
    sessions,
    requests,
    failNext(status, message) {
      failure = { status, message };
    },
    async close() {
      await Promise.all([api, hosted].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

function newSession(form: Record<string, unknown>, n: number, checkoutOrigin: string): FakeSession {
  const items = form.line_items as { quantity: string; price_data: { currency: string; unit_amount: string } }[];
  const amount = items.reduce((sum, item) => sum + Number(item.price_data.unit_amount) * Number(item.quantity), 0);
  const id = `cs_test_fake${String(n).padStart(6, '0')}`;
  return {
    id,
    object: 'checkout.session',
    mode: String(form.mode),
    status: 'open',
    payment_status: 'unpaid',
    amount_total: amount,
    currency: items[0]!.price_data.currency,
    customer_email: (form.customer_email as string | undefined) ?? null,
    client_reference_id: (form.client_reference_id as string | undefined) ?? null,
    metadata: (form.metadata as Record<string, string> | undefined) ?? {},
    success_url: String(form.success_url),
    cancel_url: String(form.cancel_url),
    url: `${checkoutOrigin}/pay/${id}`,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    sent: form,
  };
}

/** The session as the API answers it (without the fake's own bookkeeping). */
function publicSession(session: FakeSession): Omit<FakeSession, 'sent'> {
  const { sent: _sent, ...shown } = session;
  return shown;
}
