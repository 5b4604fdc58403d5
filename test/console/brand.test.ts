/**
 * The operator's brand wherever a customer or an agent looks, on both backends: the console's
 * pages (header, titles, footer, the logo and the accent stylesheet it serves), the sign-in mail
 * (subject, text and HTML), OAuth's protected resource metadata and MCP's serverInfo; with a brand
 * set, no customer-facing "toolgate". Plans' display names and descriptions in place of their ids.
 * And a server process refusing a logo it cannot use.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Brand } from '../../src/domain/brand.js';
import { mcpPost } from '../calls.js';
import { startServer } from '../e2e/process.js';
import { scratchDir } from '../helpers.js';
import { postgresAvailable } from '../postgres.js';
import { type Backend, type ConsoleApp, consoleApp } from './console-app-helpers.js';
import { ConsoleClient, links, pageText } from './console-client-helpers.js';
import { type World, world } from './security-helpers.js';
import { consoleLink } from './smtp-sink-helpers.js';

const backends: Backend[] = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])];

const LOGO = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#0f766e"/></svg>',
);
const BRAND: Brand = {
  name: 'Acme Data',
  support: 'help@acme.test',
  color: '#0f766e',
  logo: { type: 'image/svg+xml', bytes: LOGO },
};

describe.each(backends)('the brand, on %s', (backend) => {
  let h: ConsoleApp;
  let w: World;
  beforeEach(async () => {
    h = await consoleApp(backend, { brand: BRAND });
    w = await world(h);
  });
  afterEach(async () => {
    await h.close();
  });

  it('names the brand on every page a customer sees, never toolgate, with its logo, colour and support', async () => {
    const anonymous = new ConsoleClient(h.url);
    const signIn = await anonymous.get('/console/sign-in');
    expect(signIn.body).toContain('<title>Sign in · Acme Data</title>');
    const owner = await w.signIn(w.a.owner);
    const pages = ['', 'usage', 'keys', 'billing', 'members', 'connect', 'connected-apps'];
    for (const page of pages) {
      const answer = await owner.get(`/console/a/${w.a.accountId}/${page}`);
      expect(answer.status, page).toBe(200);
      expect(pageText(answer.body).toLowerCase(), page).not.toContain('toolgate');
      expect(answer.body, page).toContain('<img src="/console/brand/logo" alt="" class="logo"> Acme Data');
      expect(answer.body, page).toContain('href="mailto:help@acme.test"');
      expect(answer.body, page).toContain('/console/brand.css');
    }
    const connect = await owner.get(`/console/a/${w.a.accountId}/connect`);
    expect(connect.body).toContain('claude mcp add --transport http acme-data ');
    const logo = await fetch(`${h.url}/console/brand/logo`);
    expect(logo.headers.get('content-type')).toBe('image/svg+xml');
    expect(logo.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await logo.arrayBuffer()).equals(LOGO)).toBe(true);
    const css = await (await fetch(`${h.url}/console/brand.css`)).text();
    expect(css).toContain('--accent: #0f766e;');
    expect(links(connect).every((l) => !l.includes('toolgate'))).toBe(true);
  });

  it('mails in the brand: subject, text and HTML, with the support address', async () => {
    const client = new ConsoleClient(h.url);
    const page = await client.get('/console/sign-in');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    await client.post('/console/sign-in', { _csrf: csrf, email: w.a.owner });
    const mail = await h.sink.waitFor(w.a.owner, 1);
    expect(mail.raw).toMatch(/^Subject: Sign in to Acme Data$/m);
    expect(mail.text).toContain('Follow this link to sign in to Acme Data:');
    expect(mail.text).toContain('Questions? help@acme.test');
    expect(mail.raw).toMatch(/Content-Type: text\/html/i);
    expect(mail.text.toLowerCase()).not.toContain('toolgate');
    expect(consoleLink(mail)).toContain('/console/');
  });

  it("names the brand to agents: MCP's serverInfo", async () => {
    const init = await mcpPost(h.app, w.a.key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.json().result.serverInfo).toEqual({ name: 'acme-data', title: 'Acme Data', version: '1' });
  });

  it('shows plans by their display names and descriptions, not their ids', async () => {
    const free = (await h.services.plans.get('free')).ok;
    expect(free).toBe(true);
    const named = await h.services.plans.set('free', [], {
      name: 'Starter',
      description: 'For trying <it> out',
    });
    expect(named.ok && named.value).toMatchObject({ name: 'Starter', description: 'For trying <it> out' });
    const owner = await w.signIn(w.a.owner);
    const overview = pageText((await owner.get(`/console/a/${w.a.accountId}/`)).body);
    expect(overview).toContain('PlanStarter · For trying <it> out');
    expect(pageText((await owner.get(`/console/a/${w.a.accountId}/billing`)).body)).toContain('PlanStarter');
    const refused = await h.services.plans.set('free', [], { name: 'x'.repeat(61) });
    expect(refused.ok || refused.error.message).toBe('name must be at most 60 characters.');
    const control = await h.services.plans.set('free', [], { description: 'evil \u202e text' });
    expect(control.ok || control.error.message).toBe('description must not hold control characters.');
  });
});

describe('a brand logo at start', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('refuses a logo that is missing or no image, naming the variable; serves one that is', async () => {
    const env = (logo: string) => ({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      NODE_ENV: 'production',
      TOOLGATE_BRAND_NAME: 'Acme Data',
      TOOLGATE_BRAND_LOGO: logo,
    });
    await expect(startServer(env(join(dir, 'missing.svg')))).rejects.toThrow(
      /TOOLGATE_BRAND_LOGO names .*missing\.svg, which cannot be read \(ENOENT\)/,
    );
    writeFileSync(join(dir, 'logo.txt'), 'not an image');
    await expect(startServer(env(join(dir, 'logo.txt')))).rejects.toThrow(/is neither an SVG nor a PNG file/);
    writeFileSync(join(dir, 'logo.svg'), LOGO);
    const server = await startServer(env(join(dir, 'logo.svg')));
    const metadata = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).toMatchObject({ resource_name: 'Acme Data' });
    expect((await fetch(`${server.url}/console/brand/logo`)).status).toBe(200);
    await server.stop();
  });
});
