/** @module Reading bearer credentials, and turning expected failures into thrown API errors. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Result } from '../domain/errors.js';
import { ApiError } from './errors.js';

/** The credential of `Authorization: Bearer <credential>`; '' when the header is there but empty or of another scheme. */
export function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*bearer\s+(\S*)\s*$/i.exec(header);
  return m ? (m[1] ?? '') : header.trim() === '' ? '' : '\u0000';
}

/** Compares in constant time: digests first, so neither the length nor the content of the secret leaks. */
export function sameSecret(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw ApiError.from(result.error);
  return result.value;
}
