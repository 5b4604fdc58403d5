/**
 * TOOLGATE_LOG_FORMAT on a real process: JSON lines by default when standard output is no terminal
 * (a pipe, here), pretty lines when asked, which still never carry a key or a token.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send } from '../calls.js';
import { scratchDir } from '../helpers.js';
import { startServer } from './process.js';

const OPS = 'ops-token-0123456789abcdef';

describe('the log format', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('is JSON lines by default on a pipe: every log line parses, the guide stays plain lines', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      NODE_ENV: 'development',
    });
    await fetch(`${server.url}/healthz`);
    expect(await server.stop()).toBe(0);
    const lines = server.stdout().split('\n');
    const logLines = lines.filter((l) => l.startsWith('{'));
    const parsed = logLines.map((l) => JSON.parse(l) as { msg: string; url?: string });
    expect(parsed.find((l) => l.msg === 'toolgate listening')?.url).toBe(server.url);
    expect(parsed.map((l) => l.msg)).toContain('request completed');
    // What is not a log line is the guide, in plain lines.
    expect(lines.filter((l) => !l.startsWith('{')).join('\n')).toContain('created a demo account');
  });

  it('is pretty when asked: the listening line without JSON braces, its fields below, no secret anywhere', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_LOG_FORMAT: 'pretty',
      TOOLGATE_ADMIN_TOKEN: `ops:${OPS}`,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
    });
    const admin = (method: string, path: string, body?: unknown) =>
      send(server.url, OPS, method, path, body).then((r) => r.json() as { id: string; key: string });
    const account = await admin('POST', '/admin/v1/accounts', { name: 'logs' });
    const { key } = await admin('POST', `/admin/v1/accounts/${account.id}/keys`, {});
    expect((await send(server.url, key, 'POST', '/api/v1/tools/get_account', {})).status).toBe(200);
    await send(server.url, key, 'POST', `/api/v1/tools/get_account?api_key=${key}`, {});
    await send(server.url, 'tg_AAAAAAAAAAA', 'POST', '/api/v1/tools/get_account', {});
    expect(await server.stop()).toBe(0);

    const out = server.stdout();
    const lines = out.split('\n');
    const listening = lines.findIndex((l) => l.includes('toolgate listening'));
    expect(lines[listening]).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] INFO: toolgate listening$/);
    expect(lines[listening + 1]).toBe(`    url: "${server.url}"`);
    expect(lines[listening + 2]).toBe('    store: "sqlite"');
    // Not one JSON line: every entry is a pretty one.
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(out).toMatch(/INFO: request completed/);
    for (const [name, secret] of [
      ['a key', key],
      ['a key without its prefix', key.slice(3)],
      ['the admin token', OPS],
    ] as const) {
      expect(
        lines.filter((l) => l.includes(secret)),
        `lines with ${name}`,
      ).toEqual([]);
    }
    expect(out.toLowerCase()).not.toContain('bearer');
  });
});
