/**
 * A real upstream HTTP service for the catalogue tests: each path one behaviour, every call recorded
 * (its headers and body), and the calls in flight counted, so a test can say how often, how
 * concurrently and with what the upstream was called.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type Behaviour = (call: UpstreamCall, res: ServerResponse) => void | Promise<void>;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface TestUpstream {
  url: string;
  calls: UpstreamCall[];
  /** The most calls that were in flight at once. */
  maxInFlight: number;
  /** Sets the behaviour of a path (without its leading slash). */
  on(path: string, behaviour: Behaviour): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startTestUpstream(): Promise<TestUpstream> {
  const behaviours = new Map<string, Behaviour>();
  let inFlight = 0;
  const upstream: TestUpstream = {
    url: '',
    calls: [],
    maxInFlight: 0,
    on: (path, behaviour) => void behaviours.set(`/${path}`, behaviour),
    reset() {
      upstream.calls.length = 0;
      upstream.maxInFlight = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer(async (req, res) => {
    inFlight++;
    upstream.maxInFlight = Math.max(upstream.maxInFlight, inFlight);
    try {
      const text = await readBody(req);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      const call: UpstreamCall = { path: req.url ?? '', headers: req.headers, body };
      upstream.calls.push(call);
      const behaviour = behaviours.get(call.path);
      if (!behaviour) return sendJson(res, 500, { message: `no behaviour for ${call.path}` });
      await behaviour(call, res);
    } finally {
      inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return upstream;
}
