/** @module The one place that calls an operator's upstream service for a catalogue tool; every failure is a value. */

import type { Agent } from 'undici';
import { type Metrics, NO_METRICS } from '../metrics/metrics.js';
import { type Exchanged, exchange } from './exchange.js';
import { memberJson } from './json-member.js';

export interface UpstreamTarget {
  /** An http(s) URL. */
  url: string;
  /** The whole call: connect, headers and body. */
  timeoutMs: number;
  /** The answer's body is read up to this, then abandoned. */
  maxResponseBytes: number;
  /** Already resolved (no ${ENV} left); added to the request. */
  headers: Readonly<Record<string, string>>;
}

export interface ForwardCall {
  /** The caller's arguments, already serialised as JSON. */
  body: string;
  requestId: string;
  accountId: string;
  keyId: string;
  tool: string;
}

export type UpstreamResult =
  /** 2xx with a JSON object body, or 404: status 'ok' or 'not_found'. */
  | {
      kind: 'answer';
      httpStatus: number;
      status: 'ok' | 'not_found';
      results: unknown;
      /** `results` as JSON text, as the upstream wrote it ('null' when absent); undefined: serialise `results`. */
      resultsJson: string | undefined;
      metadata: Record<string, unknown> | undefined;
      /** The whole answer (what a records pointer points into); undefined for a 404 without a JSON object. */
      body: Record<string, unknown> | undefined;
    }
  /** 400 or 422: the caller's arguments were refused; message = the body's `message` when it is a string, cut to 500 chars. */
  | { kind: 'rejected'; message: string | undefined }
  /** Anything else; `reason` is for the server's log only (never shown to callers), and never contains header values. */
  | { kind: 'error'; code: 'upstream_error' | 'upstream_timeout'; reason: string };

const MAX_MESSAGE_CHARS = 500;

/** Lower-cased names toolgate sets itself; an operator's configured header of the same name is dropped, not merged. */
const OWN_HEADERS = new Set([
  'content-type',
  'x-request-id',
  'x-toolgate-account',
  'x-toolgate-key',
  'x-toolgate-tool',
]);

/** Visible ASCII and spaces: a catalogue's header values are checked to be so before they get here. */
const SENDABLE_VALUE = /^[\x20-\x7e]*$/;

/**
 * The one undici timer still on (the exchange's own timer bounds the call): the pool's connect
 * timeout, which ends a connect that hangs before a long `timeout_ms` does; a timeout all the same.
 */
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ENOTFOUND: 'DNS lookup failed',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed by the upstream',
};

export class Upstreams {
  /**
   * undici is loaded at the first call, not at start: a server that never proxies (no catalogue
   * tool) does not carry the library's code and heap. `ready` spares the calls after that a hop.
   */
  private agent: Promise<Agent> | null = null;
  private ready: Agent | null = null;
  private readonly connections: number;
  private readonly metrics: Metrics;

  constructor(opts: { connections?: number; metrics?: Metrics } = {}) {
    this.connections = opts.connections ?? 128;
    this.metrics = opts.metrics ?? NO_METRICS;
  }

  private dispatcher(): Agent | Promise<Agent> {
    if (this.ready) return this.ready;
    this.agent ??= import('undici').then(({ Agent }) => {
      this.ready = new Agent({ keepAliveTimeout: 10_000, connections: this.connections, pipelining: 1 });
      return this.ready;
    });
    return this.agent;
  }

  /** Never rejects: a broken, slow or oversized upstream is a result the caller maps to its own error. */
  async forward(target: UpstreamTarget, call: ForwardCall): Promise<UpstreamResult> {
    const result = await this.send(target, call);
    this.metrics.upstream(
      call.tool,
      result.kind === 'error' ? result.code : result.kind === 'answer' ? 'answered' : 'rejected',
    );
    return result;
  }

  private send(target: UpstreamTarget, call: ForwardCall): Promise<UpstreamResult> {
    const to = destination(target);
    if (typeof to === 'string') return Promise.resolve(upstreamError(to));
    const agent = this.dispatcher();
    if (agent instanceof Promise)
      return agent.then(
        () => this.send(target, call),
        // forward() never rejects: a client that could not be loaded is this call's failure too.
        () => upstreamError('the HTTP client could not be loaded'),
      );
    return exchange(
      agent,
      {
        origin: to.origin,
        path: to.path,
        method: 'POST',
        headers: requestHeaders(to.headers, call),
        body: call.body,
        // The exchange's own timer bounds the whole call (connect, headers and body); undici's
        // per-phase timers would only duplicate it, with two timer objects per call.
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      target.maxResponseBytes,
      target.timeoutMs,
    ).then((outcome) => classify(outcome, target));
  }

  async close(): Promise<void> {
    if (this.agent) await (await this.agent).close();
  }
}

/** Where a target's calls go, and its configured headers; or why it cannot be called. */
interface Destination {
  origin: string;
  path: string;
  /** The operator's headers, without those toolgate sets itself. */
  headers: Readonly<Record<string, string>>;
}

/** Worked out once per target (a catalogue revision's tool), not per call; gone with the target. */
const destinations = new WeakMap<UpstreamTarget, Destination | string>();

function destination(target: UpstreamTarget): Destination | string {
  let d = destinations.get(target);
  if (d === undefined) {
    d = resolveDestination(target);
    destinations.set(target, d);
  }
  return d;
}

function resolveDestination(target: UpstreamTarget): Destination | string {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return 'the upstream URL is not valid';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'the upstream URL is not http(s)';
  // undici would silently drop userinfo; refusing keeps a misconfigured secret from being ignored unnoticed.
  if (url.username || url.password) return 'the upstream URL carries credentials; use headers';
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) {
    // Said once, by name: undici would refuse it on every call with an error that names neither.
    if (!SENDABLE_VALUE.test(value))
      return `the configured header ${name} holds characters HTTP cannot carry`;
    if (!OWN_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  return { origin: url.origin, path: `${url.pathname}${url.search}`, headers };
}

function requestHeaders(
  configured: Readonly<Record<string, string>>,
  call: ForwardCall,
): Record<string, string> {
  const headers: Record<string, string> = { ...configured };
  headers['content-type'] = 'application/json';
  headers['x-request-id'] = call.requestId;
  headers['x-toolgate-account'] = call.accountId;
  headers['x-toolgate-key'] = call.keyId;
  headers['x-toolgate-tool'] = call.tool;
  return headers;
}

/** How a call ended, as the caller's result. */
function classify(outcome: Exchanged, target: UpstreamTarget): UpstreamResult {
  switch (outcome.kind) {
    case 'answered':
      return interpret(outcome.status, outcome.text);
    case 'oversized':
      return wanted(outcome.status)
        ? upstreamError(`answer larger than ${target.maxResponseBytes} bytes`)
        : unwanted(outcome.status);
    case 'timeout':
      return timeout(target.timeoutMs);
    case 'failed':
      // Said as what it was: the pool's connect timeout may end the call long before `timeout_ms`.
      if (errorCode(outcome.error) === CONNECT_TIMEOUT)
        return { kind: 'error', code: 'upstream_timeout', reason: `connect timed out (${CONNECT_TIMEOUT})` };
      return upstreamError(describeFailure(outcome.error));
  }
}

/** The statuses whose body is read as an answer; every other is an upstream error. */
function wanted(status: number): boolean {
  return (status >= 200 && status < 300) || status === 404 || status === 400 || status === 422;
}

function unwanted(status: number): UpstreamResult {
  if (status === 401 || status === 403) {
    return upstreamError(`upstream refused toolgate's credentials (answered ${status})`);
  }
  return upstreamError(`upstream answered ${status}`);
}

/** An answer read in full (an unwanted status's body was read too, so the connection stays reusable). */
function interpret(status: number, text: string): UpstreamResult {
  if (!wanted(status)) return unwanted(status);
  const parsed = parseJson(text);

  if (status === 404) {
    const body = isPlainObject(parsed) ? parsed : undefined;
    return {
      kind: 'answer',
      httpStatus: 404,
      status: 'not_found',
      results: body?.results ?? null,
      resultsJson: body ? resultsJson(text, body) : 'null',
      metadata: metadataOf(body),
      body,
    };
  }
  if (status === 400 || status === 422) {
    const message = isPlainObject(parsed) ? parsed.message : undefined;
    return { kind: 'rejected', message: typeof message === 'string' ? cut(message) : undefined };
  }

  if (parsed === INVALID) return upstreamError('invalid JSON');
  if (!isPlainObject(parsed)) return upstreamError('not an object');
  let answerStatus: 'ok' | 'not_found';
  if (!('status' in parsed) || parsed.status === 'ok') answerStatus = 'ok';
  else if (parsed.status === 'not_found') answerStatus = 'not_found';
  else return upstreamError(`unknown status ${cut(JSON.stringify(parsed.status), 40)}`);
  return {
    kind: 'answer',
    httpStatus: status,
    status: answerStatus,
    results: parsed.results ?? null,
    resultsJson: resultsJson(text, parsed),
    metadata: metadataOf(parsed),
    body: parsed,
  };
}

/** The answer's `results` as written in `text`, which JSON.parse turned into `body`. */
function resultsJson(text: string, body: Record<string, unknown>): string | undefined {
  // `null` too is written as null: the envelope's `results` is then null, as when absent.
  if (body.results === undefined || body.results === null) return 'null';
  return memberJson(text, 'results');
}

const INVALID = Symbol('invalid JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return INVALID;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function metadataOf(body: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return isPlainObject(body?.metadata) ? body.metadata : undefined;
}

/** Cut by code points, so a message never ends in half a surrogate pair. */
function cut(text: string, max = MAX_MESSAGE_CHARS): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

function upstreamError(reason: string): UpstreamResult {
  return { kind: 'error', code: 'upstream_error', reason };
}

function timeout(ms: number): UpstreamResult {
  return { kind: 'error', code: 'upstream_timeout', reason: `no complete answer within ${ms} ms` };
}

function errorCode(err: unknown): string | undefined {
  if (!isPlainErrorLike(err)) return undefined;
  if (typeof err.code === 'string') return err.code;
  // Happy-eyeballs connects fail with an AggregateError whose parts carry the code.
  if (Array.isArray(err.errors)) return errorCode(err.errors[0]);
  return errorCode(err.cause);
}

function isPlainErrorLike(value: unknown): value is { code?: unknown; errors?: unknown; cause?: unknown } {
  return typeof value === 'object' && value !== null;
}

/** From the error's code only: messages may quote the request, and headers hold secrets. */
function describeFailure(err: unknown): string {
  const code = errorCode(err);
  if (code === undefined) return `request failed (${err instanceof Error ? err.name : typeof err})`;
  const what = NETWORK_REASONS[code] ?? 'request failed';
  return `${what} (${code})`;
}
