/**
 * Calls made with a credential, for every test: the one place that writes the `Authorization`
 * header. `target` is either a Fastify app (called with `inject`, no socket) or a server's port or
 * base URL (called with `fetch`). A test about the header itself (absent, malformed, fuzzed) still
 * writes it by hand.
 */
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN } from './helpers.js';

/**
 * The value of an `Authorization` header carrying `credential` as a bearer token (a credential a
 * test has not got yet is sent as the text `undefined`, as a template string would).
 */
export function bearer(credential: string | undefined): string {
  return `Bearer ${credential}`;
}

/** Headers carrying `credential` (the JSON content type too when `json`), then `extra`. */
export function authHeaders(
  credential: string,
  extra: Record<string, string> = {},
  json = false,
): Record<string, string> {
  return {
    authorization: bearer(credential),
    ...(json ? { 'content-type': 'application/json' } : {}),
    ...extra,
  };
}

/** A Fastify app, or a listening server's port or base URL. */
export type CallTarget = FastifyInstance | { app: FastifyInstance } | number | string;

export interface CallInit {
  method?: string;
  /** More headers, after the credential's (so a test can override the content type). */
  headers?: Record<string, string>;
  /** A raw body instead of `JSON.stringify(args)`. */
  rawBody?: string;
  /** The client's address, on an app (inject) only. */
  remoteAddress?: string;
  /** Aborts the call (fetch only). */
  signal?: AbortSignal;
}

export interface CallResult {
  status: number;
  /** `status`, under inject's name (the tests were written against inject). */
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as text, as inject's `body`. */
  body: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  data: any;
  /** The body parsed as JSON; throws when it is not, as inject's `json()`. */
  json(): any;
}

function baseUrl(target: number | string): string {
  return typeof target === 'number' ? `http://127.0.0.1:${target}` : target.replace(/\/$/, '');
}

function parse(text: string): any {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Sends `method path` with `credential`: `payload` as JSON unless `raw`. */
export async function send(
  target: CallTarget,
  credential: string | null,
  method: string,
  path: string,
  payload?: unknown,
  init: { headers?: Record<string, string>; raw?: string; remoteAddress?: string; signal?: AbortSignal } = {},
): Promise<CallResult> {
  const body = init.raw ?? (payload === undefined ? undefined : JSON.stringify(payload));
  const headers: Record<string, string> = {
    ...(credential === null ? {} : { authorization: bearer(credential) }),
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...init.headers,
  };
  let status: number;
  let text: string;
  let outHeaders: Record<string, string | string[] | undefined>;
  if (typeof target === 'number' || typeof target === 'string') {
    if (init.remoteAddress !== undefined) throw new Error('remoteAddress is for an app (inject) only');
    const res = await fetch(`${baseUrl(target)}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    status = res.status;
    text = await res.text();
    outHeaders = Object.fromEntries(res.headers.entries());
  } else {
    const app = 'app' in target ? target.app : target;
    const res = await app.inject({
      method: method as 'GET',
      url: path,
      headers,
      ...(body === undefined ? {} : { payload: body }),
      ...(init.remoteAddress === undefined ? {} : { remoteAddress: init.remoteAddress }),
    });
    status = res.statusCode;
    text = res.body;
    outHeaders = res.headers as Record<string, string | string[] | undefined>;
  }
  return {
    status,
    statusCode: status,
    headers: outHeaders,
    body: text,
    data: parse(text),
    json: () => JSON.parse(text),
  };
}

/**
 * `POST /api/v1/tools/<name>` with `key`, `args` as the JSON body (no body when `args` is
 * undefined): the REST door.
 */
export function callTool(
  target: CallTarget,
  key: string,
  name: string,
  args?: unknown,
  init: CallInit = {},
): Promise<CallResult> {
  return send(target, key, init.method ?? 'POST', `/api/v1/tools/${name}`, args, {
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.rawBody !== undefined ? { raw: init.rawBody } : {}),
    ...(init.remoteAddress !== undefined ? { remoteAddress: init.remoteAddress } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

/** The admin API (`/admin/v1…`) with an admin token (the test admin token unless told). */
export function admin(target: CallTarget, token: string = ADMIN_TOKEN) {
  const call = (method: string, url: string, payload?: unknown) =>
    send(target, token, method, `/admin/v1${url}`, payload);
  return {
    get: (url: string) => call('GET', url),
    post: (url: string, body: unknown = {}) => call('POST', url, body),
    patch: (url: string, body: unknown) => call('PATCH', url, body),
    put: (url: string, body: unknown) => call('PUT', url, body),
    del: (url: string) => call('DELETE', url),
  };
}

/** A JSON-RPC message to `/mcp` with `key` (the streamable-HTTP content types), over inject or fetch. */
export function mcpPost(
  target: CallTarget,
  key: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  return send(target, key, 'POST', '/mcp', message, {
    headers: { accept: 'application/json, text/event-stream', ...headers },
  });
}
