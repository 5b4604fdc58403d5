/**
 * What an operator reads when starting the server (dist/main.js, a real process): every failure
 * names the path or host:port it could not use, misspelt variables are warned about, and the demo
 * curl line points at an address that answers.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeDatabase, reachableUrl } from '../../src/server.js';
import { bearer } from '../calls.js';
import { KEY_SECRET, scratchDir } from '../helpers.js';
import { ROOT, startServer } from './process.js';

/** Runs dist/main.js until it exits (a start that fails), with only `env` and PATH. */
function runToExit(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** A TCP port something listens on (held until `close`), or, once closed, one nothing listens on. */
async function listening(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

describe('a start that fails names what it could not use', () => {
  it('a SQLite database in a directory it cannot write: the key secret file and the database', async () => {
    const r = await runToExit({ TOOLGATE_DATABASE_URL: 'sqlite:/sys/toolgate.db' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot use the key secret file /sys/key-secret');
    expect(r.stderr).toContain('sqlite:/sys/toolgate.db');
    expect(r.stderr).toContain('TOOLGATE_KEY_SECRET');
  });

  it('the same with TOOLGATE_KEY_SECRET set: the database file', async () => {
    const r = await runToExit({
      TOOLGATE_DATABASE_URL: 'sqlite:/sys/toolgate.db',
      TOOLGATE_KEY_SECRET: KEY_SECRET,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot use the database sqlite:\/sys\/toolgate\.db: SQLite unavailable/);
  });

  it('PostgreSQL not answering: its host:port, and not its password', async () => {
    const { port, server } = await listening();
    await new Promise((resolve) => server.close(resolve));
    const r = await runToExit({
      TOOLGATE_DATABASE_URL: `postgres://toolgate:s3cret-pw@127.0.0.1:${port}/toolgate`,
      TOOLGATE_KEY_SECRET: KEY_SECRET,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot use the database postgres://toolgate@127.0.0.1:${port}/toolgate`);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stdout + r.stderr).not.toContain('s3cret-pw');
  });

  describe('ports taken', () => {
    let dir: string;
    let cleanup: () => void;
    let taken: { port: number; server: Server };
    beforeEach(async () => {
      ({ dir, cleanup } = scratchDir());
      taken = await listening();
    });
    afterEach(async () => {
      cleanup();
      await new Promise((resolve) => taken.server.close(resolve));
    });

    it('the API port: its host:port', async () => {
      const r = await runToExit({
        TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
        PORT: String(taken.port),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`cannot serve the API on 127.0.0.1:${taken.port}: listen EADDRINUSE`);
    });

    it('the metrics port: which one, and its host:port', async () => {
      const r = await runToExit({
        TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
        TOOLGATE_METRICS_PORT: String(taken.port),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`cannot serve /metrics (TOOLGATE_METRICS_PORT) on 127.0.0.1:${taken.port}`);
    });
  });
});

describe('a start that works', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('warns once about each unknown TOOLGATE_* variable, naming the closest known one', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKN: 'an-admin-token-0123456789',
      TOOLGATE_METRIC_PORT: '9464',
      TOOLGATE_COMPLETELY_DIFFERENT: 'x',
      // The test suite's and the CLI's own are known.
      TOOLGATE_TEST_POSTGRES_URL: 'postgres://elsewhere/test',
      TOOLGATE_URL: 'http://127.0.0.1:1',
    });
    try {
      const warnings = server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('is not a variable toolgate reads'))
        .map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(warnings.map((w) => w.msg)).toEqual([
        'TOOLGATE_ADMIN_TOKN is not a variable toolgate reads (ignored): did you mean TOOLGATE_ADMIN_TOKEN?',
        'TOOLGATE_COMPLETELY_DIFFERENT is not a variable toolgate reads (ignored); docs/operations.md lists them',
        'TOOLGATE_METRIC_PORT is not a variable toolgate reads (ignored): did you mean TOOLGATE_METRICS_PORT?',
      ]);
      expect(warnings.every((w) => w.level === 40)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('listening on 0.0.0.0, prints a demo curl line at 127.0.0.1 that answers', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      HOST: '0.0.0.0',
    });
    try {
      const key = /^ {2}(tg_[0-9A-Za-z]{11})$/m.exec(server.stdout())?.[1];
      const url = /curl -s -X POST (\S+) /.exec(server.stdout())?.[1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/tools\/get_account$/);
      const res = await fetch(url!, {
        method: 'POST',
        headers: { authorization: bearer(key), 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('the addresses it names', () => {
  it('a wildcard listening address becomes one to connect to', () => {
    expect(reachableUrl('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080');
    expect(reachableUrl('::', 8080)).toBe('http://[::1]:8080');
    expect(reachableUrl('::1', 8080)).toBe('http://[::1]:8080');
    expect(reachableUrl('10.1.2.3', 80)).toBe('http://10.1.2.3:80');
  });

  it('PostgreSQL with its default port said, and never its password', () => {
    const pg = { kind: 'postgres', poolSize: 1, schema: 'public', timeoutMs: 100 } as const;
    expect(describeDatabase({ ...pg, url: 'postgres://u:pw@db.internal/app' })).toBe(
      'postgres://u@db.internal:5432/app',
    );
    expect(describeDatabase({ ...pg, url: 'postgresql://db:6543/app?sslmode=require' })).toBe(
      'postgres://db:6543/app',
    );
  });
});
