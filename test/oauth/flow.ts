/**
 * The authorization code flow by hand, over real HTTP with a cookie jar, for the tests that need
 * to hold a step (a code, a verifier, a refresh token) and misuse it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Live } from './harness.js';

export class Jar {
  private readonly cookies = new Map<string, string>();
  add(line: string) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1));
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.header());
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) this.add(line);
    return res;
  }
}

/** The CSRF token of a console page's form (the consent page's). */
export function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no CSRF token on the page: ${html.slice(0, 500)}`);
  return token;
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

export const REDIRECT = 'http://127.0.0.1:9/callback';

export async function register(live: Live, metadata: Record<string, unknown> = {}) {
  const res = await fetch(`${live.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test connector',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...metadata,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export interface Authorized {
  code: string;
  verifier: string;
  clientId: string;
  jar: Jar;
  location: URL;
}

/** /authorize -> consent (as `cookie`'s person, choosing `accountId`) -> the redirect with a code. */
export async function authorize(
  live: Live,
  clientId: string,
  cookie: string,
  accountId: string,
  params: Record<string, string> = {},
  /** A browser that went through the flow before (its provider session kept). */
  browser?: Jar,
): Promise<Authorized> {
  const jar = browser ?? new Jar();
  jar.add(cookie);
  const { url, verifier } = authorizeUrl(live, clientId, params);
  const { code, location } = await consentFrom(live, jar, url, accountId, REDIRECT);
  return { code, verifier, clientId, jar, location };
}

/** An /authorize URL with PKCE for `clientId`; `params` replace the defaults, and '' leaves one out. */
export function authorizeUrl(
  live: Live,
  clientId: string,
  params: Record<string, string> = {},
): { url: string; verifier: string } {
  const { verifier, challenge } = pkce();
  const q = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'mcp',
    state: 'st4te',
    resource: `${live.url}/mcp`,
    ...params,
  });
  for (const [k, v] of Object.entries(params)) if (v === '') q.delete(k);
  return { url: `${live.url}/oauth/authorize?${q}`, verifier };
}

/** From an authorization URL: consent (the jar signed in) for `accountId`, up to the redirect to `redirect`. */
export async function consentFrom(
  live: Live,
  jar: Jar,
  authorizationUrl: string,
  accountId: string,
  redirect: string,
) {
  let res = await jar.fetch(authorizationUrl);
  if (res.status !== 303) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  const consentUrl = new URL(res.headers.get('location')!, live.url);
  res = await jar.fetch(consentUrl.href);
  if (res.status !== 200) throw new Error(`consent page answered ${res.status}: ${await res.text()}`);
  const _csrf = csrfOf(await res.text());
  res = await jar.fetch(consentUrl.href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf, account_id: accountId, decision: 'allow' }),
  });
  // Back to the provider, which redirects to the client with the code.
  for (let hops = 0; hops < 5 && res.status >= 300 && res.status < 400; hops++) {
    const next = new URL(res.headers.get('location')!, live.url);
    if (next.href.startsWith(redirect)) {
      const code = next.searchParams.get('code');
      if (!code) throw new Error(`no code: ${next}`);
      return { code, location: next };
    }
    res = await jar.fetch(next.href);
  }
  throw new Error(`no redirect to the client: ${res.status} ${await res.text()}`);
}

export async function token(live: Live, body: Record<string, string>) {
  const res = await fetch(`${live.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

export function exchange(live: Live, a: Authorized, extra: Record<string, string> = {}) {
  return token(live, {
    grant_type: 'authorization_code',
    code: a.code,
    code_verifier: a.verifier,
    redirect_uri: REDIRECT,
    client_id: a.clientId,
    resource: `${live.url}/mcp`,
    ...extra,
  });
}

/** tools/call on /mcp with a bearer: the HTTP status and the parsed answer. */
export async function callTool(live: Live, bearer: string, name: string, args: Record<string, unknown> = {}) {
  const res = await fetch(`${live.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, any>) : {},
  };
}
