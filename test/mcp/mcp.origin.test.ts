/**
 * The MCP specification's DNS-rebinding rule on /mcp, against the built server as a process with
 * TOOLGATE_ALLOWED_ORIGINS set: an Origin that is neither the server's own nor listed is 403
 * before any other work; no Origin is served. Requests go over raw sockets (node:http), so the
 * Host header is what a rebound browser would send.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../calls.js';
import { accountWithKey, E2E_ADMIN_TOKEN } from '../e2e/admin-client.js';
import { type ServerProcess, startServer } from '../e2e/process.js';

const ALLOWED = 'https://App.Example.com:443, vscode-file://vscode-app';
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'origin-test', version: '1' },
  },
});

let dir: string;
let server: ServerProcess;
let port: string;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-origin-'));
  server = await startServer({
    TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 't.db')}`,
    TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
    TOOLGATE_ALLOWED_ORIGINS: ALLOWED,
    NODE_ENV: 'production',
  });
  port = new URL(server.url).port;
  key = (await accountWithKey(server.url)).key;
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: any;
}

/** A request to /mcp over a real socket to the server, with exactly these Host and Origin headers. */
function mcp(opts: {
  host?: string;
  origin?: string;
  key?: string | null;
  method?: string;
}): Promise<Answer> {
  const headers: Record<string, string> = {
    host: opts.host ?? `127.0.0.1:${port}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
    ...(opts.key === null ? {} : { authorization: bearer(opts.key ?? key) }),
  };
  const method = opts.method ?? 'POST';
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mcp', method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? INITIALIZE : undefined);
  });
}

const served = (a: Answer) => a.status === 200 && a.body?.result?.serverInfo?.name === 'toolgate';
const refused = (a: Answer) => a.status === 403 && a.body?.code === 'origin_not_allowed';

describe('Origin on /mcp', () => {
  it('no Origin is served, whatever the Host (clients that are not browsers send none)', async () => {
    expect(served(await mcp({}))).toBe(true);
    expect(served(await mcp({ host: 'tools.example.com' }))).toBe(true);
  });

  it("a rebound page's Origin is 403 even when the Host agrees with it (the conformance suite's case)", async () => {
    for (const [host, origin] of [
      ['evil.example.com', 'http://evil.example.com'],
      [`evil.example.com:${port}`, `http://evil.example.com:${port}`],
      [`127.0.0.1:${port}`, 'http://evil.example.com'],
    ] as const)
      expect(await mcp({ host, origin }), `${host} ${origin}`).toSatisfy(refused);
  });

  it('is 403 before the key is looked at: a page without the key learns nothing about it', async () => {
    expect(await mcp({ host: 'evil.example.com', origin: 'http://evil.example.com', key: null })).toSatisfy(
      refused,
    );
    expect(await mcp({ origin: 'http://evil.example.com', key: 'tg_AAAAAAAAAAA' })).toSatisfy(refused);
  });

  it("the server's own origin is served: the request's Host, when it is localhost or an address", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `10.1.2.3:${port}`]) {
      expect(served(await mcp({ host, origin: `http://${host}` })), host).toBe(true);
      expect(served(await mcp({ host, origin: `https://${host}` })), `https ${host}`).toBe(true);
    }
    // The default port is the same origin written shorter.
    expect(served(await mcp({ host: 'localhost:80', origin: 'http://localhost' }))).toBe(true);
  });

  it('another port, scheme or host on the same machine is another origin: 403', async () => {
    for (const origin of [
      'http://localhost:3000',
      `http://127.0.0.2:${port}`,
      `ftp://127.0.0.1:${port}`,
      `http://sub.localhost:${port}`,
    ])
      expect(await mcp({ host: `localhost:${port}`, origin }), origin).toSatisfy(refused);
  });

  it('a listed origin is served from any Host, matched as an origin (case, default port)', async () => {
    for (const origin of [
      'https://app.example.com',
      'https://APP.example.com:443',
      'vscode-file://vscode-app',
    ])
      expect(served(await mcp({ host: 'tools.example.com', origin })), origin).toBe(true);
    expect(await mcp({ host: 'tools.example.com', origin: 'http://app.example.com' })).toSatisfy(refused);
  });

  it('an Origin that is not an origin is 403: null, a path, garbage, empty', async () => {
    for (const origin of ['null', 'https://app.example.com/page', 'not a url', '', 'http://'])
      expect(await mcp({ origin }), JSON.stringify(origin)).toSatisfy(refused);
  });

  it('every method of /mcp is checked', async () => {
    expect(await mcp({ origin: 'http://evil.example.com', method: 'GET' })).toSatisfy(refused);
    expect((await mcp({ method: 'GET' })).status).toBe(405);
  });

  it('a listed value that is not an origin stops the server at start, naming the variable', async () => {
    const bad = startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'bad.db')}`,
      TOOLGATE_ALLOWED_ORIGINS: 'https://app.example.com/path',
    }).then((started) => started.stop());
    await expect(bad).rejects.toThrow(/TOOLGATE_ALLOWED_ORIGINS must be/);
  });
});
