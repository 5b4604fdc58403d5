/**
 * @module Standard Webhooks' secrets and signatures: `whsec_` and random bytes in base64; `v1,<base64
 * HMAC-SHA256 of id.timestamp.body>` keyed by the secret's bytes after `whsec_`. Apart from the
 * sender, so that what makes a secret (the CLI, the admin API) loads no HTTP client.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** A new endpoint's signing secret: `whsec_` and 24 random bytes in base64 (Standard Webhooks' form). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The webhook-signature header's value for this message. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
