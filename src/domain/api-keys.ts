/**
 * @module API keys: `<prefix>_` + 11 base62 characters from a CSPRNG. Only an HMAC-SHA256 digest
 * and a display hint are ever stored; the key itself is shown once, at creation.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import type { EpochSeconds } from './clock.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_BODY_LENGTH = 11;

/** A prefix is short lower-case alphanumerics: it must not contain the underscore that ends it. */
export const KEY_PREFIX_PATTERN = /^[a-z][a-z0-9]{0,15}$/;

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string | null;
  hint: string;
  createdAt: EpochSeconds;
  revokedAt: EpochSeconds | null;
  lastUsedAt: EpochSeconds | null;
}

/**
 * A key's stored last use is rewritten only once it is this many seconds older than a new use:
 * a key in steady use costs one row write a minute, not one every flush. On a large SQLite
 * database each of those writes dirtied its own page, and the checkpoint that copied them back ran
 * on the event loop, with an fsync (see docs/performance.md).
 */
export const LAST_USED_RESOLUTION_SECONDS = 60;

/** 11 uniform base62 characters: bytes >= 248 are rejected so that `% 62` has no bias. */
export function generateKey(prefix: string): string {
  let body = '';
  while (body.length < KEY_BODY_LENGTH) {
    for (const b of randomBytes(16)) {
      if (b < 248 && body.length < KEY_BODY_LENGTH) body += BASE62[b % 62];
    }
  }
  return `${prefix}_${body}`;
}

/** Whether `key` has the shape of a key of this deployment (cheap check before any digest or lookup). */
export function isWellFormedKey(key: string, prefix: string): boolean {
  if (key.length !== prefix.length + 1 + KEY_BODY_LENGTH || !key.startsWith(`${prefix}_`)) return false;
  for (let i = prefix.length + 1; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (!alnum) return false;
  }
  return true;
}

/** HMAC-SHA256 of the key in hex; the secret as text, or as a KeyObject made once from that text. */
export function digestKey(secret: string | KeyObject, key: string): string {
  return createHmac('sha256', secret).update(key).digest('hex');
}

/**
 * What this process remembers of a key that authenticated: its digest, and what the caller last
 * learnt about it (the store's answer, when the key's use was last noted). Kept per presented key,
 * so a request with a known key costs one Map lookup, not one per thing to know.
 */
export interface RememberedKey<T> {
  readonly digest: string;
  /** The caller's own notes on this key; they mean only what the caller makes them mean. */
  notes: T | undefined;
}

/**
 * The digests of presented keys under one secret, remembered for keys that authenticated: the
 * HMAC costs microseconds on every request, a Map lookup a fraction of one. What is
 * remembered is only ever memory the serving process already handles (the key arrives in every
 * request); it is bounded (oldest forgotten first), never written anywhere, and a key that stops
 * authenticating is forgotten. Remembering a digest grants nothing: the store still decides, on
 * every request, whether the digest belongs to an active key.
 */
export class KeyDigests<T = unknown> {
  private readonly secret: KeyObject;
  private readonly known = new Map<string, RememberedKey<T>>();

  constructor(
    secret: string,
    private readonly capacity = 10_000,
  ) {
    this.secret = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** What is remembered of `key`, if it authenticated before. */
  recall(key: string): RememberedKey<T> | undefined {
    return this.known.get(key);
  }

  /** digestKey(secret, key), from memory when the key authenticated before. */
  of(key: string): string {
    return this.known.get(key)?.digest ?? digestKey(this.secret, key);
  }

  /** Remembers `key` and its digest (if it was not remembered yet); what is remembered of it. */
  remember(key: string, digest: string): RememberedKey<T> {
    const known = this.known.get(key);
    if (known !== undefined) return known;
    if (this.known.size >= this.capacity) this.known.delete(this.known.keys().next().value as string);
    const remembered: RememberedKey<T> = { digest, notes: undefined };
    this.known.set(key, remembered);
    return remembered;
  }

  forget(key: string): void {
    this.known.delete(key);
  }
}

/** What a person sees of a stored key: `tg_…abcd`. */
export function keyHint(key: string): string {
  const prefix = key.slice(0, key.indexOf('_') + 1);
  return `${prefix}…${key.slice(-4)}`;
}

/** The hint an OAuth grant's key row shows instead of a key's last characters: how lists mark a grant. */
export const GRANT_HINT = 'oauth grant';
