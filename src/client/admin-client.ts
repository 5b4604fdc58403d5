/** @module ToolgateAdminClient: calls the admin API under `{baseUrl}/admin/v1` with a bearer admin token. */

import { exchangeJson, serverUrl } from './http.js';
import { DEFAULT_TIMEOUT_MS } from './toolgate-client.js';

export interface ToolgateAdminClientOptions {
  /** Where toolgate answers, for example `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** One of the server's TOOLGATE_ADMIN_TOKEN tokens. */
  adminToken: string;
  fetch?: typeof fetch;
  /** How long a call may take, answer included. Default 30 s. */
  timeoutMs?: number;
}

export type Query = Record<string, string | number | undefined>;

export class ToolgateAdminClient {
  readonly baseUrl: string;
  private readonly token: string;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;

  constructor(options: ToolgateAdminClientOptions) {
    if (typeof options.adminToken !== 'string' || options.adminToken === '') {
      throw new TypeError('adminToken must be a non-empty string.');
    }
    this.baseUrl = serverUrl(options.baseUrl);
    this.token = options.adminToken;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * `method {baseUrl}/admin/v1{path}`: `path` segments are the caller's to encode (see `seg`), the
   * query's undefined members are left out. Resolves to the JSON answer, rejects with a ToolgateError.
   */
  async request<T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    return (await this.exchange<T>(method, path, opts)).body;
  }

  /** As request, with the answer's headers. */
  exchange<T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown } = {},
  ): Promise<{ body: T; headers: Headers }> {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) search.set(k, String(v));
    const qs = search.size > 0 ? `?${search}` : '';
    return exchangeJson<T>({
      method,
      url: `${this.baseUrl}/admin/v1${path}${qs}`,
      headers: { Authorization: `Bearer ${this.token}` },
      body: opts.body,
      timeoutMs: this.timeoutMs,
      fetch: this.fetchFn,
    });
  }

  /** A console sign-in link for a user (of `accountId` when given): single use, valid 15 minutes. */
  consoleLink(email: string, accountId?: string): Promise<{ url: string }> {
    return this.request('POST', '/console/links', {
      body: accountId === undefined ? { email } : { email, account_id: accountId },
    });
  }
}

/** One path segment, encoded: an id is never taken as a path. */
export const seg = (value: string): string => encodeURIComponent(value);
