// biome-ignore-all lint/suspicious/noTemplateCurlyInString: catalogue placeholders, meant literally.
/**
 * The README's meters example, run as it says: examples/upstream.mjs, the CLI as a process (`plans
 * set team scrape.pages.1d=2000 scrape.requests.1h=500`, `tools import examples/meters.json`, an
 * account on the plan with tokens and a key) and the server (dist/main.js); `fetch_pages` counts
 * its pages and one request in the plan's own windows, a page past the day's limit is refused, and
 * none once the plan drops the limit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { runCli } from '../cli/run-cli.js';
import { ROOT, type ServerProcess, startServer } from '../e2e/process.js';
import { scratchDir } from '../helpers.js';

const TOKEN = 'dev-secret';
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

let upstream: ChildProcess;
let server: ServerProcess | undefined;
let dir: string;
let cleanup: () => void;
let catalogue: string;

function startExampleUpstream(): Promise<number> {
  let log = '';
  upstream = spawn(process.execPath, [join(ROOT, 'examples', 'upstream.mjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', EXAMPLE_UPSTREAM_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`example upstream did not start: ${log}`)), 10_000);
    upstream.stdout?.on('data', (d) => {
      log += d;
      const port = /example upstream on http:\/\/127\.0\.0\.1:(\d+)/.exec(log)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(Number(port));
      }
    });
  });
}

beforeAll(async () => {
  ({ dir, cleanup } = scratchDir());
  const port = await startExampleUpstream();
  catalogue = join(dir, 'meters.json');
  const text = readFileSync(join(ROOT, 'examples', 'meters.json'), 'utf8');
  expect(text).toContain('http://127.0.0.1:9000/');
  writeFileSync(catalogue, text.replaceAll('http://127.0.0.1:9000/', `http://127.0.0.1:${port}/`));
});
afterAll(async () => {
  await server?.stop();
  upstream?.kill();
  cleanup?.();
});

describe("the README's meters example", () => {
  const env = () => ({
    PATH: process.env.PATH ?? '',
    TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
    TOOLGATE_UPSTREAM_ENV: 'EXAMPLE_UPSTREAM_TOKEN',
  });
  const cli = async (...args: string[]) => {
    const r = await runCli(env(), args);
    expect(r, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
    return r.stdout;
  };

  it('shows the commands it runs', () => {
    expect(README).toContain('npx toolgate plans set team scrape.pages.1d=2000 scrape.requests.1h=500');
    expect(README).toContain('npx toolgate tools import examples/meters.json');
  });

  it('meters fetch_pages in pages a day and requests an hour, and refuses a day past its limit', async () => {
    const saved = await cli('plans', 'set', 'team', 'scrape.pages.1d=2000', 'scrape.requests.1h=500');
    expect(saved).toMatch(/^scrape pages 1d\s+2000$/m);
    expect(saved).toMatch(/^scrape requests 1h\s+500$/m);
    expect(await cli('tools', 'import', catalogue)).toContain('Imported 1 tool (1 created)');
    const account = JSON.parse(
      await cli('accounts', 'create', '--name', 'Scraper Co', '--plan', 'team', '--json'),
    );
    await cli('tokens', 'grant', account.id, '100');
    const { key } = JSON.parse(await cli('keys', 'create', account.id, '--json'));

    server = await startServer({ ...env(), EXAMPLE_UPSTREAM_TOKEN: TOKEN });
    const call = async (tool: string, body: unknown) => {
      const res = await callTool(server!.url, key, tool, body);
      return { status: res.status, body: res.json() as any };
    };
    const pages = await call('fetch_pages', { url: 'https://example.com', pages: 3 });
    expect(pages.status).toBe(200);
    expect(pages.body.results).toHaveLength(3);
    expect(pages.body.metadata).toMatchObject({ tokens_charged: 3, tokens_remaining: 97 });
    // Its own unit's windows: how many pages are left today, and when the day ends.
    expect(pages.body.metadata.fair_use).toEqual({
      pages_remaining_1d: 1997,
      pages_reset_1d: expect.stringMatching(/Z$/),
    });
    const fairUse = (await call('get_account', {})).body.results.fair_use;
    expect(fairUse).toEqual({
      scrape: {
        pages: { '1d': expect.objectContaining({ limit: 2000, used: 3, remaining: 1997 }) },
        requests: { '1h': expect.objectContaining({ limit: 500, used: 1, remaining: 499 }) },
      },
    });
    // A day of 4 pages: 3 used, 2 more is refused whole, before the upstream is called.
    await cli('plans', 'set', 'team', 'scrape.pages.1d=4');
    const over = await call('fetch_pages', { url: 'https://example.com', pages: 2 });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({
      code: 'fair_use_exceeded',
      window: 'scrape.pages.1d',
      used: 3,
      limit: 4,
    });
    // The limit removed: pages are no longer limited, requests still are.
    await cli('plans', 'set', 'team', 'scrape.pages.1d=none');
    expect((await call('fetch_pages', { url: 'https://example.com', pages: 2 })).status).toBe(200);
    expect((await call('get_account', {})).body.results.fair_use).toEqual({
      scrape: { requests: { '1h': expect.objectContaining({ used: 2 }) } },
    });
  });

  it("prices fetch_pages in its unit in the catalogue's list", async () => {
    expect(await cli('tools', 'list')).toMatch(/^fetch_pages\s+scrape\s+1\/page\s/m);
  });
});
