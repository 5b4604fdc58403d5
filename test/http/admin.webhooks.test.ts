/** The admin API's webhooks: every route, its refusals, the secret shown once, and the audit trail. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { send } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, scratchApp } from '../helpers.js';

/** A public address written as an IP literal: no DNS needed, and not one the address guard refuses. */
const PUBLIC_URL = 'http://93.184.216.34/toolgate-hooks';

describe('admin API: webhooks', () => {
  let h: AppHarness;
  beforeEach(async () => {
    h = await scratchApp();
  });
  afterEach(async () => h.close());

  // Always with the JSON content type, a body or not.
  const admin = (method: 'GET' | 'DELETE' | 'POST' | 'PATCH', url: string, body?: unknown) =>
    send(h.app, ADMIN_TOKEN, method, `/admin/v1${url}`, body, {
      headers: { 'content-type': 'application/json' },
    });

  it('adds (201, the secret in this answer only), shows, lists, and removes endpoints', async () => {
    const { accountId } = await accountWithKey(h.services);
    const added = await admin('POST', '/webhooks', {
      url: PUBLIC_URL,
      thresholds: [90, 75],
      account_id: accountId,
    });
    expect(added.statusCode).toBe(201);
    const body = added.json();
    expect(body).toMatchObject({
      url: PUBLIC_URL,
      account_id: accountId,
      thresholds: [75, 90],
      events: expect.arrayContaining(['fair_use.threshold', 'tokens.depleted']),
      secret: expect.stringMatching(/^whsec_/),
    });
    const shown = (await admin('GET', `/webhooks/${body.id}`)).json();
    expect(shown).not.toHaveProperty('secret');
    const { secret: _secret, ...withoutSecret } = body;
    expect(shown).toEqual(withoutSecret);
    const global = (await admin('POST', '/webhooks', { url: PUBLIC_URL, events: ['key.created'] })).json();
    expect((await admin('GET', '/webhooks')).json().data.map((e: { id: string }) => e.id)).toEqual([
      body.id,
      global.id,
    ]);
    expect((await admin('GET', `/webhooks?account_id=${accountId}`)).json().data).toHaveLength(1);
    const audit = (await admin('GET', '/audit')).json().data as { action: string }[];
    expect(audit.filter((a) => a.action === 'webhook.add')).toHaveLength(2);
    expect(JSON.stringify(audit)).not.toMatch(/whsec_/);
    expect((await admin('DELETE', `/webhooks/${body.id}`)).statusCode).toBe(200);
    expect((await admin('DELETE', `/webhooks/${body.id}`)).statusCode).toBe(404);
    expect((await admin('GET', `/webhooks/${body.id}`)).json()).toMatchObject({ code: 'not_found' });
  });

  it('lists deliveries and replays one', async () => {
    const added = (await admin('POST', '/webhooks', { url: PUBLIC_URL, events: ['key.created'] })).json();
    const { keyId } = await accountWithKey(h.services);
    await h.store.webhooks.fanOut(Math.floor(h.clock.now() / 1000), () => newId('whd'), 100);
    const list = (await admin('GET', `/webhooks/${added.id}/deliveries?limit=10`)).json().data;
    expect(list).toEqual([
      expect.objectContaining({
        type: 'key.created',
        status: 'pending',
        attempts: 0,
        last_status_code: null,
      }),
    ]);
    const events = await h.store.webhooks.events({ limit: 10 });
    expect(events.find((e) => e.type === 'key.created')?.data).toMatchObject({ key_id: keyId });
    const replayed = await admin('POST', `/webhook-deliveries/${list[0].id}/replay`);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.json()).toMatchObject({ id: list[0].id, status: 'pending' });
    expect((await admin('POST', '/webhook-deliveries/whd_nope/replay')).statusCode).toBe(404);
    expect((await admin('GET', '/webhooks/whe_nope/deliveries')).statusCode).toBe(404);
    expect((await admin('GET', `/webhooks/${added.id}/deliveries?limit=0`)).statusCode).toBe(400);
  });

  it.each([
    [{ url: 'gopher://example.com/' }, /http:\/\/ or https:\/\//],
    [{ url: 'not a url' }, /not a URL/],
    [{ url: 'http://127.0.0.1:8080/admin/v1/accounts' }, /127\.0\.0\.1.*TOOLGATE_WEBHOOK_ALLOW_PRIVATE/],
    [{ url: 'http://169.254.169.254/latest/meta-data' }, /169\.254\.169\.254/],
    [{ url: 'http://[::ffff:10.0.0.1]/' }, /loopback, private/],
    [{ url: PUBLIC_URL, events: ['account.deleted'] }, /unknown event "account.deleted"/],
    [{ url: PUBLIC_URL, thresholds: [0] }, /from 1 to 100, not 0/],
    [{ url: PUBLIC_URL, thresholds: [150] }, /not 150/],
    [{ url: PUBLIC_URL, thresholds: [] }, /non-empty list/],
    [{ url: PUBLIC_URL, account_id: 'acc_nope' }, /No account "acc_nope"/],
    [{ url: PUBLIC_URL, secret: 'mine' }, /secret/],
    [{}, /url/],
  ])('refuses %j with a clear message', async (body, message) => {
    const r = await admin('POST', '/webhooks', body);
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toMatch(message);
  });

  it("sets and clears an account's low balance", async () => {
    const { accountId } = await accountWithKey(h.services);
    expect((await admin('PATCH', `/accounts/${accountId}`, { low_balance: 25 })).json()).toMatchObject({
      low_balance: 25,
    });
    expect((await admin('PATCH', `/accounts/${accountId}`, { low_balance: null })).json()).toMatchObject({
      low_balance: null,
    });
    expect((await admin('PATCH', `/accounts/${accountId}`, { low_balance: 0 })).statusCode).toBe(400);
  });
});
