/** @module Reading bearer credentials, and comparing secrets in constant time. */
import { hash, timingSafeEqual } from 'node:crypto';

/** The credential of `Authorization: Bearer <credential>`; '' when the header is there but empty or of another scheme. */
export function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*bearer\s+(\S*)\s*$/i.exec(header);
  return m ? (m[1] ?? '') : header.trim() === '' ? '' : '\u0000';
}

/** SHA-256 of a secret: what constant-time comparisons compare, so lengths and contents do not leak. */
export function secretDigest(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** Compares two secret digests in constant time. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}
