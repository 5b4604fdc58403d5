/**
 * Two servers on one PostgreSQL: a connection made through one works through the other, and a grant
 * revoked on one is refused by the other at its next request, though the other had the token in
 * memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import { authorize, callTool, exchange, register, token } from './flow.js';
import { type Live, liveServer, person } from './harness.js';

const available = await postgresAvailable();

describe.skipIf(!available)('OAuth across two servers on one PostgreSQL', () => {
  let a: Live;
  let b: Live;
  beforeAll(async () => {
    a = await liveServer('postgres');
    // One deployment: one database and one public URL.
    b = await liveServer('postgres', { schema: a.where, publicUrl: a.url });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a token from one server works on the other, and a revocation on one is seen by the other at once', async () => {
    const accountId = (await accountWithKey(a.services)).accountId;
    const cookie = a.identity.signIn(await person(a, 'lee@example.com', [accountId]));
    const clientId = String((await register(a)).body.client_id);
    const t = await exchange(a, await authorize(a, clientId, cookie, accountId));
    // On the other server: the token, a refresh, and the same account.
    const onB = await callTool(b, t.body.access_token!, 'get_account');
    expect(onB.status).toBe(200);
    expect(JSON.stringify(onB.body)).toContain(accountId);
    const refreshed = await token(b, {
      grant_type: 'refresh_token',
      refresh_token: t.body.refresh_token!,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    expect((await callTool(b, refreshed.body.access_token!, 'get_account')).status).toBe(200);

    const grants = await a.oauth.grants.list(accountId);
    expect(grants).toHaveLength(1);
    expect(await a.oauth.revokeGrant(grants[0]!.id, accountId, 'user:lee@example.com')).toBe(true);
    expect((await callTool(b, refreshed.body.access_token!, 'get_account')).status).toBe(401);
    expect((await callTool(a, refreshed.body.access_token!, 'get_account')).status).toBe(401);
  });
});
