/**
 * SQLite's checkpoints on their own thread (a serving process), on real files: no thread until
 * commits block the event loop long enough; then the serving connection's automatic checkpoints are
 * off and the worker's copy the WAL back; a WAL grown past its limit under writes that never pause
 * starts over, with every write kept; a failed worker hands checkpoints back to the connection;
 * closing leaves no WAL behind.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { SqliteExecutor } from '../../src/store/sqlite/executor.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ROOT } from '../e2e/process.js';
import { accountRecord, scratchDir } from '../helpers.js';

const T = 1_790_000_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function scratchPath(): string {
  const { dir, cleanup } = scratchDir();
  cleanups.push(cleanup);
  return join(dir, 'toolgate.db');
}

/**
 * How many times the WAL has started over: its header's checkpoint sequence number (SQLite's file
 * format: a big-endian 32-bit integer at byte 12 of the WAL), which each restart increments.
 */
function walResets(path: string): number {
  const fd = openSync(`${path}-wal`, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

/** The accounts in the database file, read by a connection of its own. */
function accountsIn(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM accounts').pluck().get() as number;
  } finally {
    db.close();
  }
}

async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A store as a server has it, its checkpoint thread started by its first commit. */
async function serving(tuning: { delayMs?: number; restartFrames?: number }) {
  const path = scratchPath();
  const store = new SqliteStore({ path, backgroundCheckpoints: { ...tuning, startBlockedMs: 0 } });
  cleanups.push(() => store.close());
  await store.migrate(DEFAULT_PLANS, T);
  const checkpointer = store.checkpointer;
  if (!checkpointer) throw new Error('no checkpointer');
  return { path, store, checkpointer };
}

describe('background checkpoints', () => {
  it('start no thread while commits do not block the event loop, and leave SQLite its own', async () => {
    const path = scratchPath();
    const x = new SqliteExecutor({ path, backgroundCheckpoints: true });
    cleanups.push(() => x.close());
    await x.write(() => x.db.exec('CREATE TABLE t (x)'));
    for (let i = 0; i < 50; i++) await x.write(() => x.db.prepare('INSERT INTO t VALUES (?)').run(i));
    expect(x.checkpointer?.active).toBe(false);
    expect(x.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('start the thread once slow commits have blocked the loop long enough within a second', () => {
    const started: string[] = [];
    const c = new Checkpointer({
      path: scratchPath(),
      slowCommitMs: 2,
      startBlockedMs: 50,
      onStart: () => started.push('start'),
      onFailure: () => {},
    });
    cleanups.push(() => c.close());
    // Fast commits count for nothing, however many; slow ones only within a second of each other.
    for (let t = 0; t < 900; t++) c.committed(1.9, t);
    c.committed(30, 1_000);
    c.committed(30, 2_100);
    expect(started).toEqual([]);
    expect(c.active).toBe(false);
    c.committed(25, 2_200);
    expect(started).toEqual(['start']);
    expect(c.active).toBe(true);
  });

  it('turn the serving connection’s automatic checkpoints off when the thread starts, and only its own', async () => {
    const path = scratchPath();
    const serving = new SqliteExecutor({ path, backgroundCheckpoints: { startBlockedMs: 0 } });
    const command = new SqliteExecutor({ path });
    cleanups.push(
      () => command.close(),
      () => serving.close(),
    );
    await serving.write(() => serving.db.exec('CREATE TABLE t (x)'));
    expect(serving.checkpointer?.active).toBe(true);
    expect(serving.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    expect(command.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(command.checkpointer).toBeUndefined();
  });

  it('move no data version: a checkpoint is not another process’s commit, the read cache stays', async () => {
    const path = scratchPath();
    const x = new SqliteExecutor({ path, backgroundCheckpoints: { delayMs: 1, startBlockedMs: 0 } });
    cleanups.push(() => x.close());
    await x.write(() => x.db.exec('CREATE TABLE t (x)'));
    await x.write(() => x.db.prepare('INSERT INTO t VALUES (1)').run());
    const cp = x.checkpointer!;
    const version = x.db.pragma('data_version', { simple: true });
    const passes = cp.done.passive;
    await until('a checkpoint', () => cp.done.passive > passes && cp.last.log > 0);
    expect(cp.last.checkpointed).toBe(cp.last.log);
    expect(x.db.pragma('data_version', { simple: true })).toBe(version);
  });

  it('copy the WAL back into the database file after writes', async () => {
    const { path, store, checkpointer } = await serving({ delayMs: 1 });
    await until('the first checkpoint', () => checkpointer.done.passive > 0);
    const before = statSync(path).size;
    const passes = checkpointer.done.passive;
    for (let i = 0; i < 200; i++) await store.accounts.create(accountRecord(T, { name: `Acme ${i}` }));
    await until('a checkpoint after the writes', () => checkpointer.done.passive > passes);
    // Far below SQLite's own threshold (1,000 pages): only the worker copied these pages back.
    await until('the pages copied back', () => statSync(path).size > before);
    await until('the WAL caught up', () => checkpointer.last.checkpointed === checkpointer.last.log);
    expect(await store.accounts.list({ limit: 500 })).toHaveLength(200);
  });

  it('start a WAL that outgrew its limit over, holding writes meanwhile, losing none', async () => {
    const { path, store, checkpointer } = await serving({ delayMs: 1, restartFrames: 30 });
    await store.accounts.create(accountRecord(T));
    const resetsBefore = walResets(path);
    // Writes that never pause: a checkpoint beside them never catches up on its own, and the WAL
    // would never start over.
    const writes: Promise<unknown>[] = [];
    const deadline = Date.now() + 10_000;
    while (checkpointer.done.restart < 3 && Date.now() < deadline) {
      writes.push(store.accounts.create(accountRecord(T)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(checkpointer.done.restart).toBeGreaterThanOrEqual(3);
    await Promise.all(writes);
    // It started over while the writes went on: each restart was followed by writes.
    expect(walResets(path) - resetsBefore).toBeGreaterThanOrEqual(2);
    // Counted in the file, not through a page of the list: a slow machine writes more than a page.
    expect(accountsIn(path)).toBe(writes.length + 1);
  });

  it('hand checkpoints back to the connection, with a warning, when the thread fails', async () => {
    const warnings: string[] = [];
    const path = scratchPath();
    const x = new SqliteExecutor({
      path,
      backgroundCheckpoints: { startBlockedMs: 0 },
      warn: (m) => warnings.push(m),
    });
    cleanups.push(() => x.close());
    await x.write(() => x.db.exec('CREATE TABLE t (x)'));
    expect(x.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const worker = (x.checkpointer as unknown as { worker: { terminate(): Promise<number> } }).worker;
    await worker.terminate();
    await until('the failure', () => x.checkpointer?.active === false);
    expect(x.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(warnings).toEqual(['SQLite checkpoints are back on the event loop: their thread failed']);
    // Writes go on, none held, and no thread starts again.
    await x.write(() => x.db.exec('CREATE TABLE u (x)'));
    expect(x.checkpointer?.held).toBeUndefined();
    expect(x.checkpointer?.active).toBe(false);
  });

  it('report a thread that cannot open the database as a failure', async () => {
    const failures: Error[] = [];
    const c = new Checkpointer({
      path: join(scratchPath(), 'missing', 'x.db'),
      startBlockedMs: 0,
      onStart: () => {},
      onFailure: (e) => failures.push(e),
    });
    cleanups.push(() => c.close());
    c.committed(0, 0);
    await until('the failure', () => failures.length === 1);
    expect(c.active).toBe(false);
    c.committed(100, 10);
    expect(c.active).toBe(false);
    expect(c.done).toEqual({ passive: 0, restart: 0 });
  });

  it('close before the connection, which then removes the WAL', async () => {
    const { path, store } = await serving({ delayMs: 1 });
    await store.accounts.create(accountRecord(T));
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('close to the end in a process with nothing else to wait for (no exit code 13 before the thread stops)', () => {
    const path = scratchPath();
    const script = `
      import { SqliteStore } from './dist/store/sqlite/sqlite-store.js';
      import { DEFAULT_PLANS } from './dist/domain/plans.js';
      const store = new SqliteStore({ path: ${JSON.stringify(path)}, backgroundCheckpoints: { startBlockedMs: 0, delayMs: 1 } });
      await store.migrate(DEFAULT_PLANS, ${T});
      if (!store.checkpointer?.active) throw new Error('no checkpoint thread');
      await store.close();
      console.log('closed');`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect({ status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({
      status: 0,
      stdout: 'closed',
      stderr: '',
    });
    expect(existsSync(`${path}-wal`)).toBe(false);
  });
});
