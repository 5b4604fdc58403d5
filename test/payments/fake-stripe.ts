/** @module A local Stripe-compatible HTTP server for tests: toolgate's official `stripe` library talks to it as to api.stripe.com, and the test drives what Stripe would do (payments, renewals, refunds) and signs its events. */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { readBody } from '../upstream/test-upstream.js';
import { ApiError, FakeAccount, type Params, parseForm, type RequestRef } from './fake-stripe-account.js';
import { completeCheckout, refund, renewSubscription, updateSubscription } from './fake-stripe-billing.js';
import {
  eventObject,
  newId,
  now,
  type Price,
  type PriceInput,
  type Session,
  type StripeEvent,
} from './fake-stripe-objects.js';

export type { Price, StripeEvent } from './fake-stripe-objects.js';

export interface FakeStripe {
  /** http://127.0.0.1:<port>, what TOOLGATE_STRIPE_API_URL is set to. */
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** Every /v1 request, in arrival order; `body` is its query string and form body, parsed. */
  requests: {
    method: string;
    path: string;
    body: Record<string, unknown>;
    idempotencyKey?: string;
    authorization?: string;
  }[];
  addPrice(p: PriceInput): Price;
  /**
   * What Stripe does when the customer pays the session, and the events it sends, in order:
   * subscription mode checkout.session.completed, customer.subscription.created, invoice.paid;
   * payment mode checkout.session.completed (paid), or with `async` completed (unpaid) and then
   * checkout.session.async_payment_succeeded.
   */
  completeCheckout(sessionId: string, opts?: { async?: boolean }): StripeEvent[];
  /** customer.subscription.updated, or .deleted when the status is 'canceled'. */
  updateSubscription(id: string, change: { status?: string; price?: string }): StripeEvent;
  /** A new period, paid: [customer.subscription.updated, invoice.paid]. */
  renewSubscription(id: string): StripeEvent[];
  /** Refunds the PaymentIntent's charge (all that is left unless `amount`): charge.refunded. */
  refund(paymentIntentId: string, amount?: number): StripeEvent;
  /** Events that API calls (subscription update, cancel) queued, taken out of the queue. */
  takeQueued(): StripeEvent[];
  event(type: string, object: unknown, created?: number): StripeEvent;
  sign(payload: string, opts?: { timestamp?: number; secret?: string }): string;
  /** POSTs the event signed to `url`, as Stripe delivers it. */
  deliver(
    url: string,
    event: StripeEvent,
    opts?: { timestamp?: number; secret?: string },
  ): Promise<{ status: number; body: string }>;
  /** Where the hosted payment page delivers its events (none are delivered until it is set). */
  setWebhookUrl(url: string): void;
  /**
   * Requests to paths starting with `prefix` are carried out but not answered until release():
   * Stripe did the work and the answer was lost, as when the product dies mid-call.
   * Resolves when the first such request arrives.
   */
  hold(prefix: string): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = (status: number, body: unknown, requestId: string): Reply => ({
  status,
  headers: {
    'content-type': 'application/json',
    'request-id': requestId,
    'stripe-version': Stripe.API_VERSION,
  },
  body: JSON.stringify(body, null, 2),
});

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const html = (status: number, title: string, body: string): Reply => ({
  status,
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
});

const expandOf = (p: Params): string[] =>
  Array.isArray(p.expand) ? p.expand.filter((e) => typeof e === 'string') : [];

type Handler = (id: string, p: Params, request: RequestRef) => unknown;

function routes(account: FakeAccount): [string, RegExp, Handler][] {
  const retrieve =
    (noun: string): Handler =>
    (id, p) =>
      account.view(noun, id, expandOf(p));
  const viewOf = (noun: string, made: { id: string }, p: Params) => account.view(noun, made.id, expandOf(p));
  return [
    ['GET', /^\/v1\/prices\/([^/]+)$/, retrieve('price')],
    ['POST', /^\/v1\/customers$/, (_, p) => viewOf('customer', account.createCustomer(p), p)],
    ['GET', /^\/v1\/customers\/([^/]+)$/, retrieve('customer')],
    ['POST', /^\/v1\/checkout\/sessions$/, (_, p) => viewOf('checkout.session', account.createSession(p), p)],
    ['GET', /^\/v1\/checkout\/sessions\/([^/]+)$/, retrieve('checkout.session')],
    ['GET', /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/, (id) => account.lineItems(id)],
    ['POST', /^\/v1\/billing_portal\/sessions$/, (_, p) => account.createPortal(p)],
    ['GET', /^\/v1\/subscriptions$/, (_, p) => account.listSubscriptions(p)],
    ['GET', /^\/v1\/subscriptions\/([^/]+)$/, retrieve('subscription')],
    [
      'POST',
      /^\/v1\/subscriptions\/([^/]+)$/,
      (id, p, r) => viewOf('subscription', account.updateSubscriptionByApi(id, p, r), p),
    ],
    [
      'DELETE',
      /^\/v1\/subscriptions\/([^/]+)$/,
      (id, p, r) => viewOf('subscription', account.cancelSubscriptionByApi(id, r), p),
    ],
    ['GET', /^\/v1\/invoices\/([^/]+)$/, retrieve('invoice')],
    ['GET', /^\/v1\/payment_intents\/([^/]+)$/, retrieve('payment_intent')],
    ['GET', /^\/v1\/charges\/([^/]+)$/, retrieve('charge')],
  ];
}

function maskKey(key: string): string {
  return key.length > 12 ? `${key.slice(0, 8)}${'*'.repeat(key.length - 12)}${key.slice(-4)}` : key;
}

function authError(authorization: string | undefined, secretKey: string): ApiError | null {
  const key = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim();
  if (key === secretKey) return null;
  const message = key
    ? `Invalid API Key provided: ${maskKey(key)}`
    : "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').";
  return new ApiError(401, { type: 'invalid_request_error', message });
}

/** The /v1 API: key check, then idempotent replay, then the route. */
function apiHandler(fake: FakeStripe, account: FakeAccount) {
  const table = routes(account);
  const kept = new Map<string, { fingerprint: string; reply: Reply }>();
  return (req: IncomingMessage, path: string, query: string, raw: string): Reply => {
    const method = req.method ?? 'GET';
    const body = { ...parseForm(query), ...parseForm(raw) };
    const header = (name: string) =>
      typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined;
    const idempotencyKey = header('idempotency-key');
    const authorization = header('authorization');
    fake.requests.push({
      method,
      path,
      body,
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(authorization ? { authorization } : {}),
    });
    const requestId = newId('req');
    const fail = (err: ApiError) => json(err.status, { error: err.error }, requestId);
    const denied = authError(authorization, fake.secretKey);
    if (denied) return fail(denied);
    const idempotent = method === 'POST' && idempotencyKey !== undefined;
    const fingerprint = `${path}?${raw}`;
    const earlier = idempotent ? kept.get(idempotencyKey) : undefined;
    if (earlier && earlier.fingerprint !== fingerprint) {
      const message = `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`;
      return fail(new ApiError(400, { type: 'idempotency_error', message }));
    }
    if (earlier)
      return { ...earlier.reply, headers: { ...earlier.reply.headers, 'idempotent-replayed': 'true' } };
    const reply = route(
      table,
      method,
      path,
      body,
      { id: requestId, idempotency_key: idempotencyKey ?? null },
      fail,
    );
    // Stripe keeps no result for a refused request: a corrected retry with the same key is carried out.
    if (idempotent && reply.status < 300) kept.set(idempotencyKey, { fingerprint, reply });
    return reply;
  };
}

function route(
  table: [string, RegExp, Handler][],
  method: string,
  path: string,
  body: Params,
  request: RequestRef,
  fail: (err: ApiError) => Reply,
): Reply {
  for (const [m, pattern, handler] of table) {
    const match = m === method ? pattern.exec(path) : null;
    if (!match) continue;
    try {
      return json(200, handler(decodeURIComponent(match[1] ?? ''), body, request), request.id!);
    } catch (err) {
      if (err instanceof ApiError) return fail(err);
      return fail(
        new ApiError(500, { type: 'api_error', message: `The fake failed: ${(err as Error).message}` }),
      );
    }
  }
  return fail(
    new ApiError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path}).`,
    }),
  );
}

function formatLine(price: Price, quantity: number): string {
  const amount = `${((price.unit_amount * quantity) / 100).toFixed(2)} ${price.currency.toUpperCase()}`;
  const name = `${quantity} × ${price.nickname ?? price.id}`;
  return `${name}: ${amount}${price.recurring ? ` / ${price.recurring.interval}` : ''}`;
}

/** The hosted pages a browser is sent to: Checkout's payment page and the billing portal. */
function pageHandler(fake: FakeStripe, account: FakeAccount, webhookUrl: () => string | undefined) {
  const payPage = (session: Session): Reply => {
    const items = account.lineItems(session.id).data as { price: Price; quantity: number }[];
    const lines = items
      .map((item) => `<li>${escapeHtml(formatLine(item.price, item.quantity))}</li>`)
      .join('');
    const cancel = session.cancel_url ? `<p><a href="${escapeHtml(session.cancel_url)}">Cancel</a></p>` : '';
    const form = `<form method="post" action="/pay/${escapeHtml(session.id)}"><button type="submit">Pay</button></form>`;
    return html(200, 'Pay', `<ul>${lines}</ul>${form}${cancel}`);
  };
  const pay = async (session: Session): Promise<Reply> => {
    const events = fake.completeCheckout(session.id);
    const target = webhookUrl();
    // One at a time, in order, as the product's handler would see them from Stripe.
    if (target) for (const event of events) await fake.deliver(target, event);
    if (!session.success_url) return html(200, 'Paid', '<p>The payment went through.</p>');
    const location = session.success_url.replaceAll('{CHECKOUT_SESSION_ID}', session.id);
    return { status: 303, headers: { location }, body: '' };
  };
  return async (method: string, path: string): Promise<Reply> => {
    const [, kind, id = ''] = /^\/(pay|portal)\/([^/]+)$/.exec(path) ?? [];
    if (kind === 'portal' && method === 'GET' && account.portals.has(id)) {
      const back = account.portals.get(id)!.return_url;
      return html(
        200,
        'Billing portal',
        back ? `<p><a href="${escapeHtml(back)}">Return to ${escapeHtml(back)}</a></p>` : '',
      );
    }
    const session = kind === 'pay' ? account.sessions.get(id) : undefined;
    if (!session) return html(404, 'Not found', '<p>No such page.</p>');
    if (session.status !== 'open')
      return html(410, 'Checkout Session closed', `<p>It is ${escapeHtml(session.status)}.</p>`);
    if (method === 'GET') return payPage(session);
    if (method === 'POST') return pay(session);
    return html(405, 'Method not allowed', '');
  };
}

/** While held, answers to paths under the prefix wait for release(); nothing else does. */
function answerGate() {
  let holding: { prefix: string; arrived: () => void } | undefined;
  let held: (() => void)[] = [];
  return {
    hold: (prefix: string) =>
      new Promise<void>((resolve) => {
        holding = { prefix, arrived: resolve };
      }),
    release() {
      holding = undefined;
      for (const answer of held.splice(0)) answer();
    },
    drop() {
      held = [];
    },
    pass(path: string, answer: () => void) {
      if (!holding || !path.startsWith(holding.prefix)) return answer();
      held.push(answer);
      holding.arrived();
    },
  };
}

function serve(
  server: Server,
  api: ReturnType<typeof apiHandler>,
  pages: ReturnType<typeof pageHandler>,
  gate: ReturnType<typeof answerGate>,
): void {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const { pathname, search } = new URL(req.url ?? '/', 'http://127.0.0.1');
    const reply = pathname.startsWith('/v1/')
      ? api(req, pathname, search.slice(1), raw)
      : await pages(req.method ?? 'GET', pathname);
    gate.pass(pathname, () => {
      if (res.destroyed) return;
      res.writeHead(reply.status, {
        ...reply.headers,
        'content-length': String(Buffer.byteLength(reply.body)),
      });
      res.end(reply.body);
    });
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // A fault of the fake's own (or a client gone mid-body) must fail the test loudly, not hang it.
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`The fake Stripe failed: ${err.stack ?? err.message}`);
    });
  });
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const account = new FakeAccount(url);
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const gate = answerGate();
  let webhookUrl: string | undefined;
  const fake: FakeStripe = {
    url,
    secretKey,
    webhookSecret,
    requests: [],
    addPrice: (p) => account.addPrice(p),
    completeCheckout: (id, opts) => completeCheckout(account, id, opts),
    updateSubscription: (id, change) => updateSubscription(account, id, change),
    renewSubscription: (id) => renewSubscription(account, id),
    refund: (id, amount) => refund(account, id, amount),
    takeQueued: () => account.queued.splice(0),
    event: (type, object, created) => eventObject(type, object, created ?? now()),
    sign: (payload, opts = {}) =>
      Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: opts.secret ?? webhookSecret,
        timestamp: opts.timestamp ?? now(),
      }),
    async deliver(target, event, opts) {
      const payload = JSON.stringify(event);
      const response = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': fake.sign(payload, opts),
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
        body: payload,
      });
      return { status: response.status, body: await response.text() };
    },
    setWebhookUrl(target) {
      webhookUrl = target;
    },
    hold: (prefix) => gate.hold(prefix),
    release: () => gate.release(),
    async close() {
      gate.drop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  serve(
    server,
    apiHandler(fake, account),
    pageHandler(fake, account, () => webhookUrl),
    gate,
  );
  return fake;
}
