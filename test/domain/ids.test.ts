import { describe, expect, it } from 'vitest';
import { isId, newId } from '../../src/domain/ids.js';

describe('ids', () => {
  it('carry their type prefix and sort in the order they were made', () => {
    const a = newId('acc', 1_000);
    const b = newId('acc', 2_000);
    expect(isId('acc', a)).toBe(true);
    expect(isId('key', a)).toBe(false);
    expect(a < b).toBe(true);
  });

  it('encode the millisecond they were made in, also after ids of an earlier one', () => {
    // Crockford base32 of the time, 10 characters: what the first part of the id must say.
    const time = (ms: number) => {
      let out = '';
      for (let v = ms, i = 0; i < 10; i++, v = Math.floor(v / 32))
        out = '0123456789abcdefghjkmnpqrstvwxyz'[v % 32] + out;
      return out;
    };
    const t = 1_800_000_000_000;
    for (const ms of [t, t, t + 1, t + 1, t + 1_000]) expect(newId('req', ms).slice(4, 14)).toBe(time(ms));
  });

  it('count up by exactly one in their 80 random bits within a millisecond', () => {
    const value = (id: string) =>
      [...id.slice(14)].reduce((n, c) => n * 32n + BigInt('0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c)), 0n);
    const ids = Array.from({ length: 300 }, () => newId('req', 1_800_000_000_123));
    for (let i = 1; i < ids.length; i++)
      expect(value(ids[i] as string)).toBe(value(ids[i - 1] as string) + 1n);
    expect(value(ids[0] as string) < 2n ** 80n).toBe(true);
  });

  it('are unique for the same millisecond', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('req', 5)));
    expect(ids.size).toBe(1000);
  });
});

describe('ids under a clock that stands still', () => {
  it('still sort in the order they were made', () => {
    const ids = Array.from({ length: 500 }, () => newId('led', 42_000));
    expect([...ids].sort()).toEqual(ids);
  });
});
