/**
 * @module One JSON request to toolgate over global fetch, shared by the tools client and the admin
 * client: an answer is JSON or a ToolgateError (the server's error body, a foreign answer, or no
 * answer at all, naming the URL it could not reach).
 */
import { ToolgateError } from './errors.js';
import type { ErrorBody } from './types.js';

/** A server's base URL, checked (absolute, http or https) and without its trailing slashes. */
export function serverUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL (got "${baseUrl}").`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseUrl must be an http or https URL (got "${baseUrl}").`);
  }
  return url.href.replace(/\/+$/, '');
}

export interface JsonRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Sent as JSON when present. */
  body?: unknown;
  timeoutMs: number;
  fetch: typeof fetch;
}

/** Sends the request; resolves to the parsed JSON of a 2xx answer, rejects with a ToolgateError. */
export async function sendJson<T>(req: JsonRequest): Promise<T> {
  return (await exchangeJson<T>(req)).body;
}

/** As sendJson, with the answer's headers (`idempotent-replayed`, for one). */
export async function exchangeJson<T>(req: JsonRequest): Promise<{ body: T; headers: Headers }> {
  const { url, timeoutMs } = req;
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await req.fetch(url, {
      method: req.method,
      headers: {
        ...req.headers,
        ...(req.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        Accept: 'application/json',
      },
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
      signal,
    });
    text = await response.text();
  } catch (err) {
    throw networkError(url, timeoutMs, err);
  }
  const requestId = response.headers.get('x-request-id');
  const parsed = parseJson(text);
  if (response.ok) {
    if (parsed === undefined) {
      throw new ToolgateError({
        status: response.status,
        code: 'invalid_response',
        message: `${url} answered ${response.status} with a body that is not JSON.`,
        requestId,
      });
    }
    return { body: parsed as T, headers: response.headers };
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  const retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : null;
  if (isErrorBody(parsed)) {
    throw new ToolgateError({
      status: response.status,
      code: parsed.code,
      message: parsed.message,
      requestId: typeof parsed.request_id === 'string' ? parsed.request_id : requestId,
      body: parsed,
      retryAfterSeconds,
    });
  }
  // Not toolgate's error shape: a proxy or another server answered.
  throw new ToolgateError({
    status: response.status,
    code: 'http_error',
    message: `${url} answered HTTP ${response.status} ${response.statusText}`.trim(),
    requestId,
    retryAfterSeconds,
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.status === 'error' && typeof v.code === 'string' && typeof v.message === 'string';
}

function networkError(url: string, timeoutMs: number, err: unknown): ToolgateError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new ToolgateError({
      status: 0,
      code: 'network_error',
      message: `No answer from ${url} within ${timeoutMs} ms.`,
      cause: err,
    });
  }
  // undici puts the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`.
  const reason = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new ToolgateError({
    status: 0,
    code: 'network_error',
    message: `Could not reach ${url}: ${reason}.`,
    cause: err,
  });
}
