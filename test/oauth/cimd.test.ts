/**
 * Client ID Metadata Documents: a client whose client_id is the https URL of its metadata, which
 * the test serves (a self-signed certificate the server is told to trust, as it would trust a
 * public CA), registered by nothing else; the MCP SDK picks it when the server says it supports it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { auth as authV2 } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey, scratchDir } from '../helpers.js';
import { MemoryOAuthProvider } from './clients.js';
import { callTool, consentFrom, Jar, token } from './flow.js';
import { type Live, liveServer, person } from './harness.js';

const CALLBACK = 'http://127.0.0.1:9/cimd-callback';

describe('a client identified by its metadata document (CIMD)', () => {
  const dir = scratchDir();
  let server: Server;
  let live: Live;
  let documentUrl = '';
  let document: Record<string, unknown> = {};
  let accountId: string;
  let cookie: string;

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        `${dir.dir}/key.pem`,
        '-out',
        `${dir.dir}/cert.pem`,
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(`${dir.dir}/cert.pem`);
    server = createServer({ key: readFileSync(`${dir.dir}/key.pem`), cert }, (req, res) => {
      if (req.url !== '/oauth/client.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    documentUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`;
    document = {
      client_id: documentUrl,
      client_name: 'CIMD connector',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    // The server's outgoing fetch, trusting the test's certificate (the library's own guard refuses
    // loopback addresses, as it must in production).
    const agent = new Agent({ connect: { ca: cert } });
    const trusting = ((url: string, init: Record<string, unknown>) =>
      undiciFetch(url, { ...init, dispatcher: agent } as never)) as unknown as typeof fetch;
    live = await liveServer('sqlite', { fetch: trusting });
    accountId = (await accountWithKey(live.services)).accountId;
    cookie = live.identity.signIn(await person(live, 'cim@example.com', [accountId]));
  });
  afterAll(async () => {
    await live?.close();
    await new Promise((r) => server?.close(r));
    dir.cleanup();
  });

  it('the MCP SDK sends the document URL as client_id, and the flow ends in a working token', async () => {
    const provider = new MemoryOAuthProvider(CALLBACK, documentUrl);
    expect(await authV2(provider as never, { serverUrl: `${live.url}/mcp` })).toBe('REDIRECT');
    const url = provider.authorizationUrl!;
    expect(url.searchParams.get('client_id')).toBe(documentUrl);
    const jar = new Jar();
    jar.add(cookie);
    const { code, location } = await consentFrom(live, jar, url.href, accountId, CALLBACK);
    expect(location.searchParams.get('iss')).toBe(live.url);
    const t = await token(live, {
      grant_type: 'authorization_code',
      code,
      code_verifier: provider.verifier,
      redirect_uri: CALLBACK,
      client_id: documentUrl,
    });
    expect(t.status).toBe(200);
    expect((await callTool(live, t.body.access_token!, 'get_account')).status).toBe(200);
    const keys = await live.oauth.grants.list(accountId);
    expect(keys.map((k) => k.name)).toContain('OAuth: CIMD connector');
  });

  it('refuses a document whose client_id is not its own URL, or whose redirect is http off loopback', async () => {
    const cases: ((id: string) => Record<string, unknown>)[] = [
      (_id) => ({ ...document, client_id: 'https://elsewhere.example/client.json' }),
      (id) => ({ ...document, client_id: id, redirect_uris: ['http://evil.example/cb'] }),
    ];
    for (const make of cases) {
      // A new id each time: the server keeps a fetched document for a while.
      const id = `${documentUrl}?v=${Math.random()}`;
      document = make(id);
      const q = new URLSearchParams({
        client_id: id,
        response_type: 'code',
        redirect_uri: CALLBACK,
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
      });
      const res = await fetch(`${live.url}/oauth/authorize?${q}`, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Record<string, string>).error).toMatch(/invalid_client/);
    }
  });
});
