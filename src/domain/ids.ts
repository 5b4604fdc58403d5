/** @module Ids that say what they are: a type prefix and a time-ordered random part (48-bit ms time + 80 random bits). */
import { randomBytes } from 'node:crypto';

export type IdKind = 'acc' | 'key' | 'usr' | 'req' | 'led';

// Crockford base32, lower case: sorts in the same order as the time it encodes.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(10);
  let rand = '';
  // 80 bits -> 16 base32 characters, 5 bits at a time.
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rand += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return `${kind}_${time}${rand}`;
}

const ID_PATTERN = /^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$/;

export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${kind}_`) && ID_PATTERN.test(value);
}
