/**
 * @module What an OAuth access token costs against an API key. One toolgate process (the console on,
 * so OAuth is), its own database: ACCOUNTS accounts with a key each, and one person who connected an
 * MCP client to every one of them through the real flow (registration, console sign-in, consent,
 * PKCE code exchange). The load is tools/call get_account on /mcp: with the accounts' access tokens
 * against the same with their keys (the baseline), on the same server; a token call must cost at
 * most 10% more (tokens / keys >= 0.9). The per-key rate limit is off, for both alike.
 */
import { createHash, randomBytes } from 'node:crypto';
import { systemClock } from '../../src/domain/clock.js';
import { actingAs } from '../../src/service/audit.js';
import { createServices } from '../../src/service/index.js';
import { openCachedStore } from '../../src/store/open.js';
import type { LoadRequest } from '../lib/load.js';
import { mcpToolCall } from '../lib/mcp-requests.js';
import { probe, scratchDatabase } from '../lib/postgres.js';
import { seed } from '../lib/seeding.js';
import {
  setToolgateEnv,
  startToolgatePostgres,
  startToolgateSqlite,
  type ToolgateTarget,
} from '../lib/targets.js';
import { type Fixture, PEAK_RSS_MIB, type Scenario } from './scenario.js';

const ACCOUNTS = 200;
const TARGET = 0.9;
const PERSON = 'connector@example.com';
const REDIRECT = 'http://127.0.0.1:9/callback';

interface Setup {
  server: ToolgateTarget;
  /** The same accounts' keys and access tokens, in one order. */
  keys: string[];
  tokens: string[];
}

const setups = new Map<string, Promise<Setup>>();
const ready = new Map<string, Setup>();

/** The person, a user of every account, and a sign-in link for them (as `toolgate console link` makes it). */
async function addPerson(
  databaseUrl: string,
  schema: string | undefined,
  keySecret: string,
  accountIds: string[],
) {
  const { store, reads } = await openCachedStore(
    databaseUrl.startsWith('sqlite:')
      ? { kind: 'sqlite', path: databaseUrl.slice('sqlite:'.length) }
      : { kind: 'postgres', url: databaseUrl, schema: schema!, poolSize: 2, timeoutMs: 10_000 },
    {},
  );
  try {
    const services = createServices({ store, reads, clock: systemClock, keyPrefix: 'tg', keySecret });
    for (const id of accountIds) {
      const user = await services.users.add(id, PERSON, 'owner');
      if (!user.ok) throw new Error(user.error.message);
    }
    const link = await services
      .console({
        publicUrl: () => 'http://link',
        signup: 'closed',
        signupPlan: 'free',
      })
      .operatorLink(actingAs('cli:bench'), PERSON, accountIds[0]!);
    if (!link.ok) throw new Error(link.error.message);
    return new URL(link.value.url).pathname + new URL(link.value.url).search;
  } finally {
    await store.close();
  }
}

/** Cookies as a browser keeps them, for the few requests of a flow. */
export class Jar {
  readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      this.cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  }
}

/** One connection through the real flow, for `accountId`: its access token. */
export async function connect(
  base: string,
  session: Jar,
  clientId: string,
  accountId: string,
): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: 'mcp',
  });
  const next = (res: Response) => {
    const location = res.headers.get('location');
    if (res.status !== 303 || !location)
      throw new Error(`oauth flow: ${res.url} answered ${res.status}: ${res.headers.get('content-type')}`);
    return new URL(location, base);
  };
  let res = await session.fetch(`${base}/oauth/authorize?${q}`);
  const consent = next(res).href;
  const page = await (await session.fetch(consent)).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!csrf) throw new Error(`no consent form: ${page.slice(0, 300)}`);
  res = await session.fetch(consent, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, account_id: accountId, decision: 'allow' }),
  });
  let location = next(res);
  for (let hops = 0; !location.href.startsWith(REDIRECT); hops++) {
    if (hops > 3) throw new Error(`oauth flow: no redirect to the client (at ${location.href})`);
    location = next(await session.fetch(location.href));
  }
  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: clientId,
    }),
  });
  const body = (await token.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no access token: ${JSON.stringify(body)}`);
  return body.access_token;
}

async function setUp(f: Fixture): Promise<Setup> {
  const keySecret = randomBytes(32).toString('hex');
  const backend = f.toolgate.backend;
  const { databaseUrl, schema } = await scratchDatabase(backend, 'toolgate-oauth-bench-');
  const seeded = await seed({
    accounts: ACCOUNTS,
    keysPerAccount: 1,
    databaseUrl,
    schema,
    keySecret,
    sample: ACCOUNTS,
  });
  const linkPath = await addPerson(
    databaseUrl,
    schema,
    keySecret,
    seeded.sample.map((s) => s.accountId),
  );
  setToolgateEnv({ TOOLGATE_RATE_LIMIT: '0' });
  const server = await (backend === 'sqlite'
    ? startToolgateSqlite({ file: databaseUrl.slice('sqlite:'.length), keySecret })
    : startToolgatePostgres({
        url: databaseUrl,
        poolSize: 10,
        local: (await probe(databaseUrl)).local,
        existing: { schema: schema!, keySecret },
      })
  ).finally(() => setToolgateEnv({}));
  const session = new Jar();
  await session.fetch(`${server.url}${linkPath}`);
  const registered = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'bench connector',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    }),
  });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const tokens: string[] = [];
  for (const s of seeded.sample) tokens.push(await connect(server.url, session, clientId, s.accountId));
  return { server, keys: seeded.sample.map((s) => s.key), tokens };
}

const setupFor = (f: Fixture) => {
  let s = setups.get(f.toolgate.backend);
  if (!s) {
    s = setUp(f);
    setups.set(f.toolgate.backend, s);
  }
  return s;
};

const calls = (bearers: string[]): LoadRequest[] => {
  const { headers, body } = mcpToolCall('2025', 'get_account', {});
  return bearers.map((b) => ({
    method: 'POST',
    path: '/mcp',
    headers: { authorization: `Bearer ${b}`, 'content-type': 'application/json', ...headers },
    body,
  }));
};

const of = (f: Fixture) => {
  const s = ready.get(f.toolgate.backend);
  if (!s) throw new Error('oauth scenario: requests asked before prepare');
  return s;
};

export const oauthCost: Scenario = {
  id: 'oauth',
  title: 'get_account over MCP: OAuth access tokens vs API keys',
  description: `POST /mcp tools/call get_account with ${ACCOUNTS} accounts' OAuth access tokens (each from the real flow: registration, console sign-in, consent, PKCE) against the same accounts' API keys, on one server, the per-key limit off`,
  rotates: 'key',
  target: TARGET,
  peakRssMib: PEAK_RSS_MIB,
  onlyWhenNamed: true,
  async prepare(f) {
    const s = await setupFor(f);
    ready.set(f.toolgate.backend, s);
    return {
      ...f,
      baseline: { name: 'toolgate, API keys', url: s.server.url, child: s.server.child },
      toolgate: s.server,
    };
  },
  baselineRequests: (f) => calls(of(f).keys),
  requests: (f) => calls(of(f).tokens),
  check(body) {
    const b = body as { result?: { isError?: boolean; structuredContent?: unknown } } | null;
    return b?.result && !b.result.isError && b.result.structuredContent
      ? null
      : `not a get_account result: ${JSON.stringify(body).slice(0, 200)}`;
  },
};
