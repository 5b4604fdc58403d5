/**
 * The PostgreSQL the tests use: TOOLGATE_TEST_POSTGRES_URL, by default the local server. When it
 * does not answer, PostgreSQL tests are skipped with a loud notice, unless
 * TOOLGATE_REQUIRE_POSTGRES=1 (CI), in which case they fail.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';

export const POSTGRES_URL =
  process.env.TOOLGATE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRED = process.env.TOOLGATE_REQUIRE_POSTGRES === '1';

let probe: Promise<boolean> | undefined;

/** Whether PostgreSQL answers; prints the notice (or throws, when required) once per test file. */
export function postgresAvailable(): Promise<boolean> {
  probe ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (REQUIRED)
        throw new Error(
          `TOOLGATE_REQUIRE_POSTGRES=1 but PostgreSQL at ${redactUrl(POSTGRES_URL)} does not answer: ${why}`,
        );
      process.stderr.write(
        `\n${'!'.repeat(78)}\n!! PostgreSQL at ${redactUrl(POSTGRES_URL)} does not answer (${why}).\n!! The PostgreSQL tests are SKIPPED. Set TOOLGATE_TEST_POSTGRES_URL, or TOOLGATE_REQUIRE_POSTGRES=1 to fail instead.\n${'!'.repeat(78)}\n\n`,
      );
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return probe;
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

export function scratchSchemaName(): string {
  return `tg_test_${randomBytes(6).toString('hex')}`;
}

/** A PostgresStore in a fresh scratch schema; cleanup drops the schema. */
export function scratchPostgresStore(schema = scratchSchemaName()): {
  store: PostgresStore;
  schema: string;
  cleanup: () => Promise<void>;
} {
  const store = new PostgresStore({ url: POSTGRES_URL, schema });
  return {
    store,
    schema,
    async cleanup() {
      await store.dropSchema().catch(() => {});
      await store.close();
    },
  };
}
