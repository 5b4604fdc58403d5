/** Running the built server as a real process, and waiting for what it prints. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The first line of the server's output that holds `text`, waiting up to `timeoutMs` for it: a
 * line logged before an HTTP answer may still be on its way through the pipe when the answer is in.
 */
export async function outputLine(
  server: ServerProcess,
  text: string,
  timeoutMs = 5_000,
): Promise<string | undefined> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes(text));
    if (line !== undefined || Date.now() > deadline) return line;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts `node dist/main.js` (what `npm start` runs, without its memory flags) on a free port and
 * resolves once it logs that it listens.
 */
export function startServer(
  env: Record<string, string>,
  args: string[] = ['dist/main.js'],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}\n${err}`)), 15_000);
    const check = () => {
      // A JSON line, or pretty lines (TOOLGATE_LOG_FORMAT=pretty): the message, then its fields.
      const m =
        /"url":"(http:[^"]+)".*"msg":"toolgate listening"/.exec(out) ??
        /toolgate listening\n\s+url: "(http:[^"]+)"/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      resolve({
        child,
        url: m[1]!,
        stdout: () => out,
        stderr: () => err,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}\n${err}`));
    });
  });
}
