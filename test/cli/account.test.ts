import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type Scratch, scratch } from './run-cli.js';

let t: Scratch;
let server: ChildProcess;
let url: string;
let accountId: string;
let key: string;

/** Starts `toolgate serve --port 0` and resolves with the URL from its "toolgate listening" log line. */
function startServe(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0'], {
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'toolgate listening' && entry.url) {
        clearTimeout(timer);
        resolve({ child, url: entry.url });
      }
    });
  });
}

/** A port nothing listens on: bound by us, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  t = scratch();
  accountId = (await t.json('accounts', 'create', '--name', 'Render Co', '--tokens', '1234')).id;
  key = (await t.json('keys', 'create', accountId)).key;
  await t.json('users', 'add', accountId, '--email', 'ops@render.co');
  await t.json('usage', 'record', accountId, '--category', 'enrich', '--records', '40');
  ({ child: server, url } = await startServe(t.env));
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  t.cleanup();
});

describe('toolgate account --key (get_account through a running toolgate serve)', () => {
  it('renders the account for a person, with a bar per fair-use window', async () => {
    const r = await t.run('account', '--key', key, '--url', url);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = r.stdout;
    expect(out).toMatch(/^name\s+Render Co$/m);
    expect(out).toMatch(new RegExp(`^id\\s+${accountId}$`, 'm'));
    expect(out).toMatch(/^status\s+active$/m);
    expect(out).toMatch(/^plan\s+free$/m);
    expect(out).toMatch(/^balance\s+1234 tokens$/m);
    expect(out).toMatch(/^keys\s+1$/m);
    expect(out).toMatch(/^users\s+1$/m);
    expect(out).toMatch(/^created\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    const stamp = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';
    expect(out).toMatch(
      new RegExp(`enrich records 5h\\s+\\[####------\\]  40/100 used, 60 left, resets ${stamp}`),
    );
    expect(out).toMatch(
      new RegExp(`enrich records 1w\\s+\\[#---------\\]  40/500 used, 460 left, resets ${stamp}`),
    );
    expect(out).toMatch(
      new RegExp(`enrich requests 5h\\s+\\[#---------\\]  1/500 used, 499 left, resets ${stamp}`),
    );
    expect(out).toMatch(/search records 5h\s+\[----------\] {2}0\/50 used, 50 left, not running/);
    expect(out).toMatch(/search requests 5h\s+\[----------\] {2}0\/250 used, 250 left, not running/);
    expect(out).not.toContain(key);
  });

  it('prints the get_account answer as is with --json', async () => {
    const answer = await t.json('account', '--key', key, '--url', url);
    expect(answer.status).toBe('ok');
    expect(answer.results).toMatchObject({
      id: accountId,
      token_balance: 1234,
      api_key_count: 1,
      user_count: 1,
    });
    expect(answer.metadata.fair_use.records_remaining_5h).toBe(60);
  });

  it('finds the server from HOST and PORT when --url is not given', async () => {
    const port = new URL(url).port;
    const { runCli } = await import('./run-cli.js');
    const r = await runCli({ ...t.env, HOST: '0.0.0.0', PORT: port }, ['account', '--key', key]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^name\s+Render Co$/m);
  });

  it('shows "unlimited" for an unlimited account', async () => {
    await t.json('accounts', 'update', accountId, '--unlimited', 'true');
    try {
      const r = await t.run('account', '--key', key, '--url', url);
      expect(r.stdout).toMatch(/^balance\s+unlimited$/m);
    } finally {
      await t.json('accounts', 'update', accountId, '--unlimited', 'plan');
    }
  });

  it('refuses a wrong or revoked key with exit 1 and the server error', async () => {
    const r = await t.run('account', '--key', 'tg_AAAAAAAAAAA', '--url', url);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolgate: Invalid or missing API key.\n');
    const j = await t.run('account', '--key', 'tg_AAAAAAAAAAA', '--url', url, '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      status: 'error',
      code: 'invalid_api_key',
      http_status: 401,
      request_id: expect.stringMatching(/^req_/),
    });

    const extra = await t.json('keys', 'create', accountId);
    await t.json('keys', 'revoke', extra.id);
    expect((await t.run('account', '--key', extra.key, '--url', url)).code).toBe(1);
  });

  it('names the URL when nothing answers there (exit 1)', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const r = await t.run('account', '--key', key, '--url', dead);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`toolgate: Could not reach ${dead}/api/v1/tools/get_account: ECONNREFUSED`);
    const j = await t.run('account', '--key', key, '--url', dead, '--json');
    expect(JSON.parse(j.stdout)).toMatchObject({ status: 'error', code: 'network_error' });
  });

  it('exits 2 without a key or with a URL that is not one', async () => {
    const noKey = await t.run('account', '--url', url);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("required option '--key <key>' not specified");
    const badUrl = await t.run('account', '--key', key, '--url', 'localhost:8080');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('--url must be an http(s) URL');
  });
});
