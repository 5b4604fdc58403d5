/**
 * @module Each request's logger, made only when the request logs something, and what a log line
 * says of a request. Fastify gives every request a pino child bound to its request id; making one
 * serialises the bindings, which costs a microsecond or two per request even when nothing is ever
 * logged (the common case at `warn`). This stand-in makes the real child the first time a message
 * at an enabled level is logged, so the lines are the same as the child's would be.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

type Bindings = Record<string, unknown>;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

class RequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: object,
  ) {}

  private get real(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: object): Logger {
    return this.real.child(bindings, options);
  }

  silent(): void {}

  private log(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  // Methods on the prototype: nothing is made per request but the object itself.
  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
}

/**
 * Fastify's `childLoggerFactory`: a RequestLogger instead of an eager child. The logger Fastify
 * hands it is the pino logger toolgate made (buildApp's `logger`).
 */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: object,
): FastifyBaseLogger {
  return new RequestLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}

/** The slice of a Fastify request a log line describes. */
interface LoggedRequest {
  method: string;
  url: string;
  host: string;
  ip: string;
  socket?: { remotePort?: number | undefined } | null;
}

/** A host name or address with an optional port: what a Host header holds when it is well-formed. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/**
 * The request as a log line shows it (Fastify's `req` serializer, replaced): the path without its
 * query string or fragment, and the Host only when it is a host name. Clients put keys and tokens
 * in query strings and even in Host headers; a log must not keep them.
 */
export function requestForLog(req: LoggedRequest): Record<string, unknown> {
  const url = String(req.url);
  const end = url.search(/[?#]/);
  const path = (end < 0 ? url : url.slice(0, end)).replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/]*@/, '$1');
  const host = typeof req.host === 'string' && req.host.length <= 260 && HOST.test(req.host);
  return {
    method: req.method,
    url: path,
    host: host ? req.host : '[not a host name]',
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** `logger` with requests logged by requestForLog, whoever logs one (Fastify's lines or toolgate's). */
export function withRequestSerializer(logger: Logger): Logger {
  return logger.child({}, { serializers: { req: requestForLog } });
}
