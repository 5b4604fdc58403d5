/**
 * @module The token ledger: append-only entries (grant, charge, adjust), each with an optional
 * idempotency key. The balance never goes below 0.
 */
import { createHash } from 'node:crypto';
import type { EpochSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';

export const LEDGER_KINDS = ['grant', 'charge', 'adjust'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export interface LedgerEntry {
  id: string;
  accountId: string;
  kind: LedgerKind;
  /** As asked: positive for grant and charge, signed for adjust. */
  amount: number;
  /** The change to the balance: +amount, -amount, or the signed adjustment. */
  delta: number;
  balanceAfter: number;
  reason: string | null;
  idempotencyKey: string | null;
  createdAt: EpochSeconds;
}

/** The most one grant, charge or adjustment may move. */
export const MAX_TOKENS = 1_000_000_000_000;

/**
 * The most a balance may hold: 2^53 - 1, so that every balance, and every sum of ledger entries on
 * the way to it, is an exact number in JSON and JavaScript.
 */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

export interface LedgerRequest {
  kind: LedgerKind;
  amount: number;
  reason: string | null;
  idempotencyKey: string | null;
}

export function validateLedgerRequest(
  kind: unknown,
  amount: unknown,
  reason: unknown,
  idempotencyKey: unknown,
): Result<LedgerRequest> {
  if (typeof kind !== 'string' || !(LEDGER_KINDS as readonly string[]).includes(kind)) {
    return fail('invalid_arguments', `kind must be one of ${LEDGER_KINDS.join(', ')}.`);
  }
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || Math.abs(amount) > MAX_TOKENS) {
    return fail('invalid_arguments', `amount must be a whole number up to ${MAX_TOKENS}.`);
  }
  if (kind === 'adjust' ? amount === 0 : amount <= 0) {
    return fail(
      'invalid_arguments',
      kind === 'adjust' ? 'An adjustment must not be 0.' : `A ${kind} must be positive.`,
    );
  }
  if (reason != null && (typeof reason !== 'string' || reason.length > 500)) {
    return fail('invalid_arguments', 'reason must be a string of at most 500 characters.');
  }
  const idem = validateIdempotencyKey(idempotencyKey);
  if (!idem.ok) return idem;
  return ok({
    kind: kind as LedgerKind,
    amount,
    reason: (reason as string | null) ?? null,
    idempotencyKey: idem.value,
  });
}

export function validateIdempotencyKey(value: unknown): Result<string | null> {
  if (value == null) return ok(null);
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(value)) {
    return fail(
      'invalid_arguments',
      'idempotency_key must be 1-200 printable ASCII characters without spaces.',
    );
  }
  return ok(value);
}

export function ledgerDelta(kind: LedgerKind, amount: number): number {
  return kind === 'charge' ? -amount : amount;
}

/**
 * Why a move of `delta` from `balance` was refused, the balance being within its bounds: taking
 * away can only go below 0, adding only past MAX_BALANCE.
 */
export function outOfBounds(
  delta: number,
  balance: number,
): { kind: 'insufficient'; balance: number } | { kind: 'over_maximum'; balance: number } {
  return delta < 0 ? { kind: 'insufficient', balance } : { kind: 'over_maximum', balance };
}

/** A stable digest of what a request asked for: the same idempotency key must come with the same one. */
export function fingerprint(payload: unknown): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex').slice(0, 32);
}

/**
 * An idempotency key that was used before: the same request (same fingerprint) gets the stored
 * answer again, a different one is refused.
 */
export function replayOrConflict<T>(
  storedHash: string,
  requestHash: string,
  replay: () => T,
): T | { kind: 'idempotency_conflict' } {
  return storedHash === requestHash ? replay() : { kind: 'idempotency_conflict' };
}
