/** @module Strict parsers for command-line values: a bad value is a usage error (exit 2), never NaN. */
import { InvalidArgumentError } from 'commander';

/** A whole number in [min, max], written as plain digits (with a leading minus when min < 0). */
export function wholeNumber(label: string, min: number, max: number, opts: { nonZero?: boolean } = {}) {
  const range = `${min === Number.MIN_SAFE_INTEGER ? '' : `from ${min} `}to ${max}`;
  const wanted = `${label} must be a whole number ${range}${opts.nonZero ? ', not 0' : ''}`;
  return (value: string): number => {
    if (!/^[+-]?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${wanted}.`);
    const n = Number(value.trim());
    if (!Number.isSafeInteger(n) || n < min || n > max || (opts.nonZero && n === 0)) {
      throw new InvalidArgumentError(`${wanted}.`);
    }
    return n;
  };
}

/** `true`, `false`, or `plan` (follow the plan; commander cannot carry null, so the word stays). */
export function unlimitedSetting(value: string): boolean | 'plan' {
  switch (value.trim().toLowerCase()) {
    case 'true':
    case 'yes':
      return true;
    case 'false':
    case 'no':
      return false;
    case 'plan':
      return 'plan';
    default:
      throw new InvalidArgumentError('--unlimited must be true, false or plan (follow the plan).');
  }
}

/** An absolute http(s) URL, without a trailing slash. */
export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('--url must be an http(s) URL such as http://127.0.0.1:8080.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('--url must be an http(s) URL such as http://127.0.0.1:8080.');
  }
  return url.href.replace(/\/+$/, '');
}

export function nonEmpty(label: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`${label} must not be empty.`);
    return value;
  };
}

/** `--low-balance`: a whole number of tokens (at least 1), or `none` (never). */
export function lowBalanceSetting(value: string): number | 'none' {
  if (value.trim().toLowerCase() === 'none') return 'none';
  return wholeNumber('--low-balance', 1, Number.MAX_SAFE_INTEGER)(value);
}

/** A comma-separated list (`a,b`), its items trimmed; empty items refused. */
export function commaList(label: string) {
  return (value: string): string[] => {
    const items = value.split(',').map((v) => v.trim());
    if (items.some((v) => v === ''))
      throw new InvalidArgumentError(`${label} must be a comma-separated list, such as a,b.`);
    return items;
  };
}
