import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A loopback stand-in for the card processor (Stripe), for tests and the demo: its API speaks
 * what the official SDK sends (form-encoded bodies with bracketed keys, `Authorization:
 * Bearer`, `Idempotency-Key`, `expand[]`) and answers its shapes: Checkout Sessions created,
 * retrieved and listed, with the payment intent, charge and balance transaction of a paid one.
 * Its hosted checkout page (under `checkoutOrigin`) has a Pay button that pays the session,
 * sends the signed `checkout.session.completed` webhook when one is registered, and returns
 * the customer to the session's success address. No test reaches the internet.
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
  payment_intent: string | null;
  /** What the SDK sent, parsed: for assertions. */
  sent: Record<string, unknown>;
}

/** How a payment settles in the processor account (a US account: US dollars by default). */
export interface SettleAs {
  /** The account's currency, lower case; `usd` by default. */
  currency?: string;
  /** Account-currency units per unit of the session's currency, when they differ (1.1 by default). */
  exchangeRate?: number;
  /** The fee in the account's currency's cents; by default 2.9 % of the gross plus 30. */
  feeCents?: number;
  /** When the charge was made (seconds); the fake's clock by default. */
  at?: number;
  /** Leave the charge without a balance transaction yet, as the processor may for a moment. */
  pendingBalance?: boolean;
}

export interface FakeBalanceTransaction {
  id: string;
  object: 'balance_transaction';
  amount: number;
  fee: number;
  net: number;
  currency: string;
  exchange_rate: number | null;
  created: number;
  type: 'charge';
}

interface FakeCharge {
  id: string;
  object: 'charge';
  amount: number;
  currency: string;
  created: number;
  paid: true;
  payment_intent: string;
  balance_transaction: string | null;
}

interface FakePaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  status: 'succeeded';
  latest_charge: string;
  metadata: Record<string, string>;
}

/** Where the fake sends webhook events, signed with the business's signing secret. */
export interface WebhookTarget {
  url: string;
  secret: string;
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
  balanceTransactions: Map<string, FakeBalanceTransaction>;
  requests: FakeRequest[];
  /** The next API request answers this error (status and Stripe error body), once. */
  failNext(status: number, message: string): void;
  /**
   * Pays an open session as the hosted page would, and gives the `checkout.session.completed`
   * event (not delivered: `deliver` or a registered webhook does that).
   */
  pay(sessionId: string, settleAs?: SettleAs): Stripe.Event;
  /** Gives the charge of a paid session its balance transaction, when it was left pending. */
  settle(sessionId: string): void;
  /** The event of a refund or dispute of a paid session's charge. */
  chargeEvent(sessionId: string, type: 'charge.refunded' | 'charge.dispute.created', amountCents?: number): Stripe.Event;
  /** Sends `event` to `target` signed as the processor signs; the answer's status. */
  deliver(target: WebhookTarget, event: Stripe.Event): Promise<number>;
  /** Where the hosted page's Pay button sends its webhook (none by default). */
  webhookTo: WebhookTarget | null;
  /** The fake's clock for new sessions and charges (seconds); the real time by default. */
  now: () => number;
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
  const intents = new Map<string, FakePaymentIntent>();
  const charges = new Map<string, FakeCharge>();
  const balanceTransactions = new Map<string, FakeBalanceTransaction>();
  const pendingBalances = new Map<string, FakeBalanceTransaction>();
  const byIdempotencyKey = new Map<string, string>();
  const requests: FakeRequest[] = [];
  let failure: { status: number; message: string } | null = null;
  let counter = 0;
  let checkoutOrigin = '';
  const signer = new Stripe('sk_test_fakeProcessorSigner0000');
  const next = (prefix: string) => `${prefix}_test_fake${String((counter += 1)).padStart(6, '0')}`;

  const fake: FakeStripe = {
    url: '',
    checkoutOrigin: '',
    sessions,
    balanceTransactions,
    requests,
    webhookTo: null,
    now: () => Math.floor(Date.now() / 1000),
    failNext(status, message) {
      failure = { status, message };
    },
    pay(sessionId, settleAs = {}) {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`fake processor: no session ${sessionId}`);
      if (session.payment_status === 'paid') throw new Error(`fake processor: session ${sessionId} is paid already`);
      const at = settleAs.at ?? fake.now();
      const accountCurrency = settleAs.currency ?? 'usd';
      const rate = accountCurrency === session.currency ? 1 : (settleAs.exchangeRate ?? 1.1);
      const gross = Math.round(session.amount_total * rate);
      const fee = settleAs.feeCents ?? Math.round(gross * 0.029) + 30;
      const transaction: FakeBalanceTransaction = {
        id: next('txn'),
        object: 'balance_transaction',
        amount: gross,
        fee,
        net: gross - fee,
        currency: accountCurrency,
        exchange_rate: rate === 1 ? null : rate,
        created: at,
        type: 'charge',
      };
      const intent: FakePaymentIntent = { id: next('pi'), object: 'payment_intent', amount: session.amount_total, currency: session.currency, status: 'succeeded', latest_charge: '', metadata: session.metadata };
      const charge: FakeCharge = {
        id: next('ch'),
        object: 'charge',
        amount: session.amount_total,
        currency: session.currency,
        created: at,
        paid: true,
        payment_intent: intent.id,
        balance_transaction: settleAs.pendingBalance ? null : transaction.id,
      };
      intent.latest_charge = charge.id;
      if (settleAs.pendingBalance) pendingBalances.set(charge.id, transaction);
      else balanceTransactions.set(transaction.id, transaction);
      intents.set(intent.id, intent);
      charges.set(charge.id, charge);
      Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: intent.id });
      return event('checkout.session.completed', publicSession(session), at);
    },
    settle(sessionId) {
      const charge = chargeOf(sessionId);
      const transaction = pendingBalances.get(charge.id);
      if (!transaction) return;
      pendingBalances.delete(charge.id);
      balanceTransactions.set(transaction.id, transaction);
      charge.balance_transaction = transaction.id;
    },
    chargeEvent(sessionId, type, amountCents) {
      const charge = chargeOf(sessionId);
      if (type === 'charge.refunded') return event(type, { ...charge, amount_refunded: amountCents ?? charge.amount, refunded: true }, fake.now());
      const dispute = { id: next('dp'), object: 'dispute', amount: amountCents ?? charge.amount, currency: charge.currency, charge: charge.id, payment_intent: charge.payment_intent, status: 'needs_response', reason: 'fraudulent' };
      return event(type, dispute, fake.now());
    },
    async deliver(target, sent) {
      const payload = JSON.stringify(sent);
      const signature = signer.webhooks.generateTestHeaderString({ payload, secret: target.secret });
      const res = await fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
      await res.arrayBuffer();
      return res.status;
    },
    async close() {
      await Promise.all([api, hosted].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };

  function chargeOf(sessionId: string): FakeCharge {
    const intentId = sessions.get(sessionId)?.payment_intent;
    const charge = intentId ? charges.get(intents.get(intentId)!.latest_charge) : undefined;
    if (!charge) throw new Error(`fake processor: session ${sessionId} is not paid`);
    return charge;
  }

  function event(type: string, object: unknown, created: number): Stripe.Event {
    return { id: next('evt'), object: 'event', type, created, livemode: false, api_version: null, pending_webhooks: 1, request: null, data: { object } } as unknown as Stripe.Event;
  }

  /** The session as the API answers it, with what `expand` asked for inlined. */
  function shown(session: FakeSession, expand: readonly string[]): Record<string, unknown> {
    const answer: Record<string, unknown> = publicSession(session);
    if (!expand.some((path) => path.startsWith('payment_intent')) || !session.payment_intent) return answer;
    const intent: Record<string, unknown> = { ...intents.get(session.payment_intent)! };
    if (expand.some((path) => path.startsWith('payment_intent.latest_charge'))) {
      const charge: Record<string, unknown> = { ...charges.get(intent.latest_charge as string)! };
      if (expand.includes('payment_intent.latest_charge.balance_transaction') && charge.balance_transaction) {
        charge.balance_transaction = balanceTransactions.get(charge.balance_transaction as string);
      }
      intent.latest_charge = charge;
    }
    answer.payment_intent = intent;
    return answer;
  }

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
      const expand = (form.expand as string[] | undefined) ?? [];
      if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const known = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
        if (known) return reply(res, 200, publicSession(sessions.get(known)!));
        const session = newSession(form, next('cs'), checkoutOrigin, fake.now());
        sessions.set(session.id, session);
        if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, session.id);
        return reply(res, 200, publicSession(session));
      }
      if (req.method === 'GET' && url.pathname === '/v1/checkout/sessions') return reply(res, 200, listed(form));
      const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && retrieve) {
        const session = sessions.get(decodeURIComponent(retrieve[1]!));
        return session ? reply(res, 200, shown(session, expand)) : reply(res, 404, { error: { type: 'invalid_request_error', message: 'No such checkout.session' } });
      }
      return reply(res, 404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method} ${url.pathname})` } });
    })();
  });

  /** GET /v1/checkout/sessions: newest first, `created[gte]`, `status`, `limit` and `starting_after`. */
  function listed(form: Record<string, unknown>): Record<string, unknown> {
    const since = Number((form.created as { gte?: string } | undefined)?.gte ?? 0);
    const limit = Math.min(100, Number(form.limit ?? 10));
    let found = [...sessions.values()].filter((session) => session.created >= since && (form.status === undefined || session.status === form.status)).reverse();
    if (typeof form.starting_after === 'string') found = found.slice(found.findIndex((session) => session.id === form.starting_after) + 1);
    return { object: 'list', url: '/v1/checkout/sessions', has_more: found.length > limit, data: found.slice(0, limit).map(publicSession) };
  }

  const hosted = createServer((req, res) => {
    void (async () => {
      await readBody(req);
      const id = /^\/pay\/([^/?]+)/.exec(req.url ?? '')?.[1];
      const session = id ? sessions.get(id) : undefined;
      if (!session) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('no such session');
      }
      if (req.method === 'POST' && session.payment_status !== 'paid') {
        const completed = fake.pay(session.id);
        if (fake.webhookTo) await fake.deliver(fake.webhookTo, completed).catch(() => undefined);
        res.writeHead(303, { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(hostedPage(session));
    })();
  });
  fake.url = await listen(api);
  checkoutOrigin = await listen(hosted);
  fake.checkoutOrigin = checkoutOrigin;
  return fake;
}

function hostedPage(session: FakeSession): string {
  const amount = `${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}`;
  const paid = session.payment_status === 'paid';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fake checkout</title></head><body><main>
<h1>Fake checkout: ${amount}</h1>
<p>A stand-in for the card processor's hosted page. No card is asked for and no money moves.</p>
${paid ? '<p>This session is paid.</p>' : `<form method="post" action="/pay/${session.id}"><button type="submit">Pay ${amount}</button></form>`}
<p><a href="${session.cancel_url}">Back</a></p>
</main></body></html>`;
}

function newSession(form: Record<string, unknown>, id: string, checkoutOrigin: string, created: number): FakeSession {
  const items = form.line_items as { quantity: string; price_data: { currency: string; unit_amount: string } }[];
  const amount = items.reduce((sum, item) => sum + Number(item.price_data.unit_amount) * Number(item.quantity), 0);
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
    created,
    livemode: false,
    payment_intent: null,
    sent: form,
  };
}

/** The session as the API answers it (without the fake's own bookkeeping). */
function publicSession(session: FakeSession): Omit<FakeSession, 'sent'> {
  const { sent: _sent, ...answer } = session;
  return answer;
}
