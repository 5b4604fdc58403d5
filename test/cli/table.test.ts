/**
 * Human tables fit the width they are given: ids shortened first, then optional columns left out
 * (and named), then times shortened, and only then free text cut with an ellipsis.
 */
import { describe, expect, it } from 'vitest';
import { moreMayFollow, shortIds, table, wrap } from '../../src/cli/table.js';

const rows = [
  [
    'aud_01',
    'cli:ops',
    '{"url":"https://hooks.example.com/a/very/long/path/that/goes/on/and/on","events":["key.created"]}',
  ],
  ['aud_02', 'admin:ci', '{}'],
];
const ACC = 'acc_01m8ejmtx0000000000000000a';
const KEY = 'key_01m8jq95z5fsjcqmh9kv1nagjc';
const widest = (out: string) => Math.max(...out.split('\n').map((l) => l.length));

describe('table', () => {
  it('prints every cell whole when it fits', () => {
    const out = table(['id', 'actor', 'details'], rows, 500);
    expect(out).toContain(rows[0]![2]);
    expect(out).not.toContain('…');
  });

  it('fits the width, cutting the widest column with an ellipsis', () => {
    const out = table(['id', 'actor', 'details'], rows, 60);
    const lines = out.split('\n');
    expect(widest(out)).toBe(60);
    expect(lines[1]).toMatch(/^aud_01 {2}cli:ops {3}\{"url":"https:\/\/hooks.*…$/);
    // Short columns stay whole.
    expect(lines[2]).toBe('aud_02  admin:ci  {}');
  });

  it('shortens ids to their kind and tail before a name is cut, and only when it must', () => {
    const name = 'A rather long account name that goes on';
    expect(table(['id', 'name'], [[ACC, name]], 100).split('\n')[1]).toBe(`${ACC}  ${name}`);
    expect(table(['id', 'name'], [[ACC, name]], 52).split('\n')[1]).toBe(`acc_…00000a  ${name}`);
    const cut = table(['id', 'name'], [[ACC, name]], 40).split('\n')[1]!;
    expect(cut).toBe('acc_…00000a  A rather long account name…');
  });

  it('keeps the tail long enough to tell the ids of a column apart', () => {
    const twin = `${ACC.slice(0, -7)}1${ACC.slice(-6)}`;
    expect(shortIds([ACC, twin, '-', ACC])).toEqual(['acc_…000000a', 'acc_…100000a', '-', 'acc_…000000a']);
    // Stripe's ids too; what is not an id stays as it is.
    expect(shortIds(['price_1MoBy5LkdIwHu7ixZhnattbh', 'free', 'tg_…K4pw'])).toEqual([
      'price_…nattbh',
      'free',
      'tg_…K4pw',
    ]);
  });

  it('leaves out optional columns, rightmost first, before free text is cut short, and says so', () => {
    const head = ['id', 'name', { name: 'created', optional: true }, { name: 'users', optional: true }];
    const row = [ACC, 'Acme Corporation International Holdings', '2026-04-10T09:30:00Z', 3];
    const whole = table(head, [row], 100).split('\n');
    expect(whole[0]).toMatch(/^ID\s+NAME\s+CREATED\s+USERS$/);
    expect(whole[1]).toContain(ACC);
    // Users left out, then the time to the day: the name stays whole.
    expect(table(head, [row], 70).split('\n')).toEqual([
      `ID${' '.repeat(11)}NAME${' '.repeat(37)}CREATED`,
      'acc_…00000a  Acme Corporation International Holdings  2026-04-10',
      '',
      'Not shown in 70 columns: users (--json has it).',
    ]);
    expect(table(head, [row], 60)).toContain('Not shown in 60 columns: created, users (--json has them).');
  });

  it('shortens times to the minute, then to the day, never in the first column', () => {
    const head = ['at', 'name', 'due'];
    const row = ['2026-04-10T09:30:00Z', 'x'.repeat(30), '2026-04-11T10:45:12Z'];
    expect(table(head, [row], 71).split('\n')[1]).toBe(
      `2026-04-10T09:30:00Z  ${'x'.repeat(30)}  2026-04-11 10:45Z`,
    );
    expect(table(head, [row], 64).split('\n')[1]).toBe(`2026-04-10T09:30:00Z  ${'x'.repeat(30)}  2026-04-11`);
    const minute = table(['at', 'name', { name: 'due', toTheMinute: true }], [row], 64).split('\n')[1]!;
    expect(minute).toBe(`2026-04-10T09:30:00Z  ${'x'.repeat(22)}…  2026-04-11 10:45Z`);
  });

  it('cuts short columns last, never below their heading, and never the first column', () => {
    const row = ['suspended', 'the identifier of it, long enough'];
    expect(table(['status', 'identifier'], [row], 24).split('\n')[1]).toBe('suspended  the identifi…');
    // The first column names the row: never cut.
    expect(table(['identifier', 'status'], [[...row].reverse()], 10).split('\n')[1]).toBe(
      'the identifier of it, long enough  suspe…',
    );
  });

  it('keeps the case of headings people type (plan ids)', () => {
    expect(table(['limit', { name: 'subscription_27', keepCase: true }], [['a', 1]], 80).split('\n')[0]).toBe(
      'LIMIT  subscription_27',
    );
  });
});

describe('lines that fit', () => {
  it('wraps a sentence between words, or between the items given', () => {
    expect(wrap('one two three four', 9)).toBe('one two\nthree\nfour');
    expect(wrap(['Total:', '12 calls,', '3 failed.'], 16)).toBe('Total: 12 calls,\n3 failed.');
  });

  it('prints the next page on one line, or on lines a shell joins, each option with its value', () => {
    const command = `toolgate tokens ledger ${ACC} --after ${KEY}`;
    expect(moreMayFollow(command, 120)).toBe(`More may follow: ${command}`);
    expect(moreMayFollow(command, 100)).toBe(`More may follow:\n  ${command}`);
    expect(moreMayFollow(command, 80)).toBe(
      ['More may follow:', `  toolgate tokens ledger ${ACC} \\`, `    --after ${KEY}`].join('\n'),
    );
  });
});
