/** @module ToolgateError: every failure of a client call, from an error body or from the network. */
import type { ErrorBody } from './types.js';

export interface ToolgateErrorInit {
  /** The HTTP status; 0 when no answer came (network failure, timeout). */
  status: number;
  code: string;
  message: string;
  requestId?: string | null;
  /** The error body as received, when there was a JSON one (extra members such as `resets_at` included). */
  body?: ErrorBody | null;
  /** Seconds from a `Retry-After` header, when the answer had one. */
  retryAfterSeconds?: number | null;
  cause?: unknown;
}

export class ToolgateError extends Error {
  override readonly name = 'ToolgateError';
  readonly status: number;
  /** The server's code (`invalid_api_key`, `fair_use_exceeded`, ...), or `network_error`, `http_error`, `invalid_response`. */
  readonly code: string;
  readonly requestId: string | null;
  readonly body: ErrorBody | null;
  readonly retryAfterSeconds: number | null;

  constructor(init: ToolgateErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.body = init.body ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }
}
