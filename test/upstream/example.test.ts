// biome-ignore-all lint/suspicious/noTemplateCurlyInString: catalogue placeholders, meant literally.
/**
 * The README's example, run as it says: examples/upstream.mjs, `toolgate tools import
 * examples/catalogue.json` (the CLI as a process) and the server (dist/main.js) with the demo key it
 * prints, all with `TOOLGATE_UPSTREAM_ENV=EXAMPLE_UPSTREAM_TOKEN`. Without that line the import is
 * refused, naming the variable. Only the upstream's port differs (a free one, not 9000).
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
let upstreamLog = '';
let server: ServerProcess | undefined;
let dir: string;
let cleanup: () => void;
let catalogue: string;

/** The example upstream on a free port; resolves to that port once it says it listens. */
function startExampleUpstream(): Promise<number> {
  upstream = spawn(process.execPath, [join(ROOT, 'examples', 'upstream.mjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', EXAMPLE_UPSTREAM_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`example upstream did not start: ${upstreamLog}`)),
      10_000,
    );
    upstream.stdout?.on('data', (d) => {
      upstreamLog += d;
      const port = /example upstream on http:\/\/127\.0\.0\.1:(\d+)/.exec(upstreamLog)?.[1];
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
  catalogue = join(dir, 'catalogue.json');
  const text = readFileSync(join(ROOT, 'examples', 'catalogue.json'), 'utf8');
  expect(text).toContain('http://127.0.0.1:9000/');
  writeFileSync(catalogue, text.replaceAll('http://127.0.0.1:9000/', `http://127.0.0.1:${port}/`));
});
afterAll(async () => {
  await server?.stop();
  upstream?.kill();
  cleanup?.();
});

describe("the README's example", () => {
  const base = () => ({
    PATH: process.env.PATH ?? '',
    TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
  });

  it('lists the example variable in TOOLGATE_UPSTREAM_ENV before it imports and serves', () => {
    const lines = /```sh\n(export TOOLGATE_UPSTREAM_ENV=[^\n]*\n[^`]*?)```/.exec(README)?.[1] ?? '';
    expect(lines).toMatch(/^export TOOLGATE_UPSTREAM_ENV=EXAMPLE_UPSTREAM_TOKEN\b/);
    expect(lines).toContain('npx toolgate tools import examples/catalogue.json');
    expect(lines).toContain('EXAMPLE_UPSTREAM_TOKEN=dev-secret npm start');
  });

  it('without TOOLGATE_UPSTREAM_ENV the import is refused, naming the variable and the fix', async () => {
    const refused = await runCli(base(), ['tools', 'import', catalogue]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The catalogue has 2 problems; nothing was changed.');
    expect(refused.stderr).toContain(
      '/tools/0/upstream/headers/Authorization: names ${EXAMPLE_UPSTREAM_TOKEN}, which TOOLGATE_UPSTREAM_ENV does not list',
    );
  });

  it('imports, serves, and answers both tools with the demo key', async () => {
    const env = { ...base(), TOOLGATE_UPSTREAM_ENV: 'EXAMPLE_UPSTREAM_TOKEN' };
    const imported = await runCli(env, ['tools', 'import', catalogue]);
    expect(imported).toMatchObject({ code: 0, stderr: '' });
    expect(imported.stdout).toContain('Imported 2 tools (2 created)');

    server = await startServer({ ...env, EXAMPLE_UPSTREAM_TOKEN: TOKEN });
    const key = /^ {2}(tg_[0-9A-Za-z]{11})$/m.exec(server.stdout())?.[1];
    expect(key).toBeDefined();
    const call = (tool: string, body: unknown) => callTool(server!.url, key!, tool, body);
    const people = await call('search_people', { title: 'CTO', limit: 3 });
    expect(people.status).toBe(200);
    expect((people.json() as { results: unknown[] }).results).toEqual([
      { name: 'Ada Liskov', title: 'CTO', company: 'Acme Corporation' },
      { name: 'Grace Dijkstra', title: 'CTO', company: 'Globex' },
      { name: 'Alan Allen', title: 'CTO', company: 'Initech' },
    ]);
    const company = await call('company_lookup', { domain: 'acme.com' });
    expect(company.status).toBe(200);
    // The upstream checked the token toolgate sent for it.
    expect(upstreamLog).toMatch(/POST \/search_people 200 /);
    expect(upstreamLog).not.toMatch(/ 401 /);
  });
});
