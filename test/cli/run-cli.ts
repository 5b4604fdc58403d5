/** Runs the built CLI (dist/cli/main.js) as a child process on a scratch SQLite database; no mocks. */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Scratch {
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Runs `toolgate <args>` on this scratch database. */
  run(...args: string[]): Promise<CliResult>;
  /** Runs it with --json, expects exit 0, and parses stdout. */
  json<T = any>(...args: string[]): Promise<T>;
  cleanup(): void;
}

/** The parent's environment without anything that would point the CLI elsewhere. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('TOOLGATE_') && k !== 'HOST' && k !== 'PORT' && k !== 'LOG_LEVEL' && k !== 'NODE_ENV')
      env[k] = v;
  }
  return env;
}

export function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<CliResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the CLI tests.`);
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export function scratch(extraEnv: NodeJS.ProcessEnv = {}): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'));
  const env = { ...cleanEnv(), TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 't.db')}`, ...extraEnv };
  const run = (...args: string[]) => runCli(env, args);
  return {
    dir,
    env,
    run,
    async json(...args: string[]) {
      const r = await run(...args, '--json');
      if (r.code !== 0)
        throw new Error(`toolgate ${args.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
