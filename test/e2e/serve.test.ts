import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrationLabel } from '../../src/store/migrations/index.js';
import { callTool, mcpPost } from '../calls.js';
import { scratchDir } from '../helpers.js';
import { startServer } from './process.js';

describe('the server npm start runs (dist/main.js) as a real process', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('migrates an empty database, prints a demo key once with a curl line, and serves get_account with it', async () => {
    const env = { TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'data', 'toolgate.db')}` };
    const first = await startServer(env);
    const key = /^ {2}(tg_[0-9A-Za-z]{11})$/m.exec(first.stdout())?.[1];
    expect(key).toBeDefined();
    expect(first.stdout()).toContain(`curl -s -X POST ${first.url}/api/v1/tools/get_account`);
    expect(first.stdout()).toContain(`"migrations":${JSON.stringify(MIGRATIONS.map(migrationLabel))}`);
    const res = await callTool(first.url, key!, 'get_account', {});
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Record<string, unknown> };
    expect(body.results).toMatchObject({
      name: 'Demo account',
      plan: 'free',
      status: 'active',
      api_key_count: 1,
      user_count: 1,
    });
    // The generated key secret is private to the owner.
    expect(statSync(join(dir, 'data', 'key-secret')).mode & 0o777).toBe(0o600);
    expect(await first.stop()).toBe(0);

    // Second start: same database, the key still works, no new demo account, no key printed.
    const second = await startServer(env);
    expect(second.stdout()).not.toMatch(/tg_[0-9A-Za-z]{11}/);
    const again = await callTool(second.url, key!, 'get_account');
    expect(again.status).toBe(200);
    expect(await second.stop()).toBe(0);

    // SIGTERM wrote the batched last-use time of the key before the process exited.
    const db = new Database(join(dir, 'data', 'toolgate.db'), { readonly: true });
    const row = db.prepare("SELECT last_used_at FROM api_keys WHERE name = 'demo'").get() as {
      last_used_at: number | null;
    };
    // The demo account, key, owner and sign-in link are in the audit trail, as the first run's doing.
    const audited = db.prepare('SELECT actor, action FROM audit_log ORDER BY id').all();
    db.close();
    expect(row.last_used_at).toEqual(expect.any(Number));
    expect(audited).toEqual([
      { actor: 'system:first-run', action: 'account.create' },
      { actor: 'system:first-run', action: 'key.create' },
      { actor: 'system:first-run', action: 'user.add' },
      { actor: 'system:first-run', action: 'console.link' },
    ]);
  });

  it('loads the MCP SDK with the first MCP message the hot path leaves to it, not at start nor for a handshake or a call', async () => {
    const env = { TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'data', 'toolgate.db')}` };
    const hook = join(import.meta.dirname, 'module-load-hook.mjs');
    const server = await startServer(env, ['--import', hook, 'dist/main.js']);
    const key = /^ {2}(tg_[0-9A-Za-z]{11})$/m.exec(server.stdout())?.[1];
    const account = await callTool(server.url, key!, 'get_account', {});
    expect(account.status).toBe(200);
    const mcp = (message: unknown) =>
      mcpPost(server.url, key!, message, { 'mcp-protocol-version': '2025-06-18' });
    const init = await mcp({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(((await init.json()) as { result?: { serverInfo?: unknown } }).result?.serverInfo).toEqual({
      name: 'toolgate',
      version: '1',
    });
    expect((await mcp({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const call = await mcp({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'get_account', arguments: {} },
    });
    expect(call.status).toBe(200);
    expect(server.stderr()).not.toContain('resolving @modelcontextprotocol/');
    // A batch is the SDK's to answer.
    const batch = await mcp([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
    expect(batch.status).toBe(200);
    // The hook's line travels on stderr, a pipe of its own: on Node 24 it may arrive after the answer.
    for (let i = 0; i < 250 && !server.stderr().includes('resolving @modelcontextprotocol/server'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.stderr()).toContain('resolving @modelcontextprotocol/server');
    expect(await server.stop()).toBe(0);
  });

  it('creates no demo account when NODE_ENV=production', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      NODE_ENV: 'production',
    });
    expect(server.stdout()).not.toContain('demo');
    expect(server.stdout()).not.toMatch(/tg_[0-9A-Za-z]{11}/);
    expect(await server.stop()).toBe(0);
  });

  it('refuses a wrong configuration with a clear message and exit code 2', async () => {
    await expect(
      startServer({
        TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 't.db')}`,
        PORT: 'eighty',
        TOOLGATE_KEY_PREFIX: 'Bad_',
      }),
    ).rejects.toThrow(/exited with 2[\s\S]*PORT must be a port number[\s\S]*TOOLGATE_KEY_PREFIX/);
  });
});
