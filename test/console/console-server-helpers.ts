/**
 * @module A real toolgate server process for the console's tests (dist/main.js, as `npm start`
 * runs it) on SQLite or a scratch PostgreSQL schema, mailing through a test's SMTP sink, plus the
 * admin API calls the tests set accounts up with.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { callTool as call } from '../calls.js';
import { adminCall, E2E_ADMIN_TOKEN } from '../e2e/admin-client.js';
import { type ServerProcess, startServer } from '../e2e/process.js';
import { scratchDir } from '../helpers.js';
import { POSTGRES_URL, scratchPostgresStore, scratchSchemaName } from '../postgres.js';

export type Backend = 'sqlite' | 'postgres';

export interface ConsoleServer {
  server: ServerProcess;
  url: string;
  stop(): Promise<void>;
}

/** A TCP port free a moment ago: the public URL must name the port before the server listens. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** toolgate on `backend` with its console on, mailing through `smtpUrl`. */
export async function startConsoleServer(
  backend: Backend,
  smtpUrl: string,
  env: Record<string, string> = {},
): Promise<ConsoleServer> {
  const { dir, cleanup } = scratchDir();
  const schema = scratchSchemaName();
  const database: Record<string, string> =
    backend === 'sqlite'
      ? { TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}` }
      : {
          TOOLGATE_DATABASE_URL: POSTGRES_URL,
          TOOLGATE_DATABASE_SCHEMA: schema,
          TOOLGATE_KEY_SECRET: 'console-key-secret-0123456789abcdef0123456789',
        };
  const port = await freePort();
  const server = await startServer({
    ...database,
    PORT: String(port),
    // On PostgreSQL the console is on only with one public address (TOOLGATE_PUBLIC_URL) to name.
    ...(backend === 'postgres' ? { TOOLGATE_PUBLIC_URL: `http://127.0.0.1:${port}` } : {}),
    TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
    TOOLGATE_SMTP_URL: smtpUrl,
    TOOLGATE_SMTP_FROM: 'toolgate <console@toolgate.test>',
    // No demo account: the tests' accounts are the only ones.
    NODE_ENV: 'production',
    ...env,
  });
  return {
    server,
    url: server.url,
    async stop() {
      await server.stop();
      if (backend === 'postgres') await scratchPostgresStore(schema).cleanup();
      cleanup();
    },
  };
}

async function admin(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await adminCall(url, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** An account (`tokens` granted) with an owner `email`, through the admin API; its id. */
export async function accountWithOwner(
  url: string,
  input: { name: string; email: string; tokens?: number; plan?: string },
): Promise<{ accountId: string; userId: string }> {
  const account = await admin(url, 'POST', '/accounts', {
    name: input.name,
    tokens: input.tokens ?? 500,
    ...(input.plan ? { plan: input.plan } : {}),
  });
  const user = await admin(url, 'POST', `/accounts/${account.id}/users`, {
    email: input.email,
    role: 'owner',
  });
  return { accountId: account.id, userId: user.id };
}

/** A key for the account through the admin API: its id and the full key. */
export async function adminKey(
  url: string,
  accountId: string,
  name = 'admin-made',
): Promise<{ id: string; key: string }> {
  const key = await admin(url, 'POST', `/accounts/${accountId}/keys`, { name });
  return { id: key.id, key: key.key };
}

/** Records a consumption through the admin usage endpoint. */
export function consume(url: string, accountId: string, body: Record<string, unknown>): Promise<any> {
  return admin(url, 'POST', `/accounts/${accountId}/usage`, body);
}

/** The account's usage history by day over [from, to] (admin API: what `toolgate usage report` prints). */
export function usageHistory(
  url: string,
  accountId: string,
  from: string,
  to: string,
  by = 'day',
): Promise<any> {
  return admin(url, 'GET', `/accounts/${accountId}/usage/history?from=${from}&to=${to}&by=${by}`);
}

/** `POST /api/v1/tools/<tool>` with a key: status and parsed body. */
export async function callTool(
  url: string,
  key: string,
  tool: string,
  body: unknown = {},
): Promise<{ status: number; body: any }> {
  const res = await call(url, key, tool, body);
  return { status: res.status, body: res.data };
}

export { adminCall, E2E_ADMIN_TOKEN };
