/**
 * The SQLite database, its -wal and -shm files and the key secret beside them are private to the
 * user toolgate runs as (0600), whatever the umask, new or left readable by others.
 */
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { resolveKeySecrets } from '../../src/key-secret.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { scratchDir, T0 } from '../helpers.js';

const FILES = ['toolgate.db', 'toolgate.db-wal', 'toolgate.db-shm'];
const mode = (path: string) => (existsSync(path) ? (statSync(path).mode & 0o777).toString(8) : 'absent');

describe('SQLite files', () => {
  const cleanups: (() => void)[] = [];
  let umask: number;
  beforeEach(() => {
    umask = process.umask();
  });
  afterEach(() => {
    process.umask(umask);
    for (const c of cleanups.splice(0)) c();
  });

  /** A new directory's database, opened and written to (so the WAL and shared memory exist). */
  async function written(): Promise<{ dir: string; store: SqliteStore }> {
    const { dir, cleanup } = scratchDir();
    cleanups.push(cleanup);
    const store = new SqliteStore({ path: join(dir, 'toolgate.db') });
    await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
    return { dir, store };
  }

  it('are created 0600, whatever the umask', async () => {
    for (const mask of [0o022, 0o002, 0o000, 0o077]) {
      process.umask(mask);
      const { dir, store } = await written();
      expect(
        FILES.map((f) => mode(join(dir, f))),
        `umask ${mask.toString(8)}`,
      ).toEqual(['600', '600', '600']);
      await store.close();
    }
  });

  it('left readable by others are made 0600 when opened, and nothing else is touched', async () => {
    process.umask(0o022);
    const { dir, store } = await written();
    // The store still open, so its -wal and -shm stay; all three opened up, as an older version left them.
    for (const f of FILES) chmodSync(join(dir, f), 0o644);
    writeFileSync(join(dir, 'unrelated.txt'), 'x', { mode: 0o644 });
    const again = new SqliteStore({ path: join(dir, 'toolgate.db') });
    expect(FILES.map((f) => mode(join(dir, f)))).toEqual(['600', '600', '600']);
    expect(mode(join(dir, 'unrelated.txt'))).toBe('644');
    await again.close();
    await store.close();
  });

  it('holds the generated key secret beside them 0600 too, and makes one left readable 0600', () => {
    const { dir, cleanup } = scratchDir();
    cleanups.push(cleanup);
    const config = loadConfig({ TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}` });
    process.umask(0o000);
    const [secret] = resolveKeySecrets(config);
    expect(mode(join(dir, 'key-secret'))).toBe('600');
    chmodSync(join(dir, 'key-secret'), 0o644);
    expect(resolveKeySecrets(config)).toEqual([secret]);
    expect(mode(join(dir, 'key-secret'))).toBe('600');
  });
});
