/** @module The pino logger: JSON lines or pretty ones, secrets redacted by path as a second line of defence. */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat } from './config.js';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'key',
  'apiKey',
  'adminToken',
  'keySecret',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The serving process's logger on standard output. Pretty lines are made from the JSON pino wrote,
 * so redaction has happened before; pino-pretty is loaded only for them (a server logging JSON
 * never carries it). Written synchronously, as pino's own stdout is: a line logged just before
 * `process.exit` is not lost.
 */
export async function processLogger(level: string, format: LogFormat): Promise<Logger> {
  if (format === 'json') return createLogger(level);
  const { prettyFactory } = await import('pino-pretty');
  const prettify = prettyFactory({ ignore: 'pid,hostname', translateTime: 'SYS:yyyy-mm-dd HH:MM:ss' });
  return createLogger(level, { write: (line: string) => void process.stdout.write(prettify(line)) });
}
