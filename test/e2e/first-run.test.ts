/**
 * The first start: the guide printed in plain lines on an empty database (the API key and its curl
 * line, the console with a sign-in link that signs the demo owner in, where mail goes, the admin
 * API), as real processes print it; and servers started together on an empty PostgreSQL database
 * create one demo account between them, trial after trial (each on a fresh schema), and only one of
 * them prints it. (The store's side, on both backends: test/store/first-account.test.ts.)
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { ConsoleClient, formWithButton, pageText } from '../console/console-client-helpers.js';
import { scratchDir } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore, scratchSchemaName } from '../postgres.js';
import { startServer } from './process.js';

/** The guide's lines: from "created a demo account" to the blank lines that end it. */
function guideOf(stdout: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.includes('created a demo account'));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.startsWith('Admin API:'));
  return lines.slice(start, end + 1);
}

describe('the first start on an empty database', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('prints the key with a curl line, the console with a link that signs the demo owner in, mail to the log, the admin API off', async () => {
    const env = { TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`, NODE_ENV: 'development' };
    const server = await startServer(env);
    const { url } = server;
    const guide = guideOf(server.stdout());
    const key = /^ {2}(tg_[0-9A-Za-z]{11})$/.exec(guide[2] ?? '')?.[1];
    expect(key).toBeDefined();
    expect(guide).toEqual([
      expect.stringMatching(
        /^toolgate: created a demo account \(acc_[0-9a-z]+\) on this empty database; its API key, shown only now:$/,
      ),
      '',
      `  ${key}`,
      '',
      'Try the API:',
      '',
      `  curl -s -X POST ${url}/api/v1/tools/get_account \\`,
      `    -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{}'`,
      '',
      `Console:    ${url}/console/`,
      "            Sign in as the demo account's owner, owner@example.com (this link works once, within 15 minutes):",
      expect.stringMatching(new RegExp(`^ {12}${url}/console/auth\\?token=[A-Za-z0-9_-]{43}$`)),
      '            Another link later: npx toolgate console link owner@example.com',
      "Mail:       to the server's log (set TOOLGATE_SMTP_URL to send it)",
      'Admin API:  off (set TOOLGATE_ADMIN_TOKEN, 16 characters or more, to turn it on; the CLI works on the database meanwhile)',
    ]);
    // Plain lines, not a log line: nothing of the guide is JSON.
    expect(guide.some((l) => l.includes('{"'))).toBe(false);
    try {
      expect((await callTool(url, key!, 'get_account', {})).data.results).toMatchObject({
        name: 'Demo account',
        api_key_count: 1,
        user_count: 1,
      });
      // The link signs the demo owner in, into the demo account.
      const browser = new ConsoleClient(url);
      const landing = await browser.get(guide[11]!.trim());
      const home = await browser.submit(formWithButton(landing, 'Sign in'));
      expect(home.status).toBe(200);
      expect(new URL(home.url).pathname).toMatch(/^\/console\/a\/acc_[0-9a-z]+\/$/);
      expect(pageText(home.body)).toContain('Demo account');
      expect(pageText(home.body)).toContain('owner@example.com');
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // Once only: a second start on the same database prints no guide.
    const again = await startServer(env);
    expect(again.stdout()).not.toContain('created a demo account');
    expect(await again.stop()).toBe(0);
  });

  it('names the SMTP server without its password, the admin API tokens, and a console turned off', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      NODE_ENV: 'development',
      TOOLGATE_SMTP_URL: 'smtp://mailer:smtp-password-42@127.0.0.1:2525',
      TOOLGATE_ADMIN_TOKEN: 'ops:ops-token-0123456789abcdef,ci:ci-token-0123456789abcdef',
      TOOLGATE_CONSOLE: 'off',
    });
    try {
      const guide = guideOf(server.stdout());
      expect(guide.slice(9)).toEqual([
        'Console:    off: TOOLGATE_CONSOLE=off',
        'Mail:       through smtp://mailer:***@127.0.0.1:2525',
        `Admin API:  on at ${server.url}/admin/v1 (tokens: ops, ci)`,
      ]);
      expect(server.stdout()).not.toContain('smtp-password-42');
      expect(server.stdout()).not.toContain('token-0123456789abcdef');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

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
      const printing = servers.filter((s) => s.stdout().includes('created a demo account'));
      printed.push(printing.length);
      // No TOOLGATE_PUBLIC_URL on PostgreSQL: the guide says why the console is off, every server warns.
      for (const s of printing)
        expect(guideOf(s.stdout())).toContain(
          'Console:    off: TOOLGATE_PUBLIC_URL is not set, and on PostgreSQL it must name the one address every server is reached at (for example https://tools.example.com)',
        );
      for (const s of servers)
        expect(s.stdout()).toContain(
          '"msg":"the console and OAuth are off: TOOLGATE_PUBLIC_URL is not set, and on PostgreSQL it must name',
        );
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
