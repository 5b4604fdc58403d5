/**
 * One public address on PostgreSQL, as docs/operations.md's scale-out example runs it: two server
 * processes (with the example's Node flags) on one schema behind a round-robin balancer, with
 * TOOLGATE_PUBLIC_URL and TOOLGATE_TRUST_PROXY. OAuth's issuer and the console's sign-in links name
 * the public URL whichever server answers. Without TOOLGATE_PUBLIC_URL the console and OAuth are off
 * and the start-up log says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.js';
import { ConsoleClient, formWithButton, pageText } from '../console/console-client-helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { adminCall, E2E_ADMIN_TOKEN } from './admin-client.js';
import { Balancer } from './balancer.js';
import { type ServerProcess, startServer } from './process.js';

const available = await postgresAvailable();
/** `node --max-semi-space-size=8 --heap-growing-percent=30 --expose-gc dist/main.js`, as the example says. */
const NODE_ARGS = ['--max-semi-space-size=8', '--heap-growing-percent=30', '--expose-gc', 'dist/main.js'];
const OWNER = 'ann@example.com';

describe.skipIf(!available)('two servers behind a balancer, on one PostgreSQL schema', () => {
  const schema = scratchSchemaName();
  const balancer = new Balancer();
  const servers: ServerProcess[] = [];
  let publicUrl: string;

  beforeAll(async () => {
    publicUrl = await balancer.start();
    const env = {
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      TOOLGATE_PUBLIC_URL: publicUrl,
      TOOLGATE_TRUST_PROXY: '127.0.0.1',
      NODE_ENV: 'production',
    };
    // One after the other: the first migrates the schema.
    for (let i = 0; i < 2; i++) servers.push(await startServer(env, NODE_ARGS));
    balancer.backends = servers.map((s) => s.url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await balancer.close();
    await scratchPostgresStore(schema).cleanup();
  });

  it("OAuth's metadata names the public URL, whichever server answers", async () => {
    // Each document asked twice in a row: round-robin sends the two asks to the two servers.
    const issuers = new Set<unknown>();
    const resources = new Set<unknown>();
    for (let i = 0; i < 4; i++) {
      const as = await fetch(`${publicUrl}/.well-known/oauth-authorization-server`);
      expect(as.status).toBe(200);
      const metadata = (await as.json()) as { issuer: string; token_endpoint: string };
      issuers.add(metadata.issuer);
      expect(metadata.token_endpoint).toBe(`${publicUrl}/oauth/token`);
    }
    for (let i = 0; i < 4; i++) {
      const prm = (await (await fetch(`${publicUrl}/.well-known/oauth-protected-resource/mcp`)).json()) as {
        resource: string;
        authorization_servers: string[];
      };
      resources.add(`${prm.resource} ${prm.authorization_servers.join(',')}`);
    }
    expect([...issuers]).toEqual([publicUrl]);
    expect([...resources]).toEqual([`${publicUrl}/mcp ${publicUrl}`]);
    expect(balancer.answeredBy('/.well-known/oauth-authorization-server').size).toBe(2);
    expect(balancer.answeredBy('/.well-known/oauth-protected-resource').size).toBe(2);
  });

  it('console sign-in links name the public URL, whichever server makes them, and sign in across servers', async () => {
    const account = await adminCall(publicUrl, 'POST', '/accounts', { name: 'Behind a balancer' });
    expect(account.status).toBe(201);
    const user = await adminCall(publicUrl, 'POST', `/accounts/${account.body.id}/users`, {
      email: OWNER,
      role: 'owner',
    });
    expect(user.status).toBe(201);
    const links: string[] = [];
    for (let i = 0; i < 4; i++) {
      const made = await adminCall(publicUrl, 'POST', '/console/links', { email: OWNER });
      expect(made.status).toBe(201);
      links.push(made.body.url);
    }
    for (const link of links) expect(link).toMatch(new RegExp(`^${publicUrl}/console/auth\\?token=`));
    expect(balancer.answeredBy('/admin/v1/console/links').size).toBe(2);

    // The link's page from one server, its button to the other, the account's page from either.
    const browser = new ConsoleClient(publicUrl);
    const landing = await browser.get(links[0]!);
    const home = await browser.submit(formWithButton(landing, 'Sign in'));
    expect(home.status).toBe(200);
    expect(home.url).toBe(`${publicUrl}/console/a/${account.body.id}/`);
    expect(pageText(home.body)).toContain('Behind a balancer');
    expect(balancer.answeredBy('/console/').size).toBe(2);
  });
});

describe.skipIf(!available)('a server on PostgreSQL without TOOLGATE_PUBLIC_URL', () => {
  it('keeps the console and OAuth off, and its start-up log names the variable', async () => {
    const schema = scratchSchemaName();
    const env = {
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      NODE_ENV: 'production',
    };
    const server = await startServer(env);
    try {
      for (const path of ['/console/', '/console/sign-in', '/.well-known/oauth-authorization-server'])
        expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
      expect((await adminCall(server.url, 'POST', '/console/links', { email: OWNER })).status).toBe(404);
      const lines = server
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: 'the console and OAuth are off: TOOLGATE_PUBLIC_URL is not set, and on PostgreSQL it must name the one address every server is reached at (for example https://tools.example.com)',
        }),
      );
      expect(lines.find((l) => l.msg === 'toolgate listening')).toMatchObject({
        console: 'off',
        oauth: 'off',
      });
      // Nor does the CLI make a link naming one server's own address.
      const cli = await runCli({ PATH: process.env.PATH, ...env }, ['console', 'link', OWNER]);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain('On PostgreSQL the console needs TOOLGATE_PUBLIC_URL');
    } finally {
      await server.stop();
      await scratchPostgresStore(schema).cleanup();
    }
  });
});
