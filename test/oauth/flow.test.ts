import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import { authorize, callTool, exchange, register, token } from './flow.js';
import { type Backend, type Live, liveServer, person } from './harness.js';

const backends: Backend[] = ['sqlite', 'postgres'];

describe.each(backends)('OAuth authorization code flow on %s', (backend) => {
  let live: Live;
  let skip = false;
  let accountA: string;
  let accountB: string;
  let cookie: string;

  beforeAll(async () => {
    if (backend === 'postgres' && !(await postgresAvailable())) {
      skip = true;
      return;
    }
    live = await liveServer(backend);
    accountA = (await accountWithKey(live.services, { name: 'Alpha' })).accountId;
    accountB = (await accountWithKey(live.services, { name: 'Beta' })).accountId;
    cookie = live.identity.signIn(await person(live, 'ada@example.com', [accountA, accountB]));
  });
  afterAll(async () => live?.close());

  it('serves the metadata, registers, authorizes with PKCE and calls get_account as the chosen account', async ({
    skip: s,
  }) => {
    if (skip) return s();
    const unauth = await fetch(`${live.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${live.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const prm = (await (
      await fetch(`${live.url}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    expect(prm.resource).toBe(`${live.url}/mcp`);
    expect(prm.authorization_servers).toEqual([live.url]);
    const as = (await (await fetch(`${live.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as.issuer).toBe(live.url);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.registration_endpoint).toBe(`${live.url}/oauth/register`);

    const reg = await register(live, { scope: 'claudeai mcp', logo_uri: null });
    expect(reg.status).toBe(201);
    expect(Object.values(reg.body)).not.toContain(null);
    const clientId = String(reg.body.client_id);

    const code = await authorize(live, clientId, cookie, accountB);
    expect(code.location.searchParams.get('iss')).toBe(live.url);
    const tokens = await exchange(live, code);
    expect(tokens.status).toBe(200);
    expect(tokens.body.expires_in).toBeLessThanOrEqual(3600);
    expect(tokens.body.refresh_token).toBeTruthy();

    const answer = await callTool(live, tokens.body.access_token!, 'get_account');
    expect(answer.status).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(accountB);

    // The same browser connects the person's other account: the provider's session is the
    // person's, not an account's, so it does not ask to sign out first.
    // ... asking for a scope unknown here (claude.ai's), which is ignored, not refused.
    const second = await authorize(live, clientId, cookie, accountA, { scope: 'claudeai' }, code.jar);
    const tokensA = await exchange(live, second);
    expect(JSON.stringify((await callTool(live, tokensA.body.access_token!, 'get_account')).body)).toContain(
      accountA,
    );

    const refreshed = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token!,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect((await callTool(live, refreshed.body.access_token!, 'get_account')).status).toBe(200);
  });
});
