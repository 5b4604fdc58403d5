/**
 * @module What every server of a deployment must sign with alike, derived from the key secret they
 * already share (TOOLGATE_KEY_SECRET): the OAuth server's cookie keys and its ES256 signing key. So
 * a cookie set by one server is read by another, and nothing is stored or configured for it.
 */
import { createECDH, createHmac } from 'node:crypto';
import type { JWK } from 'oidc-provider';

const derive = (secret: string, label: string) =>
  createHmac('sha256', secret).update(`toolgate-oauth:${label}`).digest();

export function cookieKeys(secret: string): string[] {
  return [derive(secret, 'cookies').toString('base64url')];
}

/** A P-256 key whose private scalar comes from the secret (a 256-bit HMAC is below the curve's order but for a chance of about 2^-32). */
export function signingKey(secret: string): JWK {
  const d = derive(secret, 'es256');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const pub = ecdh.getPublicKey(); // 0x04 || x || y
  return {
    kty: 'EC',
    crv: 'P-256',
    alg: 'ES256',
    use: 'sig',
    kid: derive(secret, 'kid').subarray(0, 12).toString('base64url'),
    d: d.toString('base64url'),
    x: pub.subarray(1, 33).toString('base64url'),
    y: pub.subarray(33, 65).toString('base64url'),
  };
}

/**
 * The ID token's `sub` for a person: an HMAC of their email (lower-cased) under the key secret,
 * opaque and the same for every client and server, so no client learns the email from it.
 */
export function personSubject(secret: string, email: string): string {
  return derive(secret, `sub:${email.toLowerCase()}`).toString('base64url');
}
