/**
 * The remote CLI sends its admin token in clear only to this machine: an http:// server that is
 * not loopback is refused (exit 2, naming https and --allow-http) before anything is sent or even
 * resolved; loopback http works as before; `--allow-http` or TOOLGATE_ALLOW_HTTP=true lets it
 * through. No test here connects anywhere but loopback: the commands aimed elsewhere run without
 * an admin token, so that past the check (allowed, or a check gone missing) the missing token stops
 * them before any request; that is how "allowed" is seen without traffic.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/cli/remote-transport.js';
import { runCli, type Scratch, scratch } from './run-cli.js';

const TOKEN = 'remote-http-admin-token-0123456789';
/** No admin token: nothing can be sent, whatever the check says. */
let t: Scratch;

beforeAll(() => {
  t = scratch();
});
afterAll(() => t?.cleanup());

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const REFUSED =
  /Refusing to send the admin token over plain http to .+, which is not this machine: use an https:\/\/ URL, or give --allow-http \(or TOOLGATE_ALLOW_HTTP=true\)/;
const NO_TOKEN = /TOOLGATE_ADMIN_TOKEN must be set/;

describe('plain http to a server that is not loopback', () => {
  it.each([
    ['http://example.invalid:8080', 'example.invalid:8080'],
    ['http://10.0.0.1', '10.0.0.1'],
    ['http://[2001:db8::1]:8080', '[2001:db8::1]:8080'],
  ])('%s is refused before any connection, naming https', async (url, host) => {
    const started = Date.now();
    const r = await t.run('accounts', 'list', '--url', url);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(REFUSED);
    expect(r.stderr).toContain(` ${host}, `);
    expect(r.stderr).not.toMatch(/Could not reach/);
    // No connection was tried (10.0.0.1 would have taken its time to fail, if at all).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('is refused with --json too, by TOOLGATE_URL and for webhooks add --server', async () => {
    const json = await t.run('accounts', 'list', '--url', 'http://10.0.0.1:8080', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ code: 'invalid_configuration' });
    expect(JSON.parse(json.stdout).message).toMatch(REFUSED);

    const viaEnv = await runCli({ ...t.env, TOOLGATE_URL: 'http://example.invalid' }, [
      'keys',
      'list',
      'acc_x',
    ]);
    expect(viaEnv.code).toBe(2);
    expect(viaEnv.stderr).toMatch(REFUSED);

    const add = await t.run(
      'webhooks',
      'add',
      '--url',
      'https://hooks.example.com/x',
      '--server',
      'http://example.invalid',
    );
    expect(add.code).toBe(2);
    expect(add.stderr).toMatch(REFUSED);
  });

  it('passes the check with --allow-http or TOOLGATE_ALLOW_HTTP=true (seen by the token check after it)', async () => {
    const noToken = t.env;
    const flag = await runCli(noToken, ['accounts', 'list', '--url', 'http://10.0.0.1', '--allow-http']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(NO_TOKEN);

    const env = await runCli({ ...noToken, TOOLGATE_ALLOW_HTTP: 'true' }, [
      'accounts',
      'list',
      '--url',
      'http://10.0.0.1',
    ]);
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(NO_TOKEN);

    const add = await runCli(noToken, [
      'webhooks',
      'add',
      '--url',
      'https://hooks.example.com/x',
      '--server',
      'http://10.0.0.1',
      '--allow-http',
    ]);
    expect(add.code).toBe(2);
    expect(add.stderr).toMatch(NO_TOKEN);

    const off = await runCli({ ...t.env, TOOLGATE_ALLOW_HTTP: 'false' }, [
      'accounts',
      'list',
      '--url',
      'http://10.0.0.1',
    ]);
    expect(off.code).toBe(2);
    expect(off.stderr).toMatch(REFUSED);

    const wrong = await runCli({ ...t.env, TOOLGATE_ALLOW_HTTP: 'yes' }, [
      'accounts',
      'list',
      '--url',
      'http://10.0.0.1',
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/TOOLGATE_ALLOW_HTTP must be true or false \(got "yes"\)/);
  });

  it('https to any host passes the check', async () => {
    const r = await runCli({ ...t.env, TOOLGATE_ADMIN_TOKEN: '' }, [
      'accounts',
      'list',
      '--url',
      'https://10.0.0.1',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(NO_TOKEN);
  });
});

describe('plain http to loopback', () => {
  it.each(['127.0.0.1', 'localhost', '127.0.0.2'])(
    '%s is used as before (tried, and found closed)',
    async (host) => {
      const port = await closedPort();
      const r = await runCli({ ...t.env, TOOLGATE_ADMIN_TOKEN: TOKEN }, [
        'accounts',
        'list',
        '--url',
        `http://${host}:${port}`,
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Could not reach http:\/\/.+\/admin\/v1\/accounts.*ECONNREFUSED/);
      expect(r.stderr).not.toMatch(REFUSED);
    },
  );
});

describe('isLoopbackHost', () => {
  const host = (url: string) => new URL(url).hostname;
  it.each([
    'http://127.0.0.1',
    'http://127.255.255.254:1',
    'http://127.1',
    'http://2130706433',
    'http://localhost:8080',
    'http://LOCALHOST.',
    'http://[::1]:8080',
    'http://[0:0:0:0:0:0:0:1]',
    'http://[::ffff:127.0.0.1]',
  ])('%s is loopback', (url) => {
    expect(isLoopbackHost(host(url))).toBe(true);
  });
  it.each([
    'http://128.0.0.1',
    'http://10.0.0.1',
    'http://0.0.0.0',
    'http://localhost.example.com',
    'http://127.0.0.1.nip.io',
    'http://[::2]',
    'http://[::ffff:10.0.0.1]',
    'http://example.invalid',
  ])('%s is not', (url) => {
    expect(isLoopbackHost(host(url))).toBe(false);
  });
});
