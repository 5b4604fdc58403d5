/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against a live
 * toolgate: the built server as a process on a scratch SQLite database, with an API key. The suite
 * needs Node 22 or later: both are installed from the npm registry into .cache/conformance on the
 * first run (the Node binary as the package node-<platform>-<arch>), not over the system's Node.
 * Scenarios toolgate fails on purpose are in conformance-expected-failures.yml, with a reason each;
 * this test fails when another one fails, or when a listed one passes.
 */
import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../calls.js';
import { accountWithKey, E2E_ADMIN_TOKEN } from '../e2e/admin-client.js';
import { ROOT, type ServerProcess, startServer } from '../e2e/process.js';

const SUITE_VERSION = '0.1.16';
const NODE_VERSION = '22.23.3';
const CACHE = join(ROOT, '.cache', 'conformance');
const EXPECTED_FAILURES = join(import.meta.dirname, 'conformance-expected-failures.yml');
/** What toolgate does serve: these must pass. */
const MUST_PASS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

/** The Node that runs the suite: this one when it is new enough, else the one installed beside the suite. */
const systemNodeWillDo = Number(process.versions.node.split('.')[0]) >= 22;
const nodePackage = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const suiteEntry = join(CACHE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const nodeBinary = systemNodeWillDo
  ? process.execPath
  : join(CACHE, 'node_modules', nodePackage, 'bin', 'node');

/** Installs the pinned suite (and Node 22) into the cache folder unless they are there already. */
async function installSuite(): Promise<void> {
  const manifest = {
    private: true,
    description: 'The MCP conformance suite for test/mcp/conformance.test.ts (installed by it).',
    dependencies: {
      '@modelcontextprotocol/conformance': SUITE_VERSION,
      ...(systemNodeWillDo ? {} : { [nodePackage]: NODE_VERSION }),
    },
  };
  const manifestPath = join(CACHE, 'package.json');
  const wanted = `${JSON.stringify(manifest, null, 2)}\n`;
  const current = existsSync(manifestPath) ? readFileSync(manifestPath, 'utf8') : '';
  if (current === wanted && existsSync(suiteEntry) && existsSync(nodeBinary)) return;
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(manifestPath, wanted);
  // No install scripts: neither package needs one, and nothing else is to run at install time.
  await promisify(execFile)(
    'npm',
    ['install', '--prefix', CACHE, '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'],
    { timeout: 240_000 },
  );
}

/**
 * The suite has no option for a credential: a forwarding proxy adds the key to each request, as an
 * agent configured with it would, and passes everything else (Host and Origin included) unchanged.
 */
async function keyAddingProxy(target: string, key: string): Promise<Server> {
  const { hostname, port } = new URL(target);
  const proxy = createServer((req, res) => {
    const upstream = request(
      {
        host: hostname,
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: bearer(key) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return proxy;
}

/** The listed scenarios, each with its reason (the text after `#`). */
function expectedFailures(): Map<string, string> {
  const listed = new Map<string, string>();
  for (const line of readFileSync(EXPECTED_FAILURES, 'utf8').split('\n')) {
    if (!/^\s*-/.test(line)) continue;
    const m = /^\s*-\s*([a-z0-9-]+)\s*#\s*(\S.*)$/.exec(line);
    if (!m) throw new Error(`${EXPECTED_FAILURES}: "${line.trim()}" has no reason after "#"`);
    listed.set(m[1]!, m[2]!);
  }
  return listed;
}

/**
 * Each scenario the suite ran, from its results folder (`server-<scenario>-<time>/checks.json`):
 * failed when a check failed or warned, as the suite counts against its expected failures.
 */
function outcomes(dir: string): Map<string, { failed: boolean; why: string }> {
  const ran = new Map<string, { failed: boolean; why: string }>();
  for (const entry of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    if (!m) continue;
    const checks = JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8')) as Array<{
      status: string;
      errorMessage?: string;
      details?: { message?: string };
    }>;
    const failures = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    const why = failures.map((c) => `${c.status}: ${c.errorMessage ?? c.details?.message ?? ''}`).join('; ');
    ran.set(m[1]!, { failed: failures.length > 0, why });
  }
  return ran;
}

let dir: string;
let server: ServerProcess | undefined;
let proxy: Server | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-conformance-'));
  await installSuite();
  server = await startServer({
    TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 't.db')}`,
    TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
    // The suite's scenarios are quick bursts of requests: the per-key limit is not what is judged.
    TOOLGATE_RATE_LIMIT: '0',
    NODE_ENV: 'production',
  });
  const { key } = await accountWithKey(server.url);
  proxy = await keyAddingProxy(server.url, key);
}, 300_000);

afterAll(async () => {
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the MCP conformance suite against a live toolgate', () => {
  it('passes what toolgate serves; fails exactly the listed scenarios, each for its reason', async () => {
    const url = `http://127.0.0.1:${(proxy!.address() as AddressInfo).port}/mcp`;
    const results = join(dir, 'results');
    const args = [
      suiteEntry,
      'server',
      '--url',
      url,
      '--expected-failures',
      EXPECTED_FAILURES,
      '-o',
      results,
    ];
    const run = spawn(nodeBinary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    run.stdout.on('data', (d) => {
      output += d;
    });
    run.stderr.on('data', (d) => {
      output += d;
    });
    const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
    const summary = output.slice(output.indexOf('=== SUMMARY ==='));

    const ran = outcomes(results);
    const listed = expectedFailures();
    const failed = [...ran].filter(([, o]) => o.failed).map(([name]) => name);
    for (const name of MUST_PASS)
      expect(ran.get(name), `${name}\n${summary}`).toEqual({ failed: false, why: '' });
    // A scenario no longer run would hide behind the list: every listed one ran.
    expect(
      [...listed.keys()].filter((name) => !ran.has(name)),
      'listed but not run',
    ).toEqual([]);
    expect(
      failed.filter((name) => !listed.has(name)).map((name) => `${name}: ${ran.get(name)?.why}`),
      'failed, not listed',
    ).toEqual([]);
    expect(
      [...listed.keys()].filter((name) => !failed.includes(name)),
      'listed, but passes now: remove it from the list',
    ).toEqual([]);
    // The suite's own verdict on the same list agrees.
    expect(code, summary).toBe(0);
  }, 90_000);
});
