/**
 * @module The one error handler of the HTTP server: every failure becomes the body of
 * domain/api-error.ts with the status its code maps to, Node's parser errors included. Nothing
 * internal reaches the body.
 */

import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, asApiError, errorBody } from '../domain/api-error.js';
import { DEFAULT_MESSAGES, ERROR_STATUS, type ErrorCode } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { type Metrics, NO_METRICS } from '../metrics/metrics.js';
import { undecodableParam } from './url-params.js';

export function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  if (e.headers) reply.headers(e.headers);
  return reply
    .code(ERROR_STATUS[e.code])
    .type('application/json; charset=utf-8')
    .send(errorBody(e.code, e.message, reply.request.id, e.details));
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
