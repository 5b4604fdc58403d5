/**
 * @module The key secret of a server: TOOLGATE_KEY_SECRET, or for a SQLite file a secret generated
 * once beside it (mode 0600), so that `npm start` needs no secret to be chosen first.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Config, ConfigError } from './config.js';

/**
 * The HMAC secret for key digests. From TOOLGATE_KEY_SECRET when set; for SQLite, otherwise,
 * generated once into `key-secret` beside the database file (mode 0600) and read from there after.
 */
export function resolveKeySecrets(config: Config): string[] {
  if (config.keySecrets.length > 0) return config.keySecrets;
  if (config.database.kind !== 'sqlite' || config.database.path === ':memory:') {
    throw new ConfigError(
      'TOOLGATE_KEY_SECRET must be set when the database is not a SQLite file: every server must share it (for example: openssl rand -hex 32).',
    );
  }
  const file = join(dirname(config.database.path), 'key-secret');
  try {
    return [readOrCreateKeySecret(file)];
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(
      `cannot use the key secret file ${file}, beside the database sqlite:${config.database.path} (${code}): make that directory writable by this user, or set TOOLGATE_KEY_SECRET`,
    );
  }
}

function readOrCreateKeySecret(file: string): string {
  if (existsSync(file)) {
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length < 32)
      throw new ConfigError(`${file} holds no usable key secret (under 32 characters).`);
    // One others could read (an earlier version's, or copied in) is made private as the database is.
    try {
      const mode = statSync(file).mode & 0o777;
      if (mode & 0o077) chmodSync(file, mode & 0o700);
    } catch {
      // Not this user's file to change: it is read as it is.
    }
    return secret;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return readFileSync(file, 'utf8').trim();
}
