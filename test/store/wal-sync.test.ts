/**
 * WalSync, on real files: commits that ask while an fdatasync runs share the next one (never the one
 * already running), a commit held for the one under way runs when it ends and joins the next, and a
 * failure is final.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/domain/errors.js';
import { WalSync } from '../../src/store/sqlite/wal-sync.js';
import { scratchDir } from '../helpers.js';

/** Runs `body` with a WalSync on a WAL file of its own (closed by the body), then removes the file. */
async function withWal(body: (sync: WalSync) => Promise<void>): Promise<void> {
  const { dir, cleanup } = scratchDir();
  try {
    const wal = join(dir, 'x.db-wal');
    writeFileSync(wal, 'frames');
    await body(new WalSync(wal));
  } finally {
    cleanup();
  }
}

describe('WalSync', () => {
  it('releases each waiter by an fdatasync that started after it asked, sharing one among those that waited', () =>
    withWal(async (sync) => {
      // The first starts an fdatasync at once; the nine asking while it runs share the next one.
      await Promise.all(Array.from({ length: 10 }, () => sync.durable()));
      expect(sync.syncs).toBe(2);
      await sync.durable();
      expect(sync.syncs).toBe(3);
      await sync.close();
    }));

  it('fails every waiting and later write once an fdatasync could not be done', async () => {
    const { dir, cleanup } = scratchDir();
    try {
      const sync = new WalSync(join(dir, 'missing.db-wal'));
      const results = await Promise.allSettled([sync.durable(), sync.durable()]);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      }
      await expect(sync.durable()).rejects.toThrow(/could not make commits durable.*ENOENT/);
      expect(sync.syncs).toBe(0);
      await sync.close();
    } finally {
      cleanup();
    }
  });

  it('runs a commit held for the fdatasync under way when it ends, and joins what it asks for to the next one', () =>
    withWal(async (sync) => {
      expect(() => sync.beforeNext(() => {})).toThrow(/while an fdatasync runs/);
      const events: string[] = [];
      const first = sync.durable().then(() => events.push('first released'));
      expect(sync.busy).toBe(true);
      let held: Promise<unknown> | undefined;
      sync.beforeNext(() => {
        events.push(`held commit at ${sync.syncs} syncs`);
        held = sync.durable().then(() => events.push(`held released at ${sync.syncs} syncs`));
      });
      expect(() => sync.beforeNext(() => {})).toThrow(/only once/);
      await first;
      await held;
      // The held commit ran once the first fdatasync was done, before its waiter was released,
      // and was released by the second.
      expect(events).toEqual(['held commit at 1 syncs', 'first released', 'held released at 2 syncs']);
      await sync.close();
    }));

  it('close waits for a commit held for the fdatasync under way, and for the one it asks for', () =>
    withWal(async (sync) => {
      const first = sync.durable();
      let held: Promise<void> | undefined;
      // Asked a turn later, as a store's held commit does (after its transaction's own await).
      sync.beforeNext(() => {
        held = Promise.resolve().then(() => sync.durable());
      });
      await sync.close();
      expect(sync.syncs).toBe(2);
      await first;
      await held;
    }));

  it('close waits for the fdatasyncs under way', () =>
    withWal(async (sync) => {
      const pending = [sync.durable(), sync.durable()];
      await sync.close();
      expect(sync.syncs).toBe(2);
      await Promise.all(pending);
    }));
});
