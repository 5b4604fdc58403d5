/**
 * End to end with the MCP SDK's own OAuth clients against a live toolgate: 401 -> metadata ->
 * registration (DCR) -> authorize -> console sign-in and consent clicked in headless Chromium ->
 * token -> get_account answers the chosen account -> a metered catalogue tool moves its windows
 * and balance -> refresh -> revoke in the console's Connected apps -> the next call is 401.
 */
import {
  auth as authV2,
  UnauthorizedError,
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { auth as authV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launch, navigating } from '../console/browser-helpers.js';
import { accountWithKey } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { callbackServer, consentInBrowser, MemoryOAuthProvider } from './clients.js';
import { callTool, token } from './flow.js';
import { type Live, liveServer } from './harness.js';

const EMAIL = 'ada@example.com';
const canRun = browserAvailable();

describe.skipIf(!canRun)('MCP SDK OAuth clients, consent in Chromium (SQLite)', () => {
  let live: Live;
  let browser: Browser;
  let upstream: TestUpstream;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let alpha: string;
  let beta: string;

  beforeAll(async () => {
    upstream = await startTestUpstream();
    upstream.on('search', (_call, res) => sendJson(res, 200, { results: [{ n: 1 }, { n: 2 }] }));
    live = await liveServer('sqlite', { console: true, catalogue: true });
    const imported = await live.services.catalogue.import({
      tools: [
        {
          name: 'search_things',
          upstream: { url: `${upstream.url}/search` },
          metering: { category: 'search', tokens_per_call: 3 },
        },
      ],
    });
    if (!imported.ok) throw new Error(imported.error.message);
    alpha = (await accountWithKey(live.services, { name: 'Alpha', tokens: 100 })).accountId;
    beta = (await accountWithKey(live.services, { name: 'Beta', tokens: 100 })).accountId;
    for (const id of [alpha, beta]) {
      const added = await live.services.users.add(id, EMAIL, 'owner');
      if (!added.ok) throw new Error(added.error.message);
    }
    callback = await callbackServer();
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await callback?.close();
    await live?.close();
    await upstream?.close();
  });

  const balance = async (id: string) => {
    const a = await live.services.accounts.get(id);
    if (!a.ok) throw new Error(a.error.message);
    return a.value;
  };

  it('v2 client: DCR, consent for Beta, get_account and a metered call as Beta, refresh, revoke in the console, 401', async () => {
    const provider = new MemoryOAuthProvider(callback.url);
    const mcpUrl = new URL(`${live.url}/mcp`);
    const first = new V2Client({ name: 'oauth-test-v2', version: '1.0.0' });
    await expect(
      first.connect(new V2Transport(mcpUrl, { authProvider: provider as never })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.clientInfo?.client_id).toBeTruthy();
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');

    await consentInBrowser(browser, live, provider.authorizationUrl!, EMAIL, 'Beta');
    const q = await callback.next();
    const transport = new V2Transport(mcpUrl, { authProvider: provider as never });
    await transport.finishAuth(q.get('code')!, q.get('iss') ?? undefined);
    expect(provider.saved?.access_token).toBeTruthy();

    const client = new V2Client({ name: 'oauth-test-v2', version: '1.0.0' });
    await client.connect(transport);
    const account = (await client.callTool({ name: 'get_account', arguments: {} })) as {
      structuredContent?: any;
    };
    expect(account.structuredContent?.account?.id ?? JSON.stringify(account)).toContain(beta);

    const before = await balance(beta);
    const alphaBefore = await balance(alpha);
    const searched = (await client.callTool({ name: 'search_things', arguments: {} })) as {
      isError?: boolean;
    };
    expect(searched.isError).toBeFalsy();
    const after = await balance(beta);
    expect(after.token_balance).toBe(before.token_balance - 3);
    expect(JSON.stringify(after.fair_use)).not.toBe(JSON.stringify(before.fair_use));
    expect(await balance(alpha)).toEqual(alphaBefore);

    // Refresh: a new access token, the refresh token rotated; the new one works.
    const refreshed = await token(live, {
      grant_type: 'refresh_token',
      refresh_token: provider.saved!.refresh_token,
      client_id: provider.clientInfo!.client_id,
    });
    expect(refreshed.status).toBe(200);
    expect((await callTool(live, refreshed.body.access_token!, 'get_account')).status).toBe(200);

    // Revoke in the console (signed in already in this browser context): the next call is 401.
    const page = await consentInBrowserContextPage();
    await page.goto(`${live.url}/console/a/${beta}/connected-apps`);
    expect(await page.textContent('main')).toContain('SDK connector');
    // The answer redirects to the URL the page is on already: waitForURL would not wait for it.
    await navigating(page, () => page.getByRole('button', { name: 'Revoke' }).click());
    expect(await page.textContent('main')).toContain('No connected apps');
    expect((await callTool(live, refreshed.body.access_token!, 'get_account')).status).toBe(401);
    expect((await callTool(live, provider.saved!.access_token, 'get_account')).status).toBe(401);
    await client.close().catch(() => {});
  }, 60_000);

  // The browser context that signed in above, for the console's pages.
  const consentInBrowserContextPage = async () => {
    const context = browser.contexts()[0]!;
    return context.newPage();
  };

  it('v1 auth() with an OAuthClientProvider, and no resource on /authorize: the token is for /mcp', async () => {
    const provider = new MemoryOAuthProvider(callback.url);
    const serverUrl = `${live.url}/mcp`;
    expect(await authV1(provider as never, { serverUrl })).toBe('REDIRECT');
    const url = provider.authorizationUrl!;
    // As claude.ai does: no `resource` on /authorize.
    url.searchParams.delete('resource');
    await consentInBrowser(browser, live, url, EMAIL, 'Alpha');
    const q = await callback.next();
    expect(q.get('iss')).toBe(live.url);
    expect(await authV1(provider as never, { serverUrl, authorizationCode: q.get('code')! })).toBe(
      'AUTHORIZED',
    );
    const answer = await callTool(live, provider.saved!.access_token, 'get_account');
    expect(answer.status).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(alpha);
    // A v2 auth() against the same server agrees that the stored tokens are enough.
    expect(await authV2(provider as never, { serverUrl })).toBe('AUTHORIZED');
  }, 60_000);
});
