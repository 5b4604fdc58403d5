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
