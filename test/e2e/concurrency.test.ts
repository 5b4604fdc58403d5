import { join } from 'node:path';
import { describe } from 'vitest';
import { scratchDir } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';
import { multiServerSuite } from './multi-server.js';

multiServerSuite('SQLite', async () => {
  const { dir, cleanup } = scratchDir();
  return { env: { TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}` }, cleanup };
});

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL', () => {
  multiServerSuite('PostgreSQL', async () => {
    const schema = scratchSchemaName();
    return {
      env: {
        TOOLGATE_DATABASE_URL: POSTGRES_URL,
        TOOLGATE_DATABASE_SCHEMA: schema,
        // 300 requests at once queue for the pool's 10 connections; on a busy 2-core machine that
        // wait can pass the default 5 s bound, which would (rightly) answer 503.
        TOOLGATE_DATABASE_TIMEOUT_MS: '30000',
        TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      },
      async cleanup() {
        const { scratchPostgresStore } = await import('../postgres.js');
        await scratchPostgresStore(schema).cleanup();
      },
    };
  });
});
