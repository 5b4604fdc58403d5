import { describe, expect, it } from 'vitest';
import {
  fingerprint,
  ledgerDelta,
  MAX_TOKENS,
  replayOrConflict,
  validateIdempotencyKey,
  validateLedgerRequest,
} from '../../src/domain/ledger.js';

const code = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? 'ok' : r.error?.code);

describe('validateLedgerRequest', () => {
  it('accepts a positive grant and charge, and a signed adjustment', () => {
    expect(validateLedgerRequest('grant', 100, 'welcome', 'k-1')).toEqual({
      ok: true,
      value: { kind: 'grant', amount: 100, reason: 'welcome', idempotencyKey: 'k-1' },
    });
    expect(validateLedgerRequest('charge', 1, undefined, undefined)).toEqual({
      ok: true,
      value: { kind: 'charge', amount: 1, reason: null, idempotencyKey: null },
    });
    expect(code(validateLedgerRequest('adjust', -5, null, null))).toBe('ok');
    expect(code(validateLedgerRequest('adjust', 5, null, null))).toBe('ok');
    expect(code(validateLedgerRequest('grant', MAX_TOKENS, null, null))).toBe('ok');
  });

  it.each([
    ['a grant of 0', 'grant', 0],
    ['a negative grant', 'grant', -1],
    ['a charge of 0', 'charge', 0],
    ['a negative charge', 'charge', -10],
    ['an adjustment of 0', 'adjust', 0],
    ['a fractional amount', 'grant', 1.5],
    ['an amount given as a string', 'grant', '5'],
    ['an amount above MAX_TOKENS', 'grant', MAX_TOKENS + 1],
    ['an adjustment below -MAX_TOKENS', 'adjust', -MAX_TOKENS - 1],
    ['an unknown kind', 'refund', 5],
  ])('refuses %s', (_label, kind, amount) => {
    expect(code(validateLedgerRequest(kind, amount, null, null))).toBe('invalid_arguments');
  });

  it('refuses a reason that is not a string or is longer than 500 characters', () => {
    expect(code(validateLedgerRequest('grant', 1, 'x'.repeat(500), null))).toBe('ok');
    expect(code(validateLedgerRequest('grant', 1, 'x'.repeat(501), null))).toBe('invalid_arguments');
    expect(code(validateLedgerRequest('grant', 1, 42, null))).toBe('invalid_arguments');
  });

  it('refuses a malformed idempotency key', () => {
    expect(code(validateLedgerRequest('grant', 1, null, 'has space'))).toBe('invalid_arguments');
  });
});

describe('validateIdempotencyKey', () => {
  it('takes an absent key as none', () => {
    expect(validateIdempotencyKey(undefined)).toEqual({ ok: true, value: null });
    expect(validateIdempotencyKey(null)).toEqual({ ok: true, value: null });
  });

  it('accepts 1-200 printable ASCII characters without spaces', () => {
    expect(validateIdempotencyKey('a')).toEqual({ ok: true, value: 'a' });
    expect(validateIdempotencyKey('order:2026-04-15/#17~!')).toEqual({
      ok: true,
      value: 'order:2026-04-15/#17~!',
    });
    expect(code(validateIdempotencyKey('k'.repeat(200)))).toBe('ok');
  });

  it.each([
    ['empty', ''],
    ['201 characters', 'k'.repeat(201)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\nb'],
    ['a non-ASCII character', 'clé'],
    ['a number', 17],
    ['an object', { key: 'a' }],
  ])('refuses a key that is %s', (_label, value) => {
    expect(code(validateIdempotencyKey(value))).toBe('invalid_arguments');
  });
});

describe('ledgerDelta', () => {
  it('adds grants, subtracts charges and applies adjustments as signed', () => {
    expect(ledgerDelta('grant', 10)).toBe(10);
    expect(ledgerDelta('charge', 10)).toBe(-10);
    expect(ledgerDelta('adjust', -3)).toBe(-3);
    expect(ledgerDelta('adjust', 3)).toBe(3);
  });
});

describe('fingerprint', () => {
  it('is stable for the same payload and differs for a different one', () => {
    expect(fingerprint({ kind: 'grant', amount: 5 })).toBe(fingerprint({ kind: 'grant', amount: 5 }));
    expect(fingerprint({ kind: 'grant', amount: 5 })).not.toBe(fingerprint({ kind: 'grant', amount: 6 }));
    expect(fingerprint({ kind: 'grant', amount: 5 })).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('replayOrConflict', () => {
  it('replays the stored answer for the same request and refuses a different one', () => {
    const replay = () => ({ kind: 'replayed' as const, response: 42 });
    expect(replayOrConflict('abc', 'abc', replay)).toEqual({ kind: 'replayed', response: 42 });
    expect(replayOrConflict('abc', 'abd', replay)).toEqual({ kind: 'idempotency_conflict' });
  });
});
