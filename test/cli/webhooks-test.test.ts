/**
 * `toolgate webhooks test <endpoint-id>` on the database and through a server's admin API: a signed
 * `webhook.test` event sent at once to a real receiver, which checks it with the standardwebhooks
 * verifier; recorded as a delivery (delivered, or pending with its retry when the receiver refuses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer } from '../e2e/process.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';
import { type Scratch, scratch } from './run-cli.js';

const TOKEN = 'webhook-test-admin-token-0123456789';
let t: Scratch;
let server: ServerProcess;
let receiver: Receiver;
let endpoint: string;

beforeAll(async () => {
  receiver = await startReceiver();
  t = scratch({ TOOLGATE_ADMIN_TOKEN: TOKEN, TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true' });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(t.env)) if (k.startsWith('TOOLGATE_') && v) env[k] = v;
  server = await startServer(env);
  // Subscribed to key events only: a test event goes to it all the same.
  const added = await t.json('webhooks', 'add', '--url', receiver.url, '--events', 'key.created');
  endpoint = added.id;
  receiver.secret = added.secret;
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  t?.cleanup();
});

describe('toolgate webhooks test', () => {
  it('sends a signed webhook.test now and records it as a delivery, on the database', async () => {
    const d = await t.json('webhooks', 'test', endpoint);
    expect(d).toMatchObject({
      endpoint_id: endpoint,
      type: 'webhook.test',
      status: 'delivered',
      attempts: 1,
      last_status_code: 204,
      next_attempt_at: null,
    });
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.verified).toEqual({
      ok: true,
      payload: expect.objectContaining({
        type: 'webhook.test',
        data: { endpoint_id: endpoint, account_id: null },
      }),
    });
    expect(got.headers['webhook-id']).toBe(d.event_id);
    const deliveries = await t.json<{ id: string; type: string; status: string }[]>(
      'webhooks',
      'deliveries',
      endpoint,
    );
    expect(deliveries.map((x) => [x.id, x.type, x.status])).toEqual([[d.id, 'webhook.test', 'delivered']]);
    const audit = await t.json<{ action: string; target_id: string }[]>('audit', 'list');
    expect(audit.filter((e) => e.action === 'webhook.test').map((e) => e.target_id)).toEqual([endpoint]);
  });

  it('does the same through the admin API, and prints it for people', async () => {
    const r = await t.run('webhooks', 'test', endpoint, '--url', server.url);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^Sent webhook.test to endpoint ${endpoint}: delivered \\(answered 204\\), as delivery whd_`,
      ),
    );
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.verified.ok).toBe(true);
  });

  it('exits 1 when the receiver refuses, the delivery left pending with its retry', async () => {
    receiver.answer = 500;
    try {
      for (const extra of [[], ['--url', server.url]]) {
        const r = await t.run('webhooks', 'test', endpoint, '--json', ...extra);
        expect(r.code).toBe(1);
        expect(JSON.parse(r.stdout)).toMatchObject({
          status: 'pending',
          attempts: 1,
          last_status_code: 500,
          last_error: 'answered 500',
          next_attempt_at: expect.stringMatching(/Z$/),
        });
      }
      const human = await t.run('webhooks', 'test', endpoint);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(
        /not delivered \(answered 500\); delivery whd_\w+ is pending, retried from /,
      );
    } finally {
      receiver.answer = 204;
    }
  });

  it('refuses an unknown endpoint in both modes, alike', async () => {
    const db = await t.run('webhooks', 'test', 'whe_nope', '--json');
    const api = await t.run('webhooks', 'test', 'whe_nope', '--json', '--url', server.url);
    expect(db.code).toBe(1);
    expect(api).toEqual(db);
    expect(JSON.parse(db.stdout)).toMatchObject({
      code: 'not_found',
      message: 'No webhook endpoint "whe_nope".',
    });
  });
});
