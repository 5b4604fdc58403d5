/**
 * The MCP SDK's own OAuth client flow, driven for real: an in-memory OAuthClientProvider (the SDK
 * asks it for metadata, stores what it gets), a loopback callback server the authorization server
 * redirects to, and headless Chromium where the person signs in to the console and clicks "Allow".
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { navigating } from '../console/browser-helpers.js';
import { consoleLink } from '../console/smtp-sink-helpers.js';
import type { Live } from './harness.js';

type Json = Record<string, any>;

/** The SDK's OAuthClientProvider (the same shape in v1 and v2), holding everything in memory. */
export class MemoryOAuthProvider {
  clientInfo: Json | undefined;
  saved: Json | undefined;
  verifier = '';
  /** The authorization URL the SDK sent the person to. */
  authorizationUrl: URL | undefined;

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
  ) {}

  get clientMetadata() {
    return {
      client_name: 'SDK connector',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.clientInfo as never;
  }
  saveClientInformation(info: Json) {
    this.clientInfo = info;
  }
  tokens() {
    return this.saved as never;
  }
  saveTokens(tokens: Json) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A loopback server for the redirect: resolves with the callback's query once the browser arrives. */
export async function callbackServer(): Promise<{
  url: string;
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}> {
  let waiting: ((q: URLSearchParams) => void) | undefined;
  const arrived: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    // The browser asks for /favicon.ico too.
    if (url.pathname !== '/callback') return;
    const q = url.searchParams;
    if (waiting) {
      waiting(q);
      waiting = undefined;
    } else arrived.push(q);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => {
      const first = arrived.shift();
      return first ? Promise.resolve(first) : new Promise((r) => (waiting = r));
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * In the browser: opens the authorization URL; signs in through the console's emailed link when
 * asked; on the consent page chooses the account named `accountName` and clicks the button.
 */
export async function consentInBrowser(
  browser: Browser,
  live: Live,
  authorizationUrl: URL,
  email: string,
  accountName: string,
  button: 'Allow' | 'Deny' = 'Allow',
): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(authorizationUrl.href);
  if (new URL(page.url()).pathname === '/console/sign-in') {
    const before = live.sink!.to(email).length;
    await page.fill('#email', email);
    await page.click('button[type=submit]');
    const mail = await live.sink!.waitFor(email, before + 1);
    await page.goto(consoleLink(mail));
    // The link's page spends nothing until its button is pressed (mail scanners fetch links too).
    await navigating(page, () => page.getByRole('button', { name: 'Sign in' }).click());
  }
  if (!new URL(page.url()).pathname.startsWith('/console/consent/'))
    throw new Error(`not on the consent page: ${page.url()}\n${(await page.content()).slice(0, 1500)}`);
  await page.getByLabel(accountName).check();
  await navigating(page, () => page.getByRole('button', { name: button }).click());
  return page;
}
