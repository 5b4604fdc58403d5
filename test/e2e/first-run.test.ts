/**
 * The first-run demo account: servers started together on an empty PostgreSQL database create one
 * between them, trial after trial (each on a fresh schema), and only one of them prints its key.
 * (The store's side, on both backends: test/store/first-account.test.ts.)
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { startServer } from './process.js';

const available = await postgresAvailable();
const TRIALS = 6;
const SERVERS = 3;

interface Trial {
  env: Record<string, string>;
  accounts(): Promise<number>;
  cleanup(): Promise<void>;
}

/** Starts SERVERS servers at once on each trial's empty database; the accounts and printed keys of each. */
async function trials(fresh: () => Promise<Trial>): Promise<{ accounts: number[]; printed: number[] }> {
  const accounts: number[] = [];
  const printed: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const trial = await fresh();
    const env = {
      ...trial.env,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      NODE_ENV: 'development',
    };
    const started = await Promise.allSettled(Array.from({ length: SERVERS }, () => startServer(env)));
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      expect(started.filter((s) => s.status === 'rejected')).toEqual([]);
      accounts.push(await trial.accounts());
      printed.push(servers.filter((s) => s.stdout().includes('created a demo account')).length);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await trial.cleanup();
    }
  }
  return { accounts, printed };
}

describe('servers starting together on an empty database', () => {
  it.skipIf(!available)(
    `create one demo account between them on PostgreSQL (${TRIALS} trials of ${SERVERS} servers)`,
    { timeout: 120_000 },
    async () => {
      const db = new pg.Client({ connectionString: POSTGRES_URL });
      await db.connect();
      try {
        const seen = await trials(async () => {
          const schema = scratchSchemaName();
          return {
            env: { TOOLGATE_DATABASE_URL: POSTGRES_URL, TOOLGATE_DATABASE_SCHEMA: schema },
            accounts: async () =>
              (await db.query(`SELECT count(*)::int AS n FROM ${schema}.accounts`)).rows[0].n,
            cleanup: () => scratchPostgresStore(schema).cleanup(),
          };
        });
        console.log(`PostgreSQL: demo accounts per trial ${seen.accounts}; keys printed ${seen.printed}`);
        expect(seen).toEqual({ accounts: Array(TRIALS).fill(1), printed: Array(TRIALS).fill(1) });
      } finally {
        await db.end();
      }
    },
  );
});
