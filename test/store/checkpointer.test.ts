/**
 * SQLite's checkpoints on their own thread (a serving process), on real files: the serving
 * connection's automatic checkpoints are off and the worker's copy the WAL back; a WAL grown past
 * its limit under writes that never pause starts over, with every write kept; a failed worker hands
 * checkpoints back to the connection; closing leaves no WAL behind.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { SqliteExecutor } from '../../src/store/sqlite/executor.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
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

async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function serving(tuning: { delayMs?: number; restartFrames?: number }, warnings: string[] = []) {
  const path = scratchPath();
  const store = new SqliteStore({
    path,
    backgroundCheckpoints: tuning,
    warn: (message) => warnings.push(message),
  });
  cleanups.push(() => store.close());
  await store.migrate(DEFAULT_PLANS, T);
  const checkpointer = store.checkpointer;
  if (!checkpointer) throw new Error('no checkpointer');
  return { path, store, checkpointer };
}

describe('background checkpoints', () => {
  it('turns the serving connection’s automatic checkpoints off, and only its own', async () => {
    const path = scratchPath();
    const serving = new SqliteExecutor({ path, backgroundCheckpoints: true });
    const command = new SqliteExecutor({ path });
    cleanups.push(
      () => command.close(),
      () => serving.close(),
    );
    expect(serving.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    expect(serving.checkpointer?.active).toBe(true);
    expect(command.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(command.checkpointer).toBeUndefined();
  });

  it('moves no data version: a checkpoint is not another process’s commit, the read cache stays', async () => {
    const path = scratchPath();
    const x = new SqliteExecutor({ path, backgroundCheckpoints: { delayMs: 1 } });
    cleanups.push(() => x.close());
    const cp = x.checkpointer!;
    await x.write(() => x.db.exec('CREATE TABLE t (x)'));
    await x.write(() => x.db.prepare('INSERT INTO t VALUES (1)').run());
    const version = x.db.pragma('data_version', { simple: true });
    const passes = cp.done.passive;
    await until('a checkpoint', () => cp.done.passive > passes && cp.last.log > 0);
    expect(cp.last.checkpointed).toBe(cp.last.log);
    expect(x.db.pragma('data_version', { simple: true })).toBe(version);
  });

  it('copies the WAL back into the database file after writes', async () => {
    const { path, store, checkpointer } = await serving({ delayMs: 1 });
    await until('the first checkpoint', () => checkpointer.done.passive > 0);
    const before = statSync(path).size;
    const passes = checkpointer.done.passive;
    for (let i = 0; i < 200; i++) await store.createAccount(accountRecord(T, { name: `Acme ${i}` }));
    await until('a checkpoint after the writes', () => checkpointer.done.passive > passes);
    // Far below SQLite's own threshold (1,000 pages): only the worker copied these pages back.
    await until('the pages copied back', () => statSync(path).size > before);
    await until('the WAL caught up', () => checkpointer.last.checkpointed === checkpointer.last.log);
    expect(await store.listAccounts({ limit: 500 })).toHaveLength(200);
  });

  it('starts a WAL that outgrew its limit over, holding writes meanwhile, losing none', async () => {
    const { path, store, checkpointer } = await serving({ delayMs: 1, restartFrames: 30 });
    // Writes that never pause: a checkpoint beside them never catches up on its own.
    const writes: Promise<unknown>[] = [];
    const deadline = Date.now() + 10_000;
    while (checkpointer.done.restart < 2 && Date.now() < deadline) {
      writes.push(store.createAccount(accountRecord(T)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(checkpointer.done.restart).toBeGreaterThanOrEqual(2);
    await Promise.all(writes);
    expect(await store.listAccounts({ limit: 10_000 })).toHaveLength(writes.length);
    // The next write started the WAL over: the one after finds it short.
    await store.createAccount(accountRecord(T));
    const passes = checkpointer.done.passive;
    await store.createAccount(accountRecord(T));
    await until('a checkpoint', () => checkpointer.done.passive > passes);
    expect(checkpointer.last.log).toBeLessThan(30);
    expect(existsSync(`${path}-wal`)).toBe(true);
  });

  it('hands checkpoints back to the connection, with a warning, when its thread fails', async () => {
    const warnings: string[] = [];
    const path = scratchPath();
    const x = new SqliteExecutor({ path, backgroundCheckpoints: true, warn: (m) => warnings.push(m) });
    cleanups.push(() => x.close());
    const worker = (x.checkpointer as unknown as { worker: { terminate(): Promise<number> } }).worker;
    await worker.terminate();
    await until('the failure', () => x.checkpointer?.active === false);
    expect(x.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(warnings).toEqual(['SQLite checkpoints are back on the event loop: their thread failed']);
    // Writes go on, none held.
    await x.write(() => x.db.exec('CREATE TABLE t (x)'));
    expect(x.checkpointer?.held).toBeUndefined();
  });

  it('reports a worker that cannot open the database as a failure', async () => {
    const failures: Error[] = [];
    const c = new Checkpointer({
      path: join(scratchPath(), 'missing', 'x.db'),
      onFailure: (e) => failures.push(e),
    });
    cleanups.push(() => c.close());
    await until('the failure', () => failures.length === 1);
    expect(c.active).toBe(false);
    c.wrote();
    expect(c.done).toEqual({ passive: 0, restart: 0 });
  });

  it('closes before the connection, which then removes the WAL', async () => {
    const { path, store } = await serving({ delayMs: 1 });
    await store.createAccount(accountRecord(T));
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
  });
});
