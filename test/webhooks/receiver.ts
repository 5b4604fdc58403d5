/**
 * A real webhook receiver for the tests: an HTTP server that checks every request it gets with the
 * `standardwebhooks` package (a third-party verifier, not toolgate's code) and records it, then
 * answers as the test says (a status, or never).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { readBody } from '../upstream/test-upstream.js';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** What the verifier made of it: the parsed payload, or its error's message. */
  verified: { ok: true; payload: unknown } | { ok: false; error: string };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The secret to verify with (an endpoint's, once it is added). */
  secret: string | undefined;
  /** How to answer the next requests: a status, or 'hang' (never answer). */
  answer: number | 'hang';
  /** Resolves once `n` requests have been received. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    secret: undefined,
    answer: 204,
    waitFor(n) {
      if (receiver.received.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    let verified: Received['verified'];
    try {
      const payload = new Webhook(receiver.secret ?? 'whsec_bm9uZQ==').verify(
        body,
        req.headers as Record<string, string>,
      );
      verified = { ok: true, payload };
    } catch (err) {
      verified = { ok: false, error: (err as Error).message };
    }
    receiver.received.push({ headers: req.headers, body, verified });
    for (const w of waiters.filter((w) => receiver.received.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    if (receiver.answer === 'hang') {
      hanging.add(res);
      return;
    }
    res.writeHead(receiver.answer, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
