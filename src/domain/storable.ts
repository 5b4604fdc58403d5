/**
 * @module Text every backend can store: no NUL and no unpaired UTF-16 surrogate. PostgreSQL refuses
 * both (text refuses NUL, jsonb both) where SQLite would keep them, so toolgate refuses them first,
 * the same on both.
 */

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorable(text: string): boolean {
  return !UNSTORABLE.test(text);
}

export const UNSTORABLE_REASON = 'must not contain NUL or an unpaired surrogate';
