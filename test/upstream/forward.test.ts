/** @module Upstreams.forward against real local HTTP servers: status mapping, limits, timeouts, headers and pooling. */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ForwardCall, Upstreams, type UpstreamTarget } from '../../src/upstream/forward.js';
import { bearer } from '../calls.js';
import { readBody, sendJson } from './test-upstream.js';

const BIG = 64 * 1024;

/** Each path is one upstream behaviour; the request body is always read first, as a real service would. */
async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  const path = req.url ?? '';
  const statusMatch = /^\/status\/(\d{3})$/.exec(path);
  if (statusMatch) return sendJson(res, Number(statusMatch[1]), { message: 'nope' });
  switch (path) {
    case '/ok':
      return sendJson(res, 200, { status: 'ok', results: { rows: [1, 2] }, metadata: { source: 'test' } });
    case '/ok-bare':
      return sendJson(res, 201, { results: [3], metadata: ['not', 'an', 'object'] });
    case '/ok-no-results':
      return sendJson(res, 200, {});
    case '/miss':
      return sendJson(res, 200, { status: 'not_found', metadata: { tried: 2 } });
    case '/404':
      return sendJson(res, 404, { results: { why: 'gone' }, metadata: { m: 1 } });
    case '/404-text':
      res.writeHead(404, { 'content-type': 'text/plain' });
      return void res.end('Not Found');
    case '/400':
      return sendJson(res, 400, { message: 'bad argument x' });
    case '/422':
      return sendJson(res, 422, { message: 'y must be positive' });
    case '/422-long':
      return sendJson(res, 422, { message: 'm'.repeat(900) });
    case '/422-none':
      return sendJson(res, 422, { error: 'no message here' });
    case '/422-number':
      return sendJson(res, 422, { message: 42 });
    case '/302':
      res.writeHead(302, { location: '/ok' });
      return void res.end();
    case '/not-json':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"status": "ok", ');
    case '/array':
      return sendJson(res, 200, [{ status: 'ok' }]);
    case '/null':
      return sendJson(res, 200, null);
    case '/weird-status':
      return sendJson(res, 200, { status: 'maybe', results: 1 });
    case '/slow':
      setTimeout(() => sendJson(res, 200, { results: 'late' }), 2000);
      return;
    case '/slow-body':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results":');
      setTimeout(() => res.end('"late"}'), 2000);
      return;
    case '/trickle': {
      // Every chunk well inside the call's bound, the whole answer far outside it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results":"');
      const drip = setInterval(() => res.write('x'), 50);
      setTimeout(() => {
        clearInterval(drip);
        res.end('"}');
      }, 3000);
      res.on('close', () => clearInterval(drip));
      return;
    }
    case '/big': {
      const text = JSON.stringify({ results: 'x'.repeat(BIG) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return void res.end(text);
    }
    case '/big-chunked': {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < BIG / 1024; i++) res.write('x'.repeat(1024));
      return void res.end();
    }
    case '/echo':
      return sendJson(res, 200, { results: { headers: req.headers, body, method: req.method } });
    default:
      return sendJson(res, 500, { message: `no behaviour for ${path}` });
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

const call: ForwardCall = {
  body: JSON.stringify({ q: 'widgets', n: 3 }),
  requestId: 'req_123',
  accountId: 'acc_real',
  keyId: 'key_real',
  tool: 'widget_search',
};

describe('Upstreams.forward', () => {
  let server: Server;
  let base: string;
  let sockets = 0;
  let refusedUrl: string;
  const upstreams = new Upstreams();

  const target = (path: string, over: Partial<UpstreamTarget> = {}): UpstreamTarget => ({
    url: `${base}${path}`,
    timeoutMs: 5000,
    maxResponseBytes: 1024 * 1024,
    headers: {},
    ...over,
  });
  const forward = (path: string, over: Partial<UpstreamTarget> = {}) =>
    upstreams.forward(target(path, over), call);

  beforeAll(async () => {
    server = createServer((req, res) => {
      handle(req, res).catch(() => res.destroy());
    });
    server.on('connection', () => sockets++);
    base = await listen(server);
    // A port that was open a moment ago and is now closed: nothing listens there.
    const gone = createServer();
    refusedUrl = `${await listen(gone)}/ok`;
    await closeServer(gone);
  });

  afterAll(async () => {
    await upstreams.close();
    await closeServer(server);
  });

  describe('answers', () => {
    it('passes a hit through: results, metadata and the HTTP status', async () => {
      expect(await forward('/ok')).toEqual({
        kind: 'answer',
        httpStatus: 200,
        status: 'ok',
        results: { rows: [1, 2] },
        resultsJson: '{"rows":[1,2]}',
        metadata: { source: 'test' },
        body: expect.objectContaining({ results: { rows: [1, 2] }, metadata: { source: 'test' } }),
      });
    });

    it('treats an absent status as ok, and drops metadata that is not an object', async () => {
      expect(await forward('/ok-bare')).toEqual({
        kind: 'answer',
        httpStatus: 201,
        status: 'ok',
        results: [3],
        resultsJson: '[3]',
        metadata: undefined,
        body: expect.objectContaining({ results: [3] }),
      });
    });

    it('answers null results when the body has none', async () => {
      expect(await forward('/ok-no-results')).toMatchObject({
        kind: 'answer',
        status: 'ok',
        results: null,
        resultsJson: 'null',
      });
    });

    it('reports a miss given as status "not_found"', async () => {
      expect(await forward('/miss')).toEqual({
        kind: 'answer',
        httpStatus: 200,
        status: 'not_found',
        results: null,
        resultsJson: 'null',
        metadata: { tried: 2 },
        body: expect.objectContaining({ status: 'not_found' }),
      });
    });

    it('reports a miss given as a 404 with a JSON body', async () => {
      expect(await forward('/404')).toEqual({
        kind: 'answer',
        httpStatus: 404,
        status: 'not_found',
        results: { why: 'gone' },
        resultsJson: '{"why":"gone"}',
        metadata: { m: 1 },
        body: expect.objectContaining({ results: { why: 'gone' } }),
      });
    });

    it('reports a miss given as a 404 with a body that is not JSON', async () => {
      expect(await forward('/404-text')).toEqual({
        kind: 'answer',
        httpStatus: 404,
        status: 'not_found',
        results: null,
        resultsJson: 'null',
        metadata: undefined,
        body: undefined,
      });
    });
  });

  describe('refused arguments', () => {
    it('passes the message of a 400 and a 422 through', async () => {
      expect(await forward('/400')).toEqual({ kind: 'rejected', message: 'bad argument x' });
      expect(await forward('/422')).toEqual({ kind: 'rejected', message: 'y must be positive' });
    });

    it('cuts a long message to 500 characters', async () => {
      expect(await forward('/422-long')).toEqual({ kind: 'rejected', message: 'm'.repeat(500) });
    });

    it('has no message when the body has none, or one that is not a string', async () => {
      expect(await forward('/422-none')).toEqual({ kind: 'rejected', message: undefined });
      expect(await forward('/422-number')).toEqual({ kind: 'rejected', message: undefined });
    });
  });

  describe('upstream errors', () => {
    it('maps 401 and 403 to upstream_error, saying the credentials were refused', async () => {
      for (const status of [401, 403]) {
        const r = await forward(`/status/${status}`);
        expect(r).toMatchObject({ kind: 'error', code: 'upstream_error' });
        expect(r.kind === 'error' && r.reason).toMatch(/credentials/);
      }
    });

    it('maps 500 and 503 to upstream_error with the status in the reason', async () => {
      expect(await forward('/status/500')).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'upstream answered 500',
      });
      expect(await forward('/status/503')).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'upstream answered 503',
      });
    });

    it('does not follow a redirect', async () => {
      expect(await forward('/302')).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'upstream answered 302',
      });
    });

    it('refuses a 2xx body that is not JSON, not an object, or has an unknown status', async () => {
      expect(await forward('/not-json')).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'invalid JSON',
      });
      expect(await forward('/array')).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'not an object',
      });
      expect(await forward('/null')).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'not an object',
      });
      expect(await forward('/weird-status')).toMatchObject({ kind: 'error', code: 'upstream_error' });
    });

    it('maps a refused connection to upstream_error', async () => {
      const r = await upstreams.forward(target('/ok', { url: refusedUrl }), call);
      expect(r).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'connection refused (ECONNREFUSED)',
      });
    });

    it('refuses a URL that is not http(s), without calling anything', async () => {
      const r = await upstreams.forward(target('/ok', { url: 'ftp://127.0.0.1/x' }), call);
      expect(r).toMatchObject({ kind: 'error', code: 'upstream_error' });
    });

    it('names a configured header HTTP cannot carry, without connecting', async () => {
      const before = sockets;
      for (const value of ['a\u001bb', '\ufeffx', 'x\ud800']) {
        const r = await forward('/ok', { headers: { 'X-Api': value } });
        expect(r).toEqual({
          kind: 'error',
          code: 'upstream_error',
          reason: 'the configured header X-Api holds characters HTTP cannot carry',
        });
      }
      expect(sockets).toBe(before);
    });
  });

  describe('limits', () => {
    it('times out an upstream that answers too late', async () => {
      expect(await forward('/slow', { timeoutMs: 200 })).toMatchObject({
        kind: 'error',
        code: 'upstream_timeout',
      });
    });

    it('times out an upstream whose headers come at once but whose body comes too late', async () => {
      expect(await forward('/slow-body', { timeoutMs: 200 })).toMatchObject({
        kind: 'error',
        code: 'upstream_timeout',
      });
    });

    it('bounds the whole call, not each chunk: a body trickling past timeout_ms times out', async () => {
      expect(await forward('/trickle', { timeoutMs: 300 })).toMatchObject({
        kind: 'error',
        code: 'upstream_timeout',
      });
    });

    it('abandons an answer whose content-length is over the limit', async () => {
      expect(await forward('/big', { maxResponseBytes: 1024 })).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'answer larger than 1024 bytes',
      });
    });

    it('abandons a chunked answer once it passes the limit', async () => {
      expect(await forward('/big-chunked', { maxResponseBytes: 1024 })).toEqual({
        kind: 'error',
        code: 'upstream_error',
        reason: 'answer larger than 1024 bytes',
      });
    });

    it('still works after abandoned answers', async () => {
      expect(await forward('/ok')).toMatchObject({ kind: 'answer', status: 'ok' });
    });
  });

  describe('the request', () => {
    const echo = async (headers: Record<string, string>) => {
      const r = await forward('/echo', { headers });
      if (r.kind !== 'answer') throw new Error(`echo failed: ${JSON.stringify(r)}`);
      return r.results as { headers: Record<string, string>; body: string; method: string };
    };

    it('POSTs the body with the five toolgate headers', async () => {
      const seen = await echo({});
      expect(seen.method).toBe('POST');
      expect(seen.body).toBe(call.body);
      expect(seen.headers).toMatchObject({
        'content-type': 'application/json',
        'x-request-id': 'req_123',
        'x-toolgate-account': 'acc_real',
        'x-toolgate-key': 'key_real',
        'x-toolgate-tool': 'widget_search',
      });
      expect(seen.headers.authorization).toBeUndefined();
    });

    it('adds configured headers, but they cannot override toolgate’s own', async () => {
      const seen = await echo({
        Authorization: bearer('upstream-secret'),
        'x-extra': 'yes',
        'X-Toolgate-Account': 'acc_forged',
        'x-request-id': 'forged',
        'Content-Type': 'text/plain',
      });
      expect(seen.headers.authorization).toBe(bearer('upstream-secret'));
      expect(seen.headers['x-extra']).toBe('yes');
      expect(seen.headers['x-toolgate-account']).toBe('acc_real');
      expect(seen.headers['x-request-id']).toBe('req_123');
      expect(seen.headers['content-type']).toBe('application/json');
    });

    it('reuses connections: 20 sequential calls open fewer sockets than calls', async () => {
      const before = sockets;
      for (let i = 0; i < 20; i++) {
        expect(await forward('/ok')).toMatchObject({ kind: 'answer' });
      }
      expect(sockets - before).toBeLessThan(20);
      expect(sockets - before).toBeLessThanOrEqual(2);
    });
  });
});
