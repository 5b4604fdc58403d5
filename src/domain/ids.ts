/**
 * @module Ids that say what they are: a type prefix and a time-ordered random part (48-bit ms time
 * + 80 random bits, Crockford base32). Monotonic within a process: ids made in the same
 * millisecond (or under a clock that stands still) still sort in the order they were made.
 */
import { randomFillSync } from 'node:crypto';

export type IdKind = 'acc' | 'key' | 'usr' | 'req' | 'led' | 'aud';

// Crockford base32, lower case: sorts in the same order as the values it encodes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TWO_40 = 2 ** 40;

// The 80 random bits as two 40-bit halves: plain numbers (exact in a double), no BigInt on the hot path.
let lastTime = -1;
let high = 0;
let low = 0;
// The encoded time and high half, which change only with the millisecond (or a carry): made once.
let head = '';

// Random bytes drawn in bulk: one system call per 256 ids, not one per id.
const pool = Buffer.alloc(10 * 256);
let poolOffset = pool.length;

function encode(value: number, chars: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
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
      head = encode(lastTime, 10) + encode(high, 8);
    }
  } else {
    lastTime = time;
    freshRandom();
    head = encode(lastTime, 10) + encode(high, 8);
  }
  return `${kind}_${head}${encode(low, 8)}`;
}

const ID_PATTERN = /^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${kind}_`) && ID_PATTERN.test(value);
}
