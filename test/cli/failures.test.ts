/**
 * Every CLI failure names what it could not use: the SQLite file's path, PostgreSQL's host:port, the
 * server's URL; never a bare `Unexpected error: EACCES`. The built CLI as a process, real files and
 * real (refused) connections.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type Scratch, scratch } from './run-cli.js';

const SECRET = 'failures-key-secret-0123456789abcdef';
let t: Scratch;
beforeAll(() => {
  t = scratch({ TOOLGATE_KEY_SECRET: SECRET });
});
afterAll(() => t.cleanup());

/** A port nothing listens on: one the system gave out, closed again. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('a database the CLI cannot use is named', () => {
  it('a file that is not a SQLite database: its path (exit 1)', async () => {
    const file = join(t.dir, 'not-a-db.db');
    writeFileSync(
      file,
      'this is not a database, it is a text file long enough to be read as one\n'.repeat(20),
    );
    for (const command of [['accounts', 'list'], ['migrate']]) {
      const r = await runCli({ ...t.env, TOOLGATE_DATABASE_URL: `sqlite:${file}` }, command);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `toolgate: Cannot use the SQLite database ${file}: SQLITE_NOTADB: file is not a database.\n`,
      );
    }
  });

  it('PostgreSQL that refuses connections: its host:port, never the password (exit 1)', async () => {
    const port = await closedPort();
    const r = await runCli(
      { ...t.env, TOOLGATE_DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/test` },
      ['accounts', 'list', '--json'],
    );
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ code: 'unavailable' });
    expect(body.message).toContain(`PostgreSQL at 127.0.0.1:${port}/test cannot be reached`);
    expect(r.stdout).not.toContain('hunter2');
  });

  it('PostgreSQL that refuses the role: its host:port (exit 1)', async () => {
    const r = await runCli(
      { ...t.env, TOOLGATE_DATABASE_URL: 'postgres://no_such_role@127.0.0.1:5432/test' },
      ['accounts', 'list'],
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^toolgate: Cannot use PostgreSQL at 127\.0\.0\.1:5432\/test: .*no_such_role/);
  });
});
