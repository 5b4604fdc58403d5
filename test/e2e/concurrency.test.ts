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
        TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      },
      async cleanup() {
        const { scratchPostgresStore } = await import('../postgres.js');
        await scratchPostgresStore(schema).cleanup();
      },
    };
  });
});
