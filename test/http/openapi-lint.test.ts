/**
 * An outside judge of /openapi.json: Redocly's linter (its recommended rules) run as a process on the
 * document as served (admin API on, a catalogue tool served), with the warnings it may give listed
 * below, a reason each.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, scratchApp } from '../helpers.js';

const REDOCLY = join(
  dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')),
  'bin/cli.js',
);

/** Problems Redocly reports that toolgate keeps, as `rule pointer`: each with why. */
const EXPECTED: Record<string, string> = {
  // A probe takes no input and no credentials: it answers 200 or 503, never a 4xx.
  'operation-4xx-response #/paths/~1healthz/get/responses': 'a liveness probe has no 4xx',
  'operation-4xx-response #/paths/~1readyz/get/responses': 'a readiness probe has no 4xx',
};

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

function lint(file: string): Promise<{ code: number; problems: Problem[]; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [REDOCLY, 'lint', '--format=json', '--extends=recommended', file],
      // No telemetry and no update check: the judge works offline.
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        const json = stdout.slice(stdout.indexOf('{'));
        resolve({ code, problems: (JSON.parse(json) as { problems: Problem[] }).problems, stderr });
      },
    );
  });
}

describe('/openapi.json under Redocly lint (recommended rules)', () => {
  let h: AppHarness;
  let dir: string;
  let doc: any;
  let result: Awaited<ReturnType<typeof lint>>;
  beforeAll(async () => {
    h = await scratchApp({ catalogue: {} });
    const put = await h.services.catalogue.put('echo_people', {
      description: 'Find people.',
      upstream: { url: 'http://127.0.0.1:9/people' },
      metering: { category: 'search', tokens_per_call: 2, tokens_per_record: 1 },
    });
    expect(put.ok).toBe(true);
    doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-openapi-'));
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    result = await lint(join(dir, 'openapi.json'));
  }, 90_000);
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds no error and no warning besides the expected ones', () => {
    const found = result.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`);
    expect(found.sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(result.code).toBe(0);
  });

  it('was given the catalogue tool and the admin API to judge', () => {
    expect(doc.paths['/api/v1/tools/echo_people'].post.operationId).toBe('echo_people');
    expect(doc.paths['/admin/v1/accounts'].get.operationId).toBe('listAccounts');
  });

  it('names every operation, each name once', () => {
    const ids = Object.values(doc.paths).flatMap((item: any) =>
      Object.values(item).map((op: any) => op.operationId as unknown),
    );
    expect(ids.every((id) => typeof id === 'string' && id !== '')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
