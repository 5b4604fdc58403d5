/** @module The closed list of error codes, their HTTP statuses and default messages; expected failures are values. */

export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_arguments: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_admin_token: 401,
  insufficient_tokens: 402,
  account_suspended: 403,
  account_closed: 403,
  origin_not_allowed: 403,
  unknown_tool: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  fair_use_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  unavailable: 503,
  upstream_timeout: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  invalid_json: 'The request body is not valid JSON.',
  invalid_arguments: 'The request arguments are invalid.',
  missing_api_key: 'Invalid or missing API key.',
  invalid_api_key: 'Invalid or missing API key.',
  invalid_admin_token: 'Invalid or missing admin token.',
  insufficient_tokens: 'The account does not have enough tokens for this call.',
  account_suspended: 'The account is suspended.',
  account_closed: 'The account is closed.',
  origin_not_allowed:
    "This Origin may not call /mcp: it is neither the server's own nor listed in TOOLGATE_ALLOWED_ORIGINS.",
  unknown_tool: 'There is no tool with that name.',
  not_found: 'Not found.',
  method_not_allowed: 'This method is not allowed here; use POST.',
  request_timeout: 'The request was not received in time.',
  idempotency_conflict: 'This idempotency key was already used with a different payload.',
  conflict: 'The request conflicts with the current state.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'The request body must be sent as application/json.',
  headers_too_large: 'The request headers are too large.',
  rate_limited: 'Too many requests; slow down.',
  fair_use_exceeded: 'A fair-use quota is exhausted.',
  internal_error: 'An internal error occurred.',
  upstream_error: 'The service behind this tool failed; nothing was charged. Try again later.',
  upstream_timeout: 'The service behind this tool did not answer in time; nothing was charged.',
  unavailable: 'The service is temporarily unavailable; try again shortly.',
};

/** An expected failure: a value, not an exception. */
export interface Failure {
  readonly code: ErrorCode;
  readonly message: string;
  /** Extra machine-readable fields merged into the error body (for example the exhausted window). */
  readonly details?: Record<string, unknown>;
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: Failure };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T = never>(
  code: ErrorCode,
  message?: string,
  details?: Record<string, unknown>,
): Result<T> {
  const error: Failure = details
    ? { code, message: message ?? DEFAULT_MESSAGES[code], details }
    : { code, message: message ?? DEFAULT_MESSAGES[code] };
  return { ok: false, error };
}

/** Thrown by a store when its database cannot be reached; answered as 503 `unavailable`. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}
