/** Human tables fit the width they are given: the widest columns give way, cut with an ellipsis. */
import { describe, expect, it } from 'vitest';
import { table } from '../../src/cli/output.js';

const rows = [
  [
    'aud_01',
    'cli:ops',
    '{"url":"https://hooks.example.com/a/very/long/path/that/goes/on/and/on","events":["key.created"]}',
  ],
  ['aud_02', 'admin:ci', '{}'],
];

describe('table', () => {
  it('prints every cell whole when it fits', () => {
    const out = table(['id', 'actor', 'details'], rows, 500);
    expect(out).toContain(rows[0]![2]);
    expect(out).not.toContain('…');
  });

  it('fits the width, cutting the widest column with an ellipsis', () => {
    const out = table(['id', 'actor', 'details'], rows, 60);
    const lines = out.split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBe(60);
    expect(lines[1]).toMatch(/^aud_01 {2}cli:ops {3}\{"url":"https:\/\/hooks.*…$/);
    // Short columns stay whole.
    expect(lines[2]).toBe('aud_02  admin:ci  {}');
  });

  it('keeps ids whole while free text can give way', () => {
    const id = 'acc_01m8ejmtx0000000000000000a';
    const out = table(['id', 'name'], [[id, 'A rather long account name that goes on']], 50);
    const line = out.split('\n')[1]!;
    expect(line).toHaveLength(50);
    expect(line).toMatch(new RegExp(`^${id} {2}A rather long .*…$`));
  });

  it('cuts short columns last, never below their heading, and never the first column', () => {
    const row = ['acc_0123456789abcdef0123456789', 'suspended'];
    expect(table(['status', 'identifier'], [[...row].reverse()], 24).split('\n')[1]).toBe(
      'suspended  acc_01234567…',
    );
    // The first column names the row: never cut.
    expect(table(['identifier', 'status'], [row], 10).split('\n')[1]).toBe(
      'acc_0123456789abcdef0123456789  suspe…',
    );
  });
});
