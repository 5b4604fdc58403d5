/**
 * @module The servers under load, each a real child process: the bare-Fastify baseline, and toolgate
 * as it ships (`node dist/main.js`). Later backends (PostgreSQL) get their own start function here.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Child, freePort, ROOT, spawnNode, tempDir, waitForOutput, waitUntil } from './processes.js';

export interface Target {
  /** What the report calls it. */
  name: string;
  url: string;
  child: Child;
}

export interface ToolgateTarget extends Target {
  backend: 'sqlite';
  adminToken: string;
}

/** bench/baseline-server.ts, compiled beside this module's directory. */
export async function startBaseline(): Promise<Target> {
  const script = join(import.meta.dirname, '..', 'baseline-server.js');
  const child = spawnNode('baseline', script, { HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'production' });
  const m = await waitForOutput(child, /baseline listening (http:\/\/\S+)/);
  return { name: 'baseline', url: m[1]!, child };
}

/**
 * toolgate on a scratch SQLite database in a temp dir. It logs at `warn` so request logging costs
 * nothing (as in production), which means its 'toolgate listening' line is not printed: so it gets a
 * port found free a moment before, is polled on /healthz until it answers, and is started again on
 * another port if that one was taken in between.
 */
export async function startToolgateSqlite(): Promise<ToolgateTarget> {
  const main = join(ROOT, 'dist', 'main.js');
  if (!existsSync(main))
    throw new Error(`${main} is missing: run \`npm run build\` first (npm run bench does).`);
  const dir = tempDir('toolgate-bench-');
  const adminToken = randomBytes(24).toString('hex');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawnNode('toolgate', main, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKEN: adminToken,
      // The per-key limiter stays in the pipeline (its cost is measured) but never refuses.
      TOOLGATE_RATE_LIMIT: '999999999',
    });
    try {
      await waitUntil(child, async () => {
        const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
        const body = (await r.json().catch(() => null)) as { status?: string; store?: string } | null;
        return r.status === 200 && body?.status === 'ok' && body.store === 'sqlite';
      });
      // Answered on that port, and still alive: it is ours (not another process that took the port).
      await new Promise((r) => setTimeout(r, 100));
      if (child.hasExited()) throw new Error(`toolgate exited after start:\n${child.output()}`);
      return { name: 'toolgate', backend: 'sqlite', url, child, adminToken };
    } catch (err) {
      await child.stop();
      if (attempt < 3 && /EADDRINUSE/.test(child.output())) continue;
      throw err;
    }
  }
}
