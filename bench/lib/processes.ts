/** @module Child Node processes for the servers under test: spawned, watched, and always stopped. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onCleanup } from './cleanup.js';

/** The repository root (this file runs from .bench/bench/lib/). */
export const ROOT = join(import.meta.dirname, '..', '..', '..');

const TAIL_CHARS = 16_000;

export interface Child {
  name: string;
  process: ChildProcess;
  /** The last few kilobytes of stdout and stderr, interleaved. */
  output(): string;
  /** Lines written since the start (the servers run at LOG_LEVEL=warn: any line is news). */
  lines(): number;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
  stop(): Promise<void>;
}

/**
 * Starts `node [nodeArgs] <script>` with exactly `env` (plus PATH); stdout/stderr are drained so they
 * never block it.
 */
export function spawnNode(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Child {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    // stdin is a pipe the child can watch: it closes when this process dies.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let tail = '';
  let lineCount = 0;
  const collect = (chunk: Buffer) => {
    const s = chunk.toString('utf8');
    for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) lineCount++;
    tail = (tail + s).slice(-TAIL_CHARS);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  child.stdin.on('error', () => {});
  let gone = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      gone = true;
      resolve(code);
    });
    child.once('error', (err) => {
      collect(Buffer.from(`spawn error: ${err.message}\n`));
      gone = true;
      resolve(null);
    });
  });
  const hasExited = () => gone;
  const stop = async () => {
    if (hasExited()) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  const forget = onCleanup({
    name: `${name} (pid ${child.pid})`,
    run: stop,
    runSync: () => {
      if (!hasExited()) child.kill('SIGKILL');
    },
  });
  void exited.then(forget);
  return {
    name,
    process: child,
    output: () => tail,
    lines: () => lineCount,
    exited,
    hasExited,
    stop,
  };
}

/** A fresh temporary directory, removed at cleanup. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  onCleanup({ name: `temp dir ${dir}`, run: async () => remove(), runSync: remove });
  return dir;
}

/** A port that was free a moment ago (listen on 0, read it, close). The caller retries if it is taken since. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves with the first match of `pattern` in the child's output; rejects if it exits or times out first. */
export function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const done = (fn: () => void) => {
      clearTimeout(timer);
      clearInterval(poll);
      fn();
    };
    const check = () => {
      const m = pattern.exec(child.output());
      if (m) done(() => resolve(m));
      else if (child.hasExited())
        done(() => reject(new Error(`${child.name} exited before it was ready:\n${child.output()}`)));
    };
    const poll = setInterval(check, 25);
    const timer = setTimeout(
      () =>
        done(() => reject(new Error(`${child.name} not ready after ${timeoutMs} ms:\n${child.output()}`))),
      timeoutMs,
    );
    check();
  });
}

/** Polls `probe` until it is true; rejects if the child exits or the time runs out first. */
export async function waitUntil(
  child: Child,
  probe: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.hasExited()) throw new Error(`${child.name} exited before it was ready:\n${child.output()}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`${child.name} not ready after ${timeoutMs} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
