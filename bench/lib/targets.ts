/**
 * @module The servers under load, each a real child process: the bare-Fastify baseline, and toolgate
 * as it ships (`npm start`'s command line, read from package.json), on SQLite or on PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from './args.js';
import { createScratchSchema, PgMonitor, withApplicationName } from './postgres.js';
import { type Child, freePort, ROOT, spawnNode, tempDir, waitForOutput, waitUntil } from './processes.js';

export interface Target {
  /** What the report calls it. */
  name: string;
  url: string;
  child: Child;
}

export interface ToolgateTarget extends Target {
  backend: Backend;
  adminToken: string;
  /** Watches the database while toolgate's rounds run (PostgreSQL); see PgMonitor. */
  monitor?: PgMonitor;
}

/** How long a toolgate process may take to answer /healthz after it is started. */
const START_TIMEOUT_MS = 60_000;

let toolgateNodeArgs: string[] = [];
let toolgateEnv: Record<string, string> = {};

/** `--toolgate-env`: settings every toolgate process started from now on gets, over the bench's own. */
export function setToolgateEnv(env: Record<string, string>): void {
  toolgateEnv = { ...env };
}

/**
 * `--cpu-prof <dir>`: every toolgate process started from now on writes a V8 CPU profile into `dir`
 * when it stops (`node --cpu-prof`), named after its backend and the time.
 */
export function profileToolgateInto(dir: string): void {
  toolgateNodeArgs = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/**
 * The Node flags toolgate ships with: those of `npm start` (package.json `scripts.start`, which must
 * read `node [flags] dist/main.js`), so the bench runs what an operator runs, memory settings included.
 */
export function shippedNodeArgs(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts?: { start?: string };
  };
  const words = (pkg.scripts?.start ?? '').trim().split(/\s+/);
  if (
    words[0] !== 'node' ||
    words.at(-1) !== 'dist/main.js' ||
    words.slice(1, -1).some((w) => !w.startsWith('-'))
  )
    throw new Error(`package.json scripts.start is "${pkg.scripts?.start}", not "node [flags] dist/main.js"`);
  return words.slice(1, -1);
}

/** bench/baseline-server.ts, compiled beside this module's directory. */
export async function startBaseline(): Promise<Target> {
  const script = join(import.meta.dirname, '..', 'baseline-server.js');
  const child = spawnNode('baseline', script, { HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'production' });
  const m = await waitForOutput(child, /baseline listening (http:\/\/\S+)/);
  return { name: 'baseline', url: m[1]!, child };
}

/**
 * toolgate on SQLite: a scratch database in a temp dir, or `file` (already seeded, with `keySecret`
 * the secret its keys were digested under). `nodeArgs`: after the shipped flags (lib/idle.ts's probe).
 */
export async function startToolgateSqlite(
  existing: { file: string; keySecret: string } | null = null,
  root = ROOT,
  nodeArgs: readonly string[] = [],
): Promise<ToolgateTarget> {
  if (existing)
    return startToolgate('sqlite', {
      TOOLGATE_DATABASE_URL: `sqlite:${existing.file}`,
      TOOLGATE_KEY_SECRET: existing.keySecret,
    });
  const dir = tempDir('toolgate-bench-');
  return startToolgate(
    'sqlite',
    { TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}` },
    root,
    nodeArgs,
  );
}

export interface PostgresSetup {
  url: string;
  poolSize: number;
  /** From probe(): whether the backends' CPU time can be read on this machine. */
  local: boolean;
  /** An existing scratch schema (already seeded) and the secret its keys were digested under. */
  existing?: { schema: string; keySecret: string };
}

/**
 * toolgate on PostgreSQL, in a scratch schema created (and dropped at cleanup) by lib/postgres.ts.
 * Its connections carry an application_name of their own, so the monitor finds them among others.
 */
export async function startToolgatePostgres(
  pg: PostgresSetup,
  root = ROOT,
): Promise<ToolgateTarget & { schema: string; applicationName: string }> {
  const schema = pg.existing?.schema ?? (await createScratchSchema(pg.url));
  const applicationName = `toolgate_${schema}`;
  const target = await startToolgate(
    'postgres',
    {
      TOOLGATE_DATABASE_URL: withApplicationName(pg.url, applicationName),
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_DATABASE_POOL_SIZE: String(pg.poolSize),
      // Required off SQLite; any 32+ characters, this run's own.
      TOOLGATE_KEY_SECRET: pg.existing?.keySecret ?? randomBytes(32).toString('hex'),
    },
    root,
  );
  const monitor = await PgMonitor.open(pg.url, applicationName, pg.local);
  return { ...target, monitor, schema, applicationName };
}

/**
 * toolgate as it ships (`npm start`: `node [shipped flags] dist/main.js`) on the database `env`
 * names. It logs at `warn` so request logging costs nothing (as in production), which means its
 * 'toolgate listening' line is not printed: so it gets a port found free a moment before, is polled
 * on /healthz until it answers with the expected store, and is started again on another port if that
 * one was taken in between. `root`: another build of toolgate (lib/before.ts), run the same way.
 */
async function startToolgate(
  backend: Backend,
  env: Record<string, string>,
  root = ROOT,
  extraNodeArgs: readonly string[] = [],
): Promise<ToolgateTarget> {
  const main = join(root, 'dist', 'main.js');
  if (!existsSync(main))
    throw new Error(`${main} is missing: run \`npm run build\` first (npm run bench does).`);
  const shipped = [...shippedNodeArgs(), ...extraNodeArgs];
  const adminToken = randomBytes(24).toString('hex');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const nodeArgs =
      toolgateNodeArgs.length > 0
        ? [
            ...shipped,
            ...toolgateNodeArgs,
            `--cpu-prof-name=toolgate-${backend}-${Date.now()}-${process.pid}.cpuprofile`,
          ]
        : shipped;
    const child = spawnNode(
      `toolgate (${backend})`,
      main,
      {
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        PORT: String(port),
        TOOLGATE_ADMIN_TOKEN: adminToken,
        // On PostgreSQL the console and OAuth are on only with a public address to name.
        TOOLGATE_PUBLIC_URL: url,
        // The alerts scenario's endpoint is a loopback address that is never sent to.
        TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
        // TOOLGATE_RATE_LIMIT is not set: toolgate's default per-key limit (100/s) is in play, and the
        // bench rotates over enough keys that it never refuses (lib/load.ts counts the busiest key).
        ...env,
        ...toolgateEnv,
      },
      nodeArgs,
    );
    try {
      await waitUntil(
        child,
        async () => {
          const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
          const body = (await r.json().catch(() => null)) as { status?: string; store?: string } | null;
          return r.status === 200 && body?.status === 'ok' && body.store === backend;
          // A start takes 8 s on a busy 2-core machine, and the bench starts several servers at once.
        },
        START_TIMEOUT_MS,
      );
      // Answered on that port, and still alive: it is ours (not another process that took the port).
      await new Promise((r) => setTimeout(r, 100));
      if (child.hasExited()) throw new Error(`${child.name} exited after start:\n${child.output()}`);
      return { name: 'toolgate', backend, url, child, adminToken };
    } catch (err) {
      await child.stop();
      if (attempt < 3 && /EADDRINUSE/.test(child.output())) continue;
      throw err;
    }
  }
}
