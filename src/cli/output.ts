/**
 * @module What the CLI prints: JSON for scripts (`--json`, on stdout, errors included) or short lines
 * and tables for people (errors on stderr), and the exit code every failure maps to.
 */
import { STATUS_CODES } from 'node:http';
import { ToolgateError } from '../client/errors.js';
import { ERROR_STATUS, type Failure, type Result, StoreUnavailableError } from '../domain/errors.js';

export const EXIT_OK = 0;
/** The operation was refused or failed: not_found, fair_use_exceeded, insufficient_tokens, conflict... */
export const EXIT_FAILED = 1;
/** The command was used wrongly: bad arguments, bad configuration. */
export const EXIT_USAGE = 2;

/** Codes that mean "you asked wrongly", not "it was refused". */
const USAGE_CODES = new Set(['invalid_arguments', 'invalid_json', 'invalid_configuration', 'usage_error']);

export interface JsonOption {
  json?: boolean;
  /** `--url` / TOOLGATE_URL: work through this server's admin API instead of the database. */
  url?: string;
}

export const JSON_HELP = 'print JSON (for scripts); errors too, on stdout';

/** An expected failure on its way out of a command. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly exitCode: number = USAGE_CODES.has(code) ? EXIT_USAGE : EXIT_FAILED,
  ) {
    super(message);
  }

  static from(f: Failure): CliError {
    return new CliError(f.code, f.message, f.details ?? {});
  }
}

/** The value of a use case, or its failure thrown as a CliError. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw CliError.from(result.error);
  return result.value;
}

/**
 * What a terminal acts on instead of printing: C0 controls (ESC starts a sequence that can clear the
 * screen, retitle the window or rewrite the clipboard; CR returns over what was printed), DEL, C1
 * controls (U+009B is a CSI by itself), the line and paragraph separators, and the bidi marks,
 * embeddings, overrides and isolates that reorder the text after them.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return (
    NAMED_ESCAPES[c] ??
    (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
}

/** A stored string as one printable line: every control character written as its escape (`\x1b`, `\u202e`). */
export function printable(value: string): string {
  return value.replace(UNPRINTABLE, escapeChar);
}

/**
 * Lines for people, as the terminal will show them: everything but the newlines between lines
 * escaped. The last guard of every human output: cells are escaped whole already (a newline in a
 * name cannot start a row), and this catches a stored string a sentence names.
 */
function printableText(text: string): string {
  return text.replace(UNPRINTABLE, (c) => (c === '\n' ? c : escapeChar(c)));
}

/** Prints `value` as JSON with --json (exact: escaping is JSON's), otherwise the human rendering, printable. */
export function emit(opts: JsonOption, value: unknown, human: () => string): void {
  process.stdout.write(
    opts.json ? `${JSON.stringify(value, null, 2)}\n` : `${printableText(human()).replace(/\n+$/, '')}\n`,
  );
}

/** Any thrown value as a CliError: configuration and store problems keep their meaning, the rest is internal. */
export function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  // By name: importing config.ts here would load its schema library for every command.
  if (err instanceof Error && err.name === 'ConfigError')
    return new CliError('invalid_configuration', err.message);
  if (err instanceof StoreUnavailableError) {
    return new CliError('unavailable', `The database cannot be reached: ${err.message}`);
  }
  if (err instanceof ToolgateError) {
    const { status: _s, error: _e, code: _c, message: _m, ...details } = err.body ?? {};
    return new CliError(
      err.code,
      err.message,
      err.status ? { http_status: err.status, ...details } : details,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CliError('internal_error', `Unexpected error: ${message}`);
}

/** The error body the admin API would answer with, minus the request id (there is no request). */
export function errorBody(e: CliError): Record<string, unknown> {
  const status = (ERROR_STATUS as Record<string, number>)[e.code];
  return {
    status: 'error',
    ...(status ? { error: STATUS_CODES[status] ?? 'Error' } : {}),
    code: e.code,
    message: e.message,
    ...e.details,
  };
}

/**
 * `  <path>: <reason>` for each problem a refusal lists (a catalogue file's), so people see every
 * one of them as scripts do in the JSON body; "" otherwise. An empty path is the file as a whole.
 */
function problemLines(problems: unknown): string {
  if (!Array.isArray(problems)) return '';
  return problems
    .filter(
      (p): p is { path: string; reason: string } =>
        typeof p?.path === 'string' && typeof p?.reason === 'string',
    )
    .map((p) => `  ${p.path === '' ? '(whole file)' : printable(p.path)}: ${printable(p.reason)}\n`)
    .join('');
}

/** Prints a failure where it belongs for the mode, and returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  const e = toCliError(err);
  if (json) process.stdout.write(`${JSON.stringify(errorBody(e), null, 2)}\n`);
  else process.stderr.write(printableText(`toolgate: ${e.message}\n${problemLines(e.details.problems)}`));
  return e.exitCode;
}

/** A field's value: one line, or several (each printed under the value column). */
export type FieldValue = string | number | readonly string[];

/** `key  value` lines with the keys aligned; every value line printable. */
export function fields(pairs: ReadonlyArray<readonly [string, FieldValue]>, indent = ''): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  const under = `\n${indent}${' '.repeat(width + 2)}`;
  return pairs
    .map(([k, v]) => {
      const lines = typeof v === 'object' ? v : [String(v)];
      return `${indent}${k.padEnd(width)}  ${lines.map(printable).join(under)}`;
    })
    .join('\n');
}

/** A token balance for people: -1 is "unlimited". */
export function balanceText(balance: number): string {
  return balance === -1 ? 'unlimited' : `${balance} tokens`;
}

export const orDash = (v: string | null | undefined): string => (v === null || v === undefined ? '-' : v);
