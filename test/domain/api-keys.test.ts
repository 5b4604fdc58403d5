import { describe, expect, it } from 'vitest';
import { digestKey, generateKey, isWellFormedKey, KeyDigests, keyHint } from '../../src/domain/api-keys.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('generateKey', () => {
  it('makes the prefix, an underscore and 11 base62 characters', () => {
    for (let i = 0; i < 200; i++) expect(generateKey('tg')).toMatch(/^tg_[0-9A-Za-z]{11}$/);
    expect(generateKey('acme')).toMatch(/^acme_[0-9A-Za-z]{11}$/);
  });

  it('makes distinct keys that use the whole base62 alphabet', () => {
    const keys = Array.from({ length: 5_000 }, () => generateKey('tg'));
    expect(new Set(keys).size).toBe(keys.length);
    const seen = new Set(keys.flatMap((k) => [...k.slice(3)]));
    expect([...seen].sort().join('')).toBe([...BASE62].sort().join(''));
  });

  it('draws every character about equally often (no modulo bias towards the first characters)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      for (const c of generateKey('tg').slice(3)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    // A plain `byte % 62` would draw 0-7 five times in 256 and the rest four times: 25% more often.
    const mean = (chars: string) => [...chars].reduce((n, c) => n + (counts.get(c) ?? 0), 0) / chars.length;
    const ratio = mean(BASE62.slice(0, 8)) / mean(BASE62.slice(8));
    expect(ratio).toBeGreaterThan(0.95);
    expect(ratio).toBeLessThan(1.05);
  });
});

describe('isWellFormedKey', () => {
  it('accepts a generated key of its own prefix', () => {
    expect(isWellFormedKey(generateKey('tg'), 'tg')).toBe(true);
    expect(isWellFormedKey('tg_0aZ9bY8cX7w', 'tg')).toBe(true);
  });

  it.each([
    ['another prefix', 'ms_0aZ9bY8cX7w'],
    ['a prefix that only starts the same', 'tgx_0aZ9bY8cX7'],
    ['no underscore', 'tg0aZ9bY8cX7wv'],
    ['10 characters', 'tg_0aZ9bY8cX7'],
    ['12 characters', 'tg_0aZ9bY8cX7wv'],
    ['a hyphen', 'tg_0aZ9bY8-X7w'],
    ['an underscore in the body', 'tg_0aZ9bY8_X7w'],
    ['a space', 'tg_0aZ9bY8 X7w'],
    ['a non-ASCII letter', 'tg_0aZ9bY8éX7w'],
    ['nothing', ''],
    ['the prefix alone', 'tg_'],
  ])('rejects a key with %s', (_label, key) => {
    expect(isWellFormedKey(key, 'tg')).toBe(false);
  });
});

describe('digestKey', () => {
  it('is HMAC-SHA256 in hex (RFC 4231 test case 2)', () => {
    expect(digestKey('Jefe', 'what do ya want for nothing?')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('depends on the secret and on the key, and is stable', () => {
    const key = 'tg_0aZ9bY8cX7w';
    expect(digestKey('secret-a', key)).toBe(digestKey('secret-a', key));
    expect(digestKey('secret-a', key)).not.toBe(digestKey('secret-b', key));
    expect(digestKey('secret-a', key)).not.toBe(digestKey('secret-a', 'tg_0aZ9bY8cX7x'));
    expect(digestKey('secret-a', key)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestKey('secret-a', key)).not.toContain(key);
  });
});

describe('KeyDigests', () => {
  it('gives digestKey under its secret, remembered or not', () => {
    const digests = new KeyDigests('Jefe');
    const key = 'what do ya want for nothing?';
    const digest = digests.of(key);
    expect(digest).toBe(digestKey('Jefe', key));
    digests.remember(key, digest);
    expect(digests.of(key)).toBe(digest);
    expect(digests.of('tg_0aZ9bY8cX7w')).toBe(digestKey('Jefe', 'tg_0aZ9bY8cX7w'));
  });

  it('answers what it remembers, forgets on request, and holds at most its capacity (oldest out)', () => {
    const digests = new KeyDigests('secret-a', 2);
    // A remembered digest is what `of` answers: proven with one no HMAC would give.
    digests.remember('tg_a', 'remembered-a');
    digests.remember('tg_b', 'remembered-b');
    expect(digests.of('tg_a')).toBe('remembered-a');
    digests.remember('tg_c', 'remembered-c');
    expect(digests.of('tg_a')).toBe(digestKey('secret-a', 'tg_a'));
    expect(digests.of('tg_b')).toBe('remembered-b');
    expect(digests.of('tg_c')).toBe('remembered-c');
    digests.forget('tg_b');
    expect(digests.of('tg_b')).toBe(digestKey('secret-a', 'tg_b'));
  });

  it('remembers a key again after forgetting it, also right after answering it from memory', () => {
    const digests = new KeyDigests('secret-a');
    digests.remember('tg_a', 'first');
    expect(digests.of('tg_a')).toBe('first');
    digests.forget('tg_a');
    digests.remember('tg_a', 'second');
    expect(digests.of('tg_a')).toBe('second');
  });
});

describe('KeyDigests notes', () => {
  it('keeps one record per remembered key, with the notes its caller left, until forgotten', () => {
    const digests = new KeyDigests<{ seen: number }>('secret-a');
    expect(digests.recall('tg_a')).toBeUndefined();
    const a = digests.remember('tg_a', 'remembered-a');
    expect(a).toEqual({ digest: 'remembered-a', notes: undefined });
    a.notes = { seen: 1 };
    expect(digests.remember('tg_a', 'remembered-a')).toBe(a);
    expect(digests.recall('tg_a')?.notes).toEqual({ seen: 1 });
    digests.forget('tg_a');
    expect(digests.recall('tg_a')).toBeUndefined();
    expect(digests.remember('tg_a', 'remembered-a').notes).toBeUndefined();
  });
});

describe('keyHint', () => {
  it('shows the prefix and the last 4 characters only', () => {
    expect(keyHint('tg_0aZ9bY8cX7w')).toBe('tg_…cX7w');
    expect(keyHint('acme_0aZ9bY8cX7w')).toBe('acme_…cX7w');
  });

  it('never shows the first 7 characters of the body', () => {
    const key = generateKey('tg');
    const hint = keyHint(key);
    expect(hint).not.toContain(key.slice(3, 10));
    expect(hint.replace('tg_…', '')).toBe(key.slice(-4));
  });
});
