/**
 * WalSync, on real files: commits that ask while an fdatasync runs share the next one (never the one
 * already running), and a failure is final.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/domain/errors.js';
import { WalSync } from '../../src/store/sqlite/wal-sync.js';
import { scratchDir } from '../helpers.js';

describe('WalSync', () => {
  it('releases each waiter by an fdatasync that started after it asked, sharing one among those that waited', async () => {
    const { dir, cleanup } = scratchDir();
    try {
      const wal = join(dir, 'x.db-wal');
      writeFileSync(wal, 'frames');
      const sync = new WalSync(wal);
      // The first starts an fdatasync at once; the nine asking while it runs share the next one.
      await Promise.all(Array.from({ length: 10 }, () => sync.durable()));
      expect(sync.syncs).toBe(2);
      await sync.durable();
      expect(sync.syncs).toBe(3);
      await sync.close();
    } finally {
      cleanup();
    }
  });

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

  it('close waits for the fdatasyncs under way', async () => {
    const { dir, cleanup } = scratchDir();
    try {
      const wal = join(dir, 'x.db-wal');
      writeFileSync(wal, 'frames');
      const sync = new WalSync(wal);
      const pending = [sync.durable(), sync.durable()];
      await sync.close();
      expect(sync.syncs).toBe(2);
      await Promise.all(pending);
    } finally {
      cleanup();
    }
  });
});
