/** @module ToolgateClient: calls `POST {baseUrl}/api/v1/tools/<tool>` with a bearer API key, over global fetch. */
import { sendJson, serverUrl } from './http.js';
import type { GetAccountResponse } from './types.js';

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
    if (typeof options.apiKey !== 'string' || options.apiKey === '') {
      throw new TypeError('apiKey must be a non-empty string.');
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`timeoutMs must be a positive number of milliseconds (got ${timeoutMs}).`);
    }
    this.baseUrl = serverUrl(options.baseUrl);
    this.apiKey = options.apiKey;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.timeoutMs = timeoutMs;
  }

  /** The account that owns the key: name, plan, status, balance (-1 when unlimited), counts, fair use. Free. */
  getAccount(): Promise<GetAccountResponse> {
    return this.callTool<GetAccountResponse>('get_account', {});
  }

  /** Calls any tool with its arguments; resolves to the JSON answer, rejects with a ToolgateError. */
  callTool<T = unknown>(name: string, args: Record<string, unknown> = {}): Promise<T> {
    return sendJson<T>({
      method: 'POST',
      url: `${this.baseUrl}/api/v1/tools/${encodeURIComponent(name)}`,
      headers: { Authorization: `Bearer ${this.apiKey}` },
      body: args,
      timeoutMs: this.timeoutMs,
      fetch: this.fetchFn,
    });
  }
}
