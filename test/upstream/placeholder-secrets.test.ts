// biome-ignore-all lint/suspicious/noTemplateCurlyInString: catalogue placeholders, meant literally.
/**
 * A catalogue's `${NAME}` placeholders read only what the operator listed in TOOLGATE_UPSTREAM_ENV,
 * never toolgate's own configuration: against a real server process, the CLI as a process and a
 * real upstream that records every header it is sent. A catalogue naming another variable is refused
 * at import (CLI and admin API); one written straight into the database is never served, and its
 * upstream never sees a value.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/domain/catalogue.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { bearer, callTool } from '../calls.js';
import { runCli } from '../cli/run-cli.js';
import { accountWithKey, adminCall, E2E_ADMIN_TOKEN } from '../e2e/admin-client.js';
import { outputLine, type ServerProcess, startServer } from '../e2e/process.js';
import { scratchDir } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from './test-upstream.js';

const KEY_SECRET = 'e2e-key-secret-0123456789abcdef0123456789';
const PEOPLE_TOKEN = 'people-upstream-secret';
const UNLISTED = 'a-secret-nobody-listed';

/** Every value of this server's environment a catalogue must never read. */
const GUARDED = [E2E_ADMIN_TOKEN, KEY_SECRET, UNLISTED];

let upstream: TestUpstream;
let server: ServerProcess;
let env: Record<string, string>;
let dir: string;
let cleanup: () => void;
let key: string;

beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('ping', (_call, res) => sendJson(res, 200, { results: { pong: true } }));
  ({ dir, cleanup } = scratchDir());
  env = {
    TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
    TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
    TOOLGATE_KEY_SECRET: KEY_SECRET,
    // Listing toolgate's own variables does not let a catalogue read them.
    TOOLGATE_UPSTREAM_ENV: 'PEOPLE_TOKEN,TOOLGATE_ADMIN_TOKEN,TOOLGATE_DATABASE_URL',
    PEOPLE_TOKEN,
    UNLISTED_SECRET: UNLISTED,
    NODE_ENV: 'production',
  };
  server = await startServer(env);
  ({ key } = await accountWithKey(server.url));
});
afterAll(async () => {
  await server?.stop();
  await upstream?.close();
  cleanup?.();
});

const tool = (name: string, headers: Record<string, string>) => ({
  name,
  upstream: { url: `${upstream.url}/ping`, headers },
});

const callStatus = async (name: string) => (await callTool(server.url, key, name, {})).status;

/** Every header value the upstream was ever sent, as one string. */
const seenUpstream = () => JSON.stringify(upstream.calls.map((c) => c.headers));

describe('catalogue placeholders: import', () => {
  it('a server whose TOOLGATE_UPSTREAM_ENV lists its own variables ignores them, and says so at start', async () => {
    const line = await outputLine(server, 'TOOLGATE_UPSTREAM_ENV lists');
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 40,
      ignored: ['TOOLGATE_ADMIN_TOKEN', 'TOOLGATE_DATABASE_URL'],
    });
  });

  it('the CLI refuses a catalogue naming toolgate secrets or unlisted variables, a problem per header', async () => {
    const file = join(dir, 'thief.json');
    writeFileSync(
      file,
      JSON.stringify({
        tools: [
          tool('steal_admin', { 'X-A': '${TOOLGATE_ADMIN_TOKEN}' }),
          tool('steal_secret', { 'X-B': 'k=${TOOLGATE_KEY_SECRET}' }),
          tool('steal_database', { 'X-C': '${TOOLGATE_DATABASE_URL}' }),
          tool('steal_unlisted', { 'X-D': '${UNLISTED_SECRET}' }),
          tool('steal_pg', { 'X-E': '${PGPASSWORD}', 'X-F': '${DATABASE_URL}' }),
          tool('fine', { Authorization: bearer('${PEOPLE_TOKEN}') }),
        ],
      }),
    );
    const cli = await runCli({ PATH: process.env.PATH ?? '', ...env }, ['tools', 'import', file]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/The catalogue has 6 problems; nothing was changed\./);
    for (const [path, variable] of [
      ['/tools/0/upstream/headers/X-A', 'TOOLGATE_ADMIN_TOKEN'],
      ['/tools/1/upstream/headers/X-B', 'TOOLGATE_KEY_SECRET'],
      ['/tools/2/upstream/headers/X-C', 'TOOLGATE_DATABASE_URL'],
      ['/tools/4/upstream/headers/X-E', 'PGPASSWORD'],
      ['/tools/4/upstream/headers/X-F', 'DATABASE_URL'],
    ])
      expect(cli.stderr).toContain(`${path}: names \${${variable}}, toolgate's own configuration`);
    expect(cli.stderr).toContain(
      '/tools/3/upstream/headers/X-D: names ${UNLISTED_SECRET}, which TOOLGATE_UPSTREAM_ENV does not list',
    );
    expect(cli.stderr).not.toContain('/tools/5');
    for (const secret of GUARDED) expect(cli.stderr).not.toContain(secret);
    expect((await adminCall(server.url, 'GET', '/tools')).body).toEqual({ data: [] });
  });

  it('the admin API refuses the same with 400, and takes a listed variable', async () => {
    const put = await adminCall(server.url, 'PUT', '/tools/steal_admin', {
      upstream: { url: `${upstream.url}/ping`, headers: { 'X-A': '${TOOLGATE_ADMIN_TOKEN}' } },
    });
    expect(put.status).toBe(400);
    expect(put.body.problems).toEqual([
      { path: '/upstream/headers/X-A', reason: expect.stringMatching(/^names \$\{TOOLGATE_ADMIN_TOKEN\}/) },
    ]);
    const fine = await adminCall(server.url, 'PUT', '/tools/people', {
      upstream: { url: `${upstream.url}/ping`, headers: { Authorization: bearer('${PEOPLE_TOKEN}') } },
    });
    expect(fine.status).toBe(201);
    upstream.reset();
    expect(await callStatus('people')).toBe(200);
    expect(upstream.calls[0]?.headers.authorization).toBe(bearer(PEOPLE_TOKEN));
  });
});

describe('catalogue placeholders: a catalogue written straight into the database', () => {
  it('is not served: 503, the upstream never called, one warning naming the variables, no value', async () => {
    const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
    const stored = (name: string, headers: Record<string, string>): ToolDefinition => ({
      name,
      description: '',
      input_schema: { type: 'object' },
      upstream: { url: `${upstream.url}/ping`, timeout_ms: 5000, max_response_bytes: 65536, headers },
      metering: null,
    });
    try {
      await store.catalogue.put(
        [
          stored('raw_admin', { 'X-A': '${TOOLGATE_ADMIN_TOKEN}', 'X-B': '${TOOLGATE_KEY_SECRET}' }),
          stored('raw_unlisted', { 'X-D': 'v=${UNLISTED_SECRET}' }),
          stored('raw_escape', { 'X-E': 'a\u001bb' }),
        ],
        Math.floor(Date.now() / 1000),
      );
    } finally {
      await store.close();
    }
    upstream.reset();
    // Served within the catalogue's poll (500 ms): until then these names are unknown (404).
    for (
      const deadline = Date.now() + 3000;
      (await callStatus('raw_admin')) === 404 && Date.now() < deadline;
    )
      await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 10; i++) {
      expect(await callStatus('raw_admin')).toBe(503);
      expect(await callStatus('raw_unlisted')).toBe(503);
      expect(await callStatus('raw_escape')).toBe(503);
    }
    expect(upstream.calls).toHaveLength(0);
    for (const secret of GUARDED) expect(seenUpstream()).not.toContain(secret);

    const line = await outputLine(server, '"tool":"raw_admin"');
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 40,
      tool: 'raw_admin',
      not_allowed: ['TOOLGATE_ADMIN_TOKEN', 'TOOLGATE_KEY_SECRET'],
    });
    expect(JSON.parse((await outputLine(server, '"tool":"raw_unlisted"')) ?? '{}')).toMatchObject({
      not_allowed: ['UNLISTED_SECRET'],
    });
    expect(JSON.parse((await outputLine(server, '"tool":"raw_escape"')) ?? '{}')).toMatchObject({
      headers: ['X-E'],
    });
    // Logged once per definition, not per call; and never a value.
    const out = server.stdout();
    expect(out.split('\n').filter((l) => l.includes('"tool":"raw_admin"'))).toHaveLength(1);
    for (const secret of GUARDED) expect(out).not.toContain(secret);
    expect(out).not.toContain(PEOPLE_TOKEN);
  });
});
