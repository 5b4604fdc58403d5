/**
 * @module Ids that say what they are: a type prefix and a time-ordered random part (48-bit ms time
 * + 80 random bits, Crockford base32). Monotonic within a process: ids made in the same
 * millisecond (or under a clock that stands still) still sort in the order they were made.
 */
import { randomBytes } from 'node:crypto';

export type IdKind = 'acc' | 'key' | 'usr' | 'req' | 'led' | 'aud';

// Crockford base32, lower case: sorts in the same order as the values it encodes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RANDOM_MAX = (1n << 80n) - 1n;

let lastTime = -1;
let lastRandom = 0n;

function encode(value: bigint, chars: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}

export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  let time = Math.max(0, Math.floor(nowMs));
  let random: bigint;
  if (time <= lastTime && lastRandom < RANDOM_MAX) {
    // Same (or an earlier) millisecond: keep the last time and count up from the last random part.
    time = lastTime;
    random = lastRandom + 1n;
  } else {
    random = BigInt(`0x${randomBytes(10).toString('hex')}`) >> 1n; // leave room to count up
  }
  lastTime = time;
  lastRandom = random;
  return `${kind}_${encode(BigInt(time), 10)}${encode(random, 16)}`;
}

const ID_PATTERN = /^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${kind}_`) && ID_PATTERN.test(value);
}
