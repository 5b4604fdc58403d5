/**
 * Stored strings that would drive a terminal (escape sequences, carriage returns, bells, C1
 * controls, bidi overrides) reach people's screens escaped, from every command that prints them,
 * while --json keeps them exact. The CLI runs as a process on a scratch SQLite database.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type Scratch, scratch } from './run-cli.js';

/** Clears the screen, retitles the window, rings, returns to column 0, colours (C1 CSI), reverses the line. */
const HOSTILE = 'A\u001b[2J\u001b]0;pwned\u0007B\rC\u009b31mD\u202eE\u2066F\u007fG\tH\nI\u2028J';
/** The same, as people see it: every control written as an escape, one line. */
const SHOWN = 'A\\x1b[2J\\x1b]0;pwned\\x07B\\rC\\x9b31mD\\u202eE\\u2066F\\x7fG\\tH\\nI\\u2028J';
/** An email the domain accepts (no white space), with an escape, a C1 CSI and a bidi override. */
const EMAIL = 'x\u001b[31m\u009b1m\u202ey@example.com';
const EMAIL_SHOWN = 'x\\x1b[31m\\x9b1m\\u202ey@example.com';
const URL_HOSTILE = 'http://127.0.0.1:9/p\u001b[31m\u009bq\u202e';
const URL_SHOWN = 'http://127.0.0.1:9/p\\x1b[31m\\x9bq\\u202e';

/** Any character a terminal acts on rather than prints. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** The output without the newlines between its lines. */
const joined = (out: string) => out.replaceAll('\n', '');

let t: Scratch;
let accountId: string;

beforeAll(async () => {
  // Wide enough for every cell whole: these tests are about escaping, not about fitting (table.test.ts).
  t = scratch({ COLUMNS: '1000' });
  accountId = (await t.json('accounts', 'create', '--name', HOSTILE)).id;
  await t.json('keys', 'create', accountId, '--name', HOSTILE);
  await t.json('users', 'add', accountId, '--email', EMAIL);
  await t.json('tokens', 'grant', accountId, '5', '--reason', HOSTILE);
  const catalogue = join(t.dir, 'catalogue.json');
  writeFileSync(
    catalogue,
    JSON.stringify({ tools: [{ name: 'evil_tool', description: HOSTILE, upstream: { url: URL_HOSTILE } }] }),
  );
  await t.json('tools', 'import', catalogue);
}, 60_000);
afterAll(() => t.cleanup());

function expectSafe(r: CliResult, what: string): void {
  expect(r.code, `${what}: ${r.stderr}`).toBe(0);
  expect(joined(r.stdout), what).not.toMatch(CONTROL);
  expect(joined(r.stderr), what).not.toMatch(CONTROL);
}

describe('human output escapes control characters from stored strings', () => {
  const cases: Array<[string, () => string[], string[]]> = [
    ['accounts list', () => ['accounts', 'list'], [SHOWN]],
    ['accounts show', () => ['accounts', 'show', accountId], [SHOWN]],
    ['keys list', () => ['keys', 'list', accountId], [SHOWN]],
    ['users list', () => ['users', 'list', accountId], [EMAIL_SHOWN]],
    // A description's lines go on under the value column; each is escaped.
    ['tools show', () => ['tools', 'show', 'evil_tool'], [...SHOWN.split('\\n'), URL_SHOWN]],
    ['tokens ledger', () => ['tokens', 'ledger', accountId], [SHOWN]],
  ];
  it.each(cases)('%s', async (what, args, shown) => {
    const r = await t.run(...args());
    expectSafe(r, what);
    for (const s of shown) expect(r.stdout, what).toContain(s);
  });

  it('tables stay one line per row, whatever a cell holds', async () => {
    const r = await t.run('accounts', 'list');
    // The header and the one account.
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('sentences that name a stored string escape it too', async () => {
    for (const args of [
      ['keys', 'create', accountId, '--name', HOSTILE],
      ['users', 'add', accountId, '--email', `2${EMAIL}`],
      ['tokens', 'grant', accountId, '1', '--reason', HOSTILE],
      ['accounts', 'update', accountId, '--name', HOSTILE],
      ['tools', 'list'],
    ])
      expectSafe(await t.run(...args), args.slice(0, 2).join(' '));
  });

  it('a refusal naming what it read escapes it on stderr', async () => {
    const catalogue = join(t.dir, 'bad-catalogue.json');
    const tool = { name: 'bad_tool', upstream: { url: 'http://127.0.0.1:9/', headers: { [HOSTILE]: 'x' } } };
    writeFileSync(catalogue, JSON.stringify({ tools: [tool] }));
    const r = await t.run('tools', 'import', catalogue);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(SHOWN);
    expect(joined(r.stderr)).not.toMatch(CONTROL);
  });
});

describe('--json keeps every stored string exact', () => {
  it('in each command the human output escapes', async () => {
    const [account] = await t.json<Array<{ name: string }>>('accounts', 'list');
    expect(account?.name).toBe(HOSTILE);
    expect((await t.json('accounts', 'show', accountId)).name).toBe(HOSTILE);
    expect((await t.json<Array<{ name: string }>>('keys', 'list', accountId))[0]?.name).toBe(HOSTILE);
    expect((await t.json<Array<{ email: string }>>('users', 'list', accountId))[0]?.email).toBe(EMAIL);
    const tool = await t.json('tools', 'show', 'evil_tool');
    expect([tool.description, tool.upstream.url]).toEqual([HOSTILE, URL_HOSTILE]);
    const [entry] = await t.json<Array<{ reason: string }>>('tokens', 'ledger', accountId);
    expect(entry?.reason).toBe(HOSTILE);
  });
});
