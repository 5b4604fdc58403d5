/** @module ToolgateClient: calls `POST {baseUrl}/api/v1/tools/<tool>` with a bearer API key, over global fetch. */
import { ToolgateError } from './errors.js';
import type { ErrorBody, GetAccountResponse } from './types.js';

export interface ToolgateClientOptions {
  /** Where toolgate answers, for example `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** The API key, `<prefix>_<11 characters>`. */
  apiKey: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
  /** How long a call may take, answer included, before it fails with `network_error`. Default 30 s. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export class ToolgateClient {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;

  constructor(options: ToolgateClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute http(s) URL (got "${options.baseUrl}").`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`baseUrl must be an http or https URL (got "${options.baseUrl}").`);
    }
    if (typeof options.apiKey !== 'string' || options.apiKey === '') {
      throw new TypeError('apiKey must be a non-empty string.');
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`timeoutMs must be a positive number of milliseconds (got ${timeoutMs}).`);
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.timeoutMs = timeoutMs;
  }

  /** The account that owns the key: name, plan, status, balance (-1 when unlimited), counts, fair use. Free. */
  getAccount(): Promise<GetAccountResponse> {
    return this.callTool<GetAccountResponse>('get_account', {});
  }

  /** Calls any tool with its arguments; resolves to the JSON answer, rejects with a ToolgateError. */
  async callTool<T = unknown>(name: string, args: Record<string, unknown> = {}): Promise<T> {
    const url = `${this.baseUrl}/api/v1/tools/${encodeURIComponent(name)}`;
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await this.fetchFn(url, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${this.apiKey}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: JSON.stringify(args),
        signal,
      });
      text = await response.text();
    } catch (err) {
      throw networkError(url, this.timeoutMs, err);
    }
    const requestId = response.headers.get('x-request-id');
    const parsed = parseJson(text);
    if (response.ok) {
      if (parsed === undefined) {
        throw new ToolgateError({
          status: response.status,
          code: 'invalid_response',
          message: `${url} answered ${response.status} with a body that is not JSON.`,
          requestId,
        });
      }
      return parsed as T;
    }
    const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
    const retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : null;
    if (isErrorBody(parsed)) {
      throw new ToolgateError({
        status: response.status,
        code: parsed.code,
        message: parsed.message,
        requestId: typeof parsed.request_id === 'string' ? parsed.request_id : requestId,
        body: parsed,
        retryAfterSeconds,
      });
    }
    // Not toolgate's error shape: a proxy or another server answered.
    throw new ToolgateError({
      status: response.status,
      code: 'http_error',
      message: `${url} answered HTTP ${response.status} ${response.statusText}`.trim(),
      requestId,
      retryAfterSeconds,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.status === 'error' && typeof v.code === 'string' && typeof v.message === 'string';
}

function networkError(url: string, timeoutMs: number, err: unknown): ToolgateError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new ToolgateError({
      status: 0,
      code: 'network_error',
      message: `No answer from ${url} within ${timeoutMs} ms.`,
      cause: err,
    });
  }
  // undici puts the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`.
  const reason = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new ToolgateError({
    status: 0,
    code: 'network_error',
    message: `Could not reach ${url}: ${reason}.`,
    cause: err,
  });
}
