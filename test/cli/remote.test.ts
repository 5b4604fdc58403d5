/**
 * Every CLI command in both modes, compared: on the database (as always) and through a real server's
 * admin API (`--url`, TOOLGATE_ADMIN_TOKEN), the server process on the same SQLite file. Reads must
 * print the very same bytes and exit the same; writes the same once their new ids and times are
 * masked; every failure the same code, message and exit code, for people and with --json.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer } from '../e2e/process.js';
import { type CliResult, type Scratch, scratch } from './run-cli.js';

const TOKEN = 'remote-cli-admin-token-0123456789';
let t: Scratch;
let server: ServerProcess;

beforeAll(async () => {
  t = scratch({
    TOOLGATE_ADMIN_TOKEN: TOKEN,
    TOOLGATE_KEY_SECRET: 'remote-cli-key-secret-0123456789abcdef',
    TOOLGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
    // Every cell whole, so that twins compare once masked (fitting the terminal is table.test.ts's).
    COLUMNS: '1000',
  });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(t.env)) if (k.startsWith('TOOLGATE_') && v) env[k] = v;
  server = await startServer(env);
});
afterAll(async () => {
  await server?.stop();
  t?.cleanup();
});

/** Masks what differs between two runs of the same write: new ids, keys, secrets, times, revisions. */
const mask = (text: string) =>
  text
    .replace(/\b(acc|key|usr|led|whe|whd|aud|msg)_[0-9a-z]{26}\b/g, '$1_<id>')
    .replace(/\btg_[A-Za-z0-9]{11}\b/g, 'tg_<key>')
    .replace(/\btg_…[A-Za-z0-9]{4}\b/g, 'tg_…<hint>')
    .replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_<secret>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>')
    // The catalogue's revision counts every change, the resets between the runs included.
    .replace(/revision \d+/g, 'revision <n>')
    .replace(/"revision": \d+/g, '"revision": <n>')
    .replace(/ +$/gm, '');

type Mode = 'db' | 'api';
/** An argument, or one per mode (the twin that mode made: each write is made by both, on twins). */
type Arg = string | Record<Mode, string>;

const argv = (mode: Mode, args: Arg[]) => args.map((a) => (typeof a === 'string' ? a : a[mode]));
const serverFlag = (args: string[]) => (args[0] === 'webhooks' && args[1] === 'add' ? '--server' : '--url');
const run = (mode: Mode, args: Arg[], extra: string[]) => {
  const a = [...argv(mode, args), ...extra];
  return mode === 'db' ? t.run(...a) : t.run(...a, serverFlag(a), server.url);
};

/**
 * Runs the command both ways, for people and then with --json; both answers must agree (masked
 * when `masked`). `between` runs on the database before each run, to start each from the same state.
 */
async function both(masked: boolean, args: Arg[], between: string[] = []): Promise<Record<Mode, CliResult>> {
  let last: Record<Mode, CliResult> | undefined;
  for (const extra of [[], ['--json']]) {
    const answers = {} as Record<Mode, CliResult>;
    for (const mode of ['db', 'api'] as const) {
      if (between.length > 0) await t.run(...between);
      answers[mode] = await run(mode, args, extra);
    }
    const view = (r: CliResult) => ({
      code: r.code,
      stdout: masked ? mask(r.stdout) : r.stdout,
      stderr: masked ? mask(r.stderr) : r.stderr,
    });
    expect(view(answers.api), `toolgate ${argv('db', args).join(' ')} ${extra.join(' ')}`).toEqual(
      view(answers.db),
    );
    last = answers;
  }
  return last!;
}

/** A port nothing listens on: one the system gave out, closed again. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const idOf = (r: CliResult) => JSON.parse(r.stdout).id as string;
const twins = (r: Record<Mode, CliResult>) => ({ db: idOf(r.db), api: idOf(r.api) });

// Some sixty CLI processes: minutes on a loaded machine.
describe('every command, on the database and through the admin API', { timeout: 300_000 }, () => {
  let account: Record<Mode, string>;

  it('accounts: create, show, update, list', async () => {
    account = twins(await both(true, ['accounts', 'create', '--name', 'Acme', '--tokens', '50']));
    await both(true, ['accounts', 'show', account]);
    await both(false, ['accounts', 'show', account.db]);
    await both(true, ['accounts', 'update', account, '--low-balance', '10']);
    await both(false, ['accounts', 'list', '--limit', '2']);
    await both(false, ['accounts', 'list', '--after', account.db]);
  });

  it('keys and users: create or add, list, revoke or remove', async () => {
    const key = twins(await both(true, ['keys', 'create', account, '--name', 'ci']));
    await both(true, ['keys', 'list', account]);
    await both(true, ['keys', 'list', account, '--limit', '1']);
    await both(true, ['keys', 'revoke', key]);
    const user = twins(await both(true, ['users', 'add', account, '--email', 'a@example.com']));
    await both(true, ['users', 'list', account]);
    // The account's only owner: made one, then refused as a member, then a role that is not one.
    await both(true, ['users', 'role', user, 'owner']);
    await both(true, ['users', 'role', user, 'member']);
    await both(true, ['users', 'role', user, 'admin']);
    await both(false, ['users', 'role', 'usr_nope', 'owner']);
    await both(true, ['users', 'remove', user]);
  });

  it('tokens and usage: grant, charge, adjust, ledger, record, report', async () => {
    await both(true, ['tokens', 'grant', account, '5', '--reason', 'welcome']);
    await both(true, ['tokens', 'charge', account, '2']);
    await both(true, ['tokens', 'adjust', account, '-1']);
    await both(true, ['tokens', 'ledger', account]);
    await both(true, ['tokens', 'charge', account, '1000000']);
    await both(true, ['usage', 'record', account, '--category', 'enrich', '--records', '3']);
    await both(true, ['usage', 'report', account, '--by', 'day']);
    await both(false, ['usage', 'report', account.db, '--from', '2026-13-01']);
  });

  it('plans and tools: list, set, import, show, remove', async () => {
    await both(false, ['plans', 'list']);
    await both(false, ['plans', 'set', 'free', 'enrich.records.5h=120']);
    await both(false, ['plans', 'set', 'free', 'enrich.records.5x=1']);
    const file = join(t.dir, 'catalogue.json');
    writeFileSync(
      file,
      JSON.stringify({
        tools: [
          {
            name: 'lookup',
            description: 'Look something up',
            input_schema: { type: 'object' },
            upstream: { url: 'http://127.0.0.1:9/lookup' },
          },
        ],
      }),
    );
    await both(false, ['tools', 'import', file, '--dry-run']);
    // Each import starts from a catalogue without the tool: both say "created".
    await both(true, ['tools', 'import', file], ['tools', 'remove', 'lookup']);
    await both(false, ['tools', 'list']);
    await both(false, ['tools', 'show', 'lookup']);
    writeFileSync(join(t.dir, 'bad.json'), JSON.stringify({ tools: [{ name: 'x' }] }));
    await both(false, ['tools', 'import', join(t.dir, 'bad.json')]);
    await both(false, ['tools', 'remove', 'nope']);
  });

  it('webhooks and audit: add, list, deliveries, replay, remove; the trail', async () => {
    const endpoint = twins(
      await both(true, ['webhooks', 'add', '--url', 'http://127.0.0.1:9/hooks', '--account', account]),
    );
    await both(true, ['webhooks', 'list', '--account', account]);
    await both(true, ['webhooks', 'deliveries', endpoint]);
    await both(false, ['webhooks', 'replay', 'whd_nope']);
    await both(true, ['webhooks', 'remove', endpoint]);
    await both(false, ['audit', 'list', '--account', account.db, '--limit', '3']);
  });

  it('refuses the same way: unknown ids, bad values', async () => {
    await both(false, ['accounts', 'show', 'acc_nope']);
    await both(false, ['keys', 'revoke', 'key_nope']);
    await both(false, ['accounts', 'update', account.db, '--plan', 'nope']);
    await both(false, ['audit', 'list', '--account', 'acc_nope']);
  });
});

describe('the remote mode on its own', () => {
  it('takes TOOLGATE_URL for --url', async () => {
    const viaEnv = await t.run('accounts', 'list', '--json');
    const r = await new Promise<CliResult>((resolve) =>
      import('./run-cli.js').then(({ runCli }) =>
        runCli(
          { ...t.env, TOOLGATE_DATABASE_URL: 'sqlite:/nonexistent/dir/t.db', TOOLGATE_URL: server.url },
          ['accounts', 'list', '--json'],
        ).then(resolve),
      ),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(viaEnv.stdout);
  });

  it('names the server it could not reach, and a missing or wrong admin token', async () => {
    const down = await t.run('accounts', 'list', '--url', `http://127.0.0.1:${await closedPort()}`);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /Could not reach http:\/\/127\.0\.0\.1:\d+\/admin\/v1\/accounts.*ECONNREFUSED/,
    );
    const { runCli } = await import('./run-cli.js');
    const none = await runCli({ ...t.env, TOOLGATE_ADMIN_TOKEN: '' }, [
      'accounts',
      'list',
      '--url',
      server.url,
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/TOOLGATE_ADMIN_TOKEN must be set/);
    const wrong = await runCli({ ...t.env, TOOLGATE_ADMIN_TOKEN: 'not-the-token-0123456789' }, [
      'accounts',
      'list',
      '--url',
      server.url,
      '--json',
    ]);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout)).toMatchObject({ code: 'invalid_admin_token' });
  });

  it('refuses a --url that is not http(s)', async () => {
    const r = await t.run('accounts', 'list', '--url', 'ftp://example.com');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--url must be an http\(s\) URL/);
  });
});
