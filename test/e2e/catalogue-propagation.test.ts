/**
 * A catalogue change reaches every server within a second, without a restart: two server processes
 * on PostgreSQL (a change made through one is served by the other), and one on SQLite with the CLI
 * writing the catalogue beside it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { runCli } from '../cli/run-cli.js';
import { scratchDir } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';
import { accountWithKey, adminCall, E2E_ADMIN_TOKEN } from './admin-client.js';
import { postgresPair } from './postgres-pair.js';
import { outputLine, type ServerProcess, startServer } from './process.js';

/** What the contract promises: served everywhere within this long of the change being made. */
const WITHIN_MS = 1_000;

const callStatus = async (url: string, key: string, tool: string) =>
  (await callTool(url, key, tool, {})).status;

/** Calls the tool until it answers `status`; resolves to how long that took, or fails past WITHIN_MS. */
async function servedWithin(url: string, key: string, tool: string, status: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const got = await callStatus(url, key, tool);
    const elapsed = Date.now() - started;
    if (got === status) return elapsed;
    if (elapsed > WITHIN_MS) throw new Error(`${tool} still answered ${got} after ${elapsed} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const tool = (upstream: TestUpstream) => ({
  upstream: { url: `${upstream.url}/ping` },
  metering: { category: 'enrich', tokens_per_call: 1 },
});

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('ping', (_call, res) => sendJson(res, 200, { results: { pong: true } }));
});
afterAll(async () => upstream.close());

describe('one server on SQLite, the CLI changing the catalogue', () => {
  let server: ServerProcess;
  let env: Record<string, string>;
  let cleanup: () => void;
  let dir: string;
  beforeAll(async () => {
    const scratch = scratchDir();
    cleanup = scratch.cleanup;
    dir = scratch.dir;
    env = {
      TOOLGATE_DATABASE_URL: `sqlite:${join(scratch.dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      // Allowed, and left unset: the tool that names it cannot be served.
      TOOLGATE_UPSTREAM_ENV: 'PING_API_KEY',
      NODE_ENV: 'production',
    };
    server = await startServer(env);
  });
  afterAll(async () => {
    await server.stop();
    cleanup();
  });

  it('serves a tool the CLI imported, and stops serving one it removed, within a second', async () => {
    const { key } = await accountWithKey(server.url);
    const file = join(dir, 'catalogue.json');
    writeFileSync(file, JSON.stringify({ tools: [{ name: 'ping_tool', ...tool(upstream) }] }));
    const cliEnv = { PATH: process.env.PATH ?? '', ...env };
    expect(await callStatus(server.url, key, 'ping_tool')).toBe(404);

    expect((await runCli(cliEnv, ['tools', 'import', file])).code).toBe(0);
    await servedWithin(server.url, key, 'ping_tool', 200);

    expect((await runCli(cliEnv, ['tools', 'remove', 'ping_tool'])).code).toBe(0);
    await servedWithin(server.url, key, 'ping_tool', 404);
  });

  it('a tool whose header variable this server lacks answers 503, and the server logs which', async () => {
    const { key } = await accountWithKey(server.url);
    const needy = {
      ...tool(upstream),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a catalogue placeholder, meant literally.
      upstream: { url: `${upstream.url}/ping`, headers: { 'X-Api-Key': '${PING_API_KEY}' } },
    };
    expect((await adminCall(server.url, 'PUT', '/tools/needy_tool', needy)).status).toBe(201);
    expect(await callStatus(server.url, key, 'needy_tool')).toBe(503);
    const line = await outputLine(server, 'environment variables missing');
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 40,
      tool: 'needy_tool',
      missing: ['PING_API_KEY'],
    });
  });
});

const available = await postgresAvailable();

describe.skipIf(!available)('two servers on PostgreSQL', () => {
  const servers = postgresPair();

  it('a tool put through one server is served by the other within a second, and so is its removal', async () => {
    const { a, b } = servers;
    const { key } = await accountWithKey(a.url);
    expect((await adminCall(a.url, 'PUT', '/tools/ping_tool', tool(upstream))).status).toBe(201);
    // The server that made the change serves it at once.
    expect(await callStatus(a.url, key, 'ping_tool')).toBe(200);
    await servedWithin(b.url, key, 'ping_tool', 200);

    expect((await adminCall(b.url, 'DELETE', '/tools/ping_tool')).status).toBe(200);
    expect(await callStatus(b.url, key, 'ping_tool')).toBe(404);
    await servedWithin(a.url, key, 'ping_tool', 404);
  });
});
