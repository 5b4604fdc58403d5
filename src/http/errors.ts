/**
 * @module The one error handler: every failure becomes `{status:"error", error, code, message,
 * request_id}` with the status its code maps to. Nothing internal reaches the body.
 */

import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DEFAULT_MESSAGES,
  ERROR_STATUS,
  type ErrorCode,
  type Failure,
  StoreUnavailableError,
} from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { type Metrics, NO_METRICS } from '../metrics/metrics.js';
import { undecodableParam } from './url-params.js';

/** A failure on its way out of a route; thrown so Fastify's lifecycle stops where it is. */
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

export function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  if (e.headers) reply.headers(e.headers);
  return reply
    .code(ERROR_STATUS[e.code])
    .type('application/json; charset=utf-8')
    .send(errorBody(e.code, e.message, reply.request.id, e.details));
}

/** Fastify's own errors, by code, in our vocabulary. */
function fromFastify(err: FastifyError): ApiError | undefined {
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

/** Sockets already given their parse-error answer: Node calls again on every later read. */
const answered = new WeakSet<Duplex>();

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers too large, malformed
 * HTTP, timeouts): answered in the same JSON shape, then the connection is closed. Stray bytes
 * after a complete request fail to parse while that request is still being served: its answer is
 * written first, since what it committed must be what its client reads, and only then the 400.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  afterServed(socket, () => answerClientError(err, socket));
}

/** Node's response in progress on a socket (and its request), when there is one. */
type InFlight = ServerResponse & { req?: IncomingMessage };

/** Runs `then` once every response to a complete request on the socket has been written. */
function afterServed(socket: Duplex, then: () => void): void {
  const res = (socket as Duplex & { _httpMessage?: InFlight | null })._httpMessage;
  if (!res || res.writableFinished) {
    then();
    return;
  }
  // A request whose body never finished was never served; its answer, if begun, cannot be cut short.
  if (!res.req?.complete) {
    if (res.headersSent) socket.destroy();
    else then();
    return;
  }
  // Node hands the socket to the next pipelined response on 'finish' before this listener runs.
  res.once('finish', () => afterServed(socket, then));
  res.once('close', () => {
    if (!res.writableFinished) socket.destroy();
  });
}

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'invalid_arguments';
  const message =
    code === 'invalid_arguments' ? 'The request is not well-formed HTTP.' : DEFAULT_MESSAGES[code];
  const requestId = newId('req');
  const body = JSON.stringify(errorBody(code, message, requestId));
  const status = ERROR_STATUS[code];
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Fastify's own routing errors (a malformed URL), in the same shape. */
export function frameworkErrors(_err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const param = undecodableParam(request);
  const message = param
    ? `Invalid arguments: ${param} is not percent-encoded UTF-8.`
    : 'The request URL is malformed.';
  sendError(reply, new ApiError('invalid_arguments', message));
}

/** An expected failure as the API error it is answered with; undefined for anything else (a bug). */
function expected(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreUnavailableError)
    return new ApiError('unavailable', undefined, undefined, { 'retry-after': '1' });
  return err instanceof Error ? fromFastify(err as FastifyError) : undefined;
}

/** The HTTP status any failure is answered with. */
export function errorStatus(err: unknown): number {
  const e = expected(err);
  return e ? ERROR_STATUS[e.code] : 500;
}

/**
 * Any failure as the API error it is answered with: an expected one as it is, the store's
 * unavailability as 503 with advice to retry (and logged), and anything else (a bug) logged and
 * answered 500 with nothing internal.
 */
export function asApiError(err: unknown, log: FastifyBaseLogger, metrics: Metrics = NO_METRICS): ApiError {
  const e = expected(err);
  if (e && err instanceof StoreUnavailableError) {
    log.warn({ err: { message: err.message } }, 'store unavailable');
    metrics.storeError();
  }
  if (e) return e;
  log.error({ err }, 'unhandled error');
  return new ApiError('internal_error');
}

export function installErrorHandling(app: FastifyInstance, metrics: Metrics = NO_METRICS): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    sendError(reply, asApiError(err, request.log, metrics)),
  );
  app.setNotFoundHandler((request, reply) => {
    return sendError(
      reply,
      new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`),
    );
  });
}
