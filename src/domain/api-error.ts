/**
 * @module The error every door answers with: `ApiError` (an expected failure on its way out), its
 * body `{status:"error", error, code, message, request_id}`, the messages for bad arguments, and
 * the mapping of anything thrown to the one it is answered as. No framework here: each door
 * (HTTP, MCP, the console) sends the body its own way.
 */
import { STATUS_CODES } from 'node:http';
import {
  DEFAULT_MESSAGES,
  ERROR_STATUS,
  type ErrorCode,
  type Failure,
  type Result,
  StoreUnavailableError,
} from './errors.js';

/** A failure on its way out of a route; thrown so the framework's lifecycle stops where it is. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(
    code: ErrorCode,
    message?: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message ?? DEFAULT_MESSAGES[code]);
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
  static from(f: Failure): ApiError {
    return new ApiError(f.code, f.message, f.details);
  }
}

/** A Result's value, or its failure thrown as the ApiError it is answered with. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw ApiError.from(result.error);
  return result.value;
}

export interface ErrorBody {
  status: 'error';
  error: string;
  code: ErrorCode;
  message: string;
  request_id: string;
  [extra: string]: unknown;
}

export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
): ErrorBody {
  const status = ERROR_STATUS[code];
  return {
    status: 'error',
    error: STATUS_CODES[status] ?? 'Error',
    code,
    message,
    request_id: requestId,
    ...details,
  };
}

/** A JSON Schema validator's first error (Ajv's shape), as the 400's message: the member, and what is wrong. */
export function argumentsMessage(
  first: { instancePath?: string; message?: string | undefined; params?: unknown } | undefined,
): string {
  const params = first?.params as
    | { additionalProperty?: string; missingProperty?: string; allowedValues?: unknown[] }
    | undefined;
  const where = first?.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '';
  if (params?.additionalProperty !== undefined) {
    return `Unknown argument "${where ? `${where}.` : ''}${params.additionalProperty}".`;
  }
  if (params?.missingProperty !== undefined) {
    return `Missing argument "${where ? `${where}.` : ''}${params.missingProperty}".`;
  }
  if (Array.isArray(params?.allowedValues)) {
    const allowed = params.allowedValues.map((v) => JSON.stringify(v)).join(', ');
    return `Invalid arguments: ${where ? `${where} ` : ''}must be one of ${allowed}.`;
  }
  return `Invalid arguments: ${where ? `${where} ` : ''}${first?.message ?? 'do not match the schema'}.`;
}

/** What a web framework's own errors carry (Fastify's, as duck types: no framework is imported here). */
interface FrameworkError {
  code?: string;
  statusCode?: number;
  message: string;
  validation?: readonly { instancePath?: string; message?: string | undefined; params?: unknown }[];
}

/** The framework's own errors, by code, in our vocabulary. */
function fromFramework(err: FrameworkError): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_arguments', 'The Content-Length header does not match the body.');
  }
  if (err.validation) return new ApiError('invalid_arguments', argumentsMessage(err.validation[0]));
  // JSON.parse failures and prototype-poisoning refusals from the body parser.
  if (err instanceof SyntaxError || /prototype property/.test(err.message))
    return new ApiError('invalid_json');
  const status = err.statusCode ?? 500;
  if (status === 413) return new ApiError('payload_too_large');
  if (status === 415) return new ApiError('unsupported_media_type');
  if (status === 404) return new ApiError('not_found');
  if (status >= 400 && status < 500) return new ApiError('invalid_arguments', 'The request is malformed.');
  return undefined;
}

/** An expected failure as the API error it is answered with; undefined for anything else (a bug). */
function expected(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreUnavailableError)
    return new ApiError('unavailable', undefined, undefined, { 'retry-after': '1' });
  return err instanceof Error ? fromFramework(err as FrameworkError) : undefined;
}

/** The HTTP status any failure is answered with. */
export function errorStatus(err: unknown): number {
  const e = expected(err);
  return e ? ERROR_STATUS[e.code] : 500;
}

/** Where asApiError reports: a logger's two levels (pino's shape). */
export interface ErrorLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Any failure as the API error it is answered with: an expected one as it is, the store's
 * unavailability as 503 with advice to retry (and logged), and anything else (a bug) logged and
 * answered 500 with nothing internal.
 */
export function asApiError(err: unknown, log: ErrorLog, metrics?: { storeError(): void }): ApiError {
  const e = expected(err);
  if (e && err instanceof StoreUnavailableError) {
    log.warn({ err: { message: err.message } }, 'store unavailable');
    metrics?.storeError();
  }
  if (e) return e;
  log.error({ err }, 'unhandled error');
  return new ApiError('internal_error');
}
