/**
 * @module Ids that say what they are: a type prefix and a time-ordered random part (48-bit ms time
 * + 80 random bits, Crockford base32). Monotonic within a process: ids made in the same
 * millisecond (or under a clock that stands still) still sort in the order they were made.
 */
import { randomFillSync } from 'node:crypto';

/**
 * `msg`: a webhook event (its `webhook-id`); `whe`, `whd`: a webhook endpoint, a delivery; `ses`: a
 * console session; `alm`: a customer alert mail.
 */
export type IdKind = 'acc' | 'key' | 'usr' | 'req' | 'led' | 'aud' | 'msg' | 'whe' | 'whd' | 'ses' | 'alm';

// Crockford base32, lower case: sorts in the same order as the values it encodes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TWO_40 = 2 ** 40;

// The 80 random bits as two 40-bit halves: plain numbers (exact in a double), no BigInt on the hot path.
let lastTime = -1;
let high = 0;
let low = 0;

// The id's characters as codes, kept between ids: the kind and "_" (0-3), the time (4-13) and the
// high half (14-21), which change only with the millisecond (or a carry), and the low half
// (22-29). One String.fromCharCode over them makes a flat string, a few times faster than joining
// the parts, and a header value that Node's validation checks on its fast path (a joined string is
// first flattened in V8's runtime).
const codes: number[] = new Array(30).fill(48);
codes[3] = 95; // "_"
const ALPHABET_CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

// Random bytes drawn in bulk: one system call per 256 ids, not one per id.
const pool = Buffer.alloc(10 * 256);
let poolOffset = pool.length;

/**
 * `value` (below 2^30) as `chars` base32 digits, most significant first, into codes[at] onwards.
 * Small integers only: bit operations on them, where the modulo of a larger number (a double)
 * would call out to C for every digit.
 */
function digitsInto(value: number, at: number, chars: number): void {
  let v = value;
  for (let i = at + chars - 1; i >= at; i--) {
    codes[i] = ALPHABET_CODES[v & 31] as number;
    v >>>= 5;
  }
}

/** `value` (below 2^(10 * halfChars)) as twice `halfChars` digits, in two halves that are small integers. */
function splitInto(value: number, at: number, halfChars: number): void {
  const unit = 2 ** (5 * halfChars);
  const top = Math.floor(value / unit);
  digitsInto(top, at, halfChars);
  digitsInto(value - top * unit, at + halfChars, halfChars);
}

function freshRandom(): void {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  // 39 bits in the high half leave room to count up within one millisecond.
  high = Math.floor(pool.readUIntBE(poolOffset, 5) / 2);
  low = pool.readUIntBE(poolOffset + 5, 5);
  poolOffset += 10;
}

export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  const time = Math.max(0, Math.floor(nowMs));
  if (time <= lastTime) {
    // Same (or an earlier) millisecond: keep the last time and count up from the last random part.
    low += 1;
    if (low >= TWO_40) {
      low = 0;
      high += 1;
      splitInto(high, 14, 4);
    }
  } else {
    lastTime = time;
    freshRandom();
    splitInto(lastTime, 4, 5);
    splitInto(high, 14, 4);
  }
  splitInto(low, 22, 4);
  codes[0] = kind.charCodeAt(0);
  codes[1] = kind.charCodeAt(1);
  codes[2] = kind.charCodeAt(2);
  return String.fromCharCode.apply(null, codes);
}

const ID_PATTERN = /^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${kind}_`) && ID_PATTERN.test(value);
}
