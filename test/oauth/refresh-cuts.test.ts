/**
 * Refresh tokens under PostgreSQL cuts: a server on PostgreSQL through a TCP proxy, 8 connectors
 * refreshing in a loop while the proxy is killed again and again (every connection reset, new ones
 * refused). Every answer is 200 or 503 `temporarily_unavailable` with Retry-After; a connector that
 * got 503 retries the same refresh token and succeeds once the database is back; no grant is
 * revoked. The figures printed are the ones docs/security.md gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyInFront, type TcpProxy } from '../e2e/tcp-proxy.js';
import { accountWithKey } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable } from '../postgres.js';
import { authorize, callTool, exchange, register } from './flow.js';
import { type Live, liveServer, person } from './harness.js';

const available = await postgresAvailable();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WORKERS = 8;
const CUTS = 8;

describe.skipIf(!available)('refresh tokens while PostgreSQL is cut', () => {
  let live: Live;
  let proxy: TcpProxy;
  let account: string;
  let cookie: string;

  beforeAll(async () => {
    const front = await proxyInFront(POSTGRES_URL);
    proxy = front.proxy;
    live = await liveServer('postgres', { databaseUrl: front.url.toString(), databaseTimeoutMs: 1000 });
    account = (await accountWithKey(live.services, { name: 'Cut' })).accountId;
    cookie = live.identity.signIn(await person(live, 'cut@example.com', [account]));
  });
  afterAll(async () => {
    await live?.close();
    await proxy?.stop();
  });

  it('answers 200 or 503 temporarily_unavailable, every refresh succeeds on retry, 0 grants revoked', async () => {
    const chains: { clientId: string; refresh: string; access: string; grantId?: string }[] = [];
    for (let i = 0; i < WORKERS; i++) {
      const clientId = String((await register(live)).body.client_id);
      const t = await exchange(live, await authorize(live, clientId, cookie, account));
      expect(t.status).toBe(200);
      chains.push({ clientId, refresh: t.body.refresh_token!, access: t.body.access_token! });
    }
    const grantsBefore = (await live.oauth.grants.list(account)).filter((k) => k.revokedAt === null);
    expect(grantsBefore).toHaveLength(WORKERS);

    const counts = { ok: 0, unavailable: 0, other: [] as string[], retryAfter: 0 };
    let stop = false;
    const worker = async (chain: (typeof chains)[number]) => {
      while (!stop) {
        let res: Response;
        try {
          res = await fetch(`${live.url}/oauth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'refresh_token',
              refresh_token: chain.refresh,
              client_id: chain.clientId,
            }),
          });
        } catch (err) {
          counts.other.push(`fetch: ${(err as Error).message}`);
          continue;
        }
        const body = (await res.json()) as Record<string, string>;
        if (res.status === 200) {
          counts.ok++;
          chain.refresh = body.refresh_token!;
          chain.access = body.access_token!;
        } else if (res.status === 503 && body.error === 'temporarily_unavailable') {
          counts.unavailable++;
          if (res.headers.get('retry-after') !== null) counts.retryAfter++;
          await sleep(50);
        } else {
          counts.other.push(`${res.status} ${body.error}`);
          await sleep(50);
        }
      }
    };
    const load = Promise.all(chains.map(worker));
    await sleep(500);
    for (let i = 0; i < CUTS; i++) {
      proxy.cut();
      await sleep(1000);
      proxy.restore();
      await sleep(1200);
    }
    stop = true;
    await load;

    // Every chain refreshes once more, the database back.
    let lastOk = 0;
    for (const chain of chains) {
      for (let attempt = 0; attempt < 50; attempt++) {
        const res = await fetch(`${live.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: chain.refresh,
            client_id: chain.clientId,
          }),
        });
        const body = (await res.json()) as Record<string, string>;
        if (res.status === 200) {
          lastOk++;
          chain.access = body.access_token!;
          break;
        }
        if (res.status !== 503) {
          counts.other.push(`after: ${res.status} ${body.error}`);
          break;
        }
        await sleep(100);
      }
    }
    const revoked = (await live.oauth.grants.list(account)).filter((k) => k.revokedAt !== null).length;
    const calls = await Promise.all(chains.map((c) => callTool(live, c.access, 'get_account')));
    console.log(
      `refresh under ${CUTS} cuts: ${counts.ok} answered 200, ${counts.unavailable} answered 503 ` +
        `(${counts.retryAfter} with Retry-After), ${counts.other.length} other; ` +
        `${lastOk} of ${WORKERS} chains refreshed after; ${revoked} grants revoked`,
    );
    expect(counts.other).toEqual([]);
    expect(counts.unavailable).toBeGreaterThan(0);
    expect(counts.retryAfter).toBe(counts.unavailable);
    expect(lastOk).toBe(WORKERS);
    expect(revoked).toBe(0);
    expect(calls.map((c) => c.status)).toEqual(Array(WORKERS).fill(200));
  }, 120_000);
});
