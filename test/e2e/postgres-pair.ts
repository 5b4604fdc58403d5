/**
 * Two real server processes on one scratch PostgreSQL schema, started before a describe block's
 * tests and stopped (the schema dropped) after them: for the end-to-end tests across servers.
 */
import { afterAll, beforeAll } from 'vitest';
import { POSTGRES_URL, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { E2E_ADMIN_TOKEN } from './admin-client.js';
import { type ServerProcess, startServer } from './process.js';

export interface ServerPair {
  readonly a: ServerProcess;
  readonly b: ServerProcess;
  readonly schema: string;
}

/** Call inside a describe block; `env` is added to every server's environment. */
export function postgresPair(env: Record<string, string> = {}): ServerPair {
  const schema = scratchSchemaName();
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  beforeAll(async () => {
    const all = {
      TOOLGATE_DATABASE_URL: POSTGRES_URL,
      TOOLGATE_DATABASE_SCHEMA: schema,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      TOOLGATE_KEY_SECRET: 'e2e-key-secret-0123456789abcdef0123456789',
      NODE_ENV: 'production',
      ...env,
    };
    a = await startServer(all);
    b = await startServer(all);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await scratchPostgresStore(schema).cleanup();
  });
  return {
    get a() {
      if (!a) throw new Error('the servers are not started yet');
      return a;
    },
    get b() {
      if (!b) throw new Error('the servers are not started yet');
      return b;
    },
    schema,
  };
}
