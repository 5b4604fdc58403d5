/**
 * What every answer to a hostile request must look like: status < 500; JSON; a 4xx is the one
 * error shape with a code from the closed list whose status matches; the request id matches the
 * header; nothing internal leaks; a 2xx only for a request carrying the credential it needs.
 */
import { STATUS_CODES } from 'node:http';
import { ERROR_STATUS } from '../../src/domain/errors.js';
import { describeBody, type Materialized, type Secrets } from './hostile-input.js';

export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const REQUEST_ID = /^req_[0-9a-z]{26}$/;

/** Signs of internals in a body: stack frames, file paths, driver and engine error names. */
const LEAKS: readonly RegExp[] = [
  /\n\s+at /,
  /\bat [\w.<>]+ \(/,
  /\((?:file:\/\/)?\/[^)]*:\d+:\d+\)/,
  /node_modules/,
  /file:\/\//,
  /SqliteError|SQLITE_|better-sqlite3|PostgreSQL/i,
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError)\b/,
  /Maximum call stack/i,
  /FST_[A-Z_]+/,
  /ERR_[A-Z_]{4,}/,
  /\/src\/(?:http|domain|service|store)\//,
];

/** Object.prototype and friends as they were before the first request. */
export function prototypeSnapshot(): string {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype]
    .map((p) => Object.getOwnPropertyNames(p).sort().join(','))
    .join('|');
}

export function assertNotPolluted(before: string): void {
  const probe = {} as Record<string, unknown>;
  const inherited: string[] = [];
  for (const k in probe) inherited.push(k);
  if (
    probe.polluted !== undefined ||
    probe.isAdmin !== undefined ||
    inherited.length > 0 ||
    Object.keys(Object.prototype).length > 0 ||
    prototypeSnapshot() !== before
  ) {
    throw new Error(
      `Object.prototype was polluted: inherited [${inherited.join(', ')}], polluted=${String(probe.polluted)}`,
    );
  }
}

function header(a: Answer, name: string): string | undefined {
  const v = a.headers[name];
  return v === undefined ? undefined : Array.isArray(v) ? v.join(', ') : String(v);
}

export function describe(req: Materialized, a?: Answer): string {
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `${k}: ${JSON.stringify(v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v)}`)
    .join('; ');
  const url = req.url.length > 300 ? `${req.url.slice(0, 300)}…(${req.url.length} chars)` : req.url;
  const lines = [`request: ${req.method} ${url}`, `  headers: ${headers || '(none)'}`];
  lines.push(`  body: ${describeBody(req.payload)}`);
  if (a) {
    lines.push(`answer: ${a.statusCode} ${JSON.stringify(a.headers)}`);
    lines.push(`  body: ${a.body.length > 600 ? `${a.body.slice(0, 600)}…` : a.body}`);
  }
  return lines.join('\n');
}

function fail(req: Materialized, a: Answer, why: string): never {
  throw new Error(`${why}\n${describe(req, a)}`);
}

/** The invariants every answer holds, whatever was sent. */
export function checkAnswer(req: Materialized, a: Answer, s: Secrets): Record<string, unknown> | undefined {
  const status = a.statusCode;
  if (status >= 500) fail(req, a, `answered ${status}: a hostile request must never cause a 5xx`);
  if (status < 200 || status >= 500 || (status >= 300 && status < 400))
    fail(req, a, `answered ${status}: expected a 2xx or a 4xx`);

  const requestId = header(a, 'x-request-id');
  if (!requestId || !REQUEST_ID.test(requestId)) fail(req, a, 'no well-formed x-request-id header');
  const incoming = req.headers['x-request-id'];
  if (incoming !== undefined && incoming === requestId) fail(req, a, 'an incoming x-request-id was echoed');

  const contentType = header(a, 'content-type') ?? '';
  if (!/^application\/json\b/.test(contentType)) fail(req, a, `content-type is "${contentType}", not JSON`);

  const isHead = req.method.toUpperCase() === 'HEAD';
  let body: Record<string, unknown> | undefined;
  if (isHead) {
    if (a.body !== '') fail(req, a, 'a HEAD answer carried a body');
  } else {
    try {
      body = JSON.parse(a.body) as Record<string, unknown>;
    } catch {
      fail(req, a, 'the body is not JSON');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      fail(req, a, 'the body is not a JSON object');
  }

  if (status >= 400 && body) checkErrorShape(req, a, body);

  if (status < 300) checkAuthorized(req, a, body, s);
  return body;
}

/**
 * A 4xx (or 5xx) body in the one error shape: `status` "error", a code from the closed list whose
 * status it is, the reason phrase, a message, the request id of the `x-request-id` header, nothing
 * internal; a 405 with `Allow: POST`, a 429 rate_limited with `Retry-After`.
 */
export function checkErrorShape(req: Materialized, a: Answer, body: Record<string, unknown>): void {
  const status = a.statusCode;
  const requestId = header(a, 'x-request-id');
  if (body.status !== 'error') fail(req, a, 'an error body without status "error"');
  const code = body.code;
  if (typeof code !== 'string' || !Object.hasOwn(ERROR_STATUS, code))
    fail(req, a, `code ${JSON.stringify(code)} is not in the closed list`);
  const expected = ERROR_STATUS[code as keyof typeof ERROR_STATUS];
  if (expected !== status) fail(req, a, `code ${code} maps to ${expected}, answered ${status}`);
  if (body.error !== STATUS_CODES[status]) fail(req, a, `error is not the reason phrase of ${status}`);
  if (typeof body.message !== 'string' || body.message === '') fail(req, a, 'no message');
  if (body.request_id !== requestId) fail(req, a, 'request_id differs from the x-request-id header');
  for (const leak of LEAKS) if (leak.test(a.body)) fail(req, a, `the error body leaks internals (${leak})`);
  if (a.body.includes(process.cwd())) fail(req, a, 'the error body names a path on the server');
  if (code === 'method_not_allowed' && header(a, 'allow') !== 'POST') fail(req, a, '405 without Allow: POST');
  if (code === 'rate_limited' && header(a, 'retry-after') === undefined)
    fail(req, a, '429 rate_limited without Retry-After');
}

/**
 * No secret in an answer's headers or body: not the caller's key, the victim's, the admin token or
 * the server's key secret. A secret the request itself carried in its body may come back as an
 * echo of that body (the caller's own words); one sent only in a header may not.
 */
export function assertNoSecrets(
  req: Materialized,
  a: Answer,
  s: Secrets,
  extra: readonly string[] = [],
): void {
  const sentBody =
    req.payload === undefined
      ? ''
      : typeof req.payload === 'string'
        ? req.payload
        : req.payload.toString('utf8');
  const headers = JSON.stringify(a.headers);
  for (const [name, secret] of [
    ["the caller's key", s.key],
    ["the victim's key", s.victimKey],
    ['the admin token', s.admin],
    ...extra.map((x) => ['a server secret', x] as const),
  ] as const) {
    if (secret === '') continue;
    if (headers.includes(secret)) fail(req, a, `${name} is in the answer's headers`);
    if (a.body.includes(secret) && !sentBody.includes(secret))
      fail(req, a, `${name} is in the answer's body`);
  }
}

/** Whether a request path is the root's once its dot segments are resolved (as the router does). */
function isRoot(url: string): boolean {
  try {
    return new URL(url, 'http://host').pathname === '/';
  } catch {
    return false;
  }
}

/**
 * A 2xx is only ever the public routes, or a request carrying the credential its route needs: an
 * admin answer needs the admin token, a tool answer a key (checked loosely: the header contains
 * the secret; which exact spellings are accepted is the routes' business).
 */
function checkAuthorized(
  req: Materialized,
  a: Answer,
  body: Record<string, unknown> | undefined,
  s: Secrets,
) {
  const auth = req.authorization ?? '';
  const hasKey = auth.includes(s.key) || auth.includes(s.victimKey);
  const hasAdmin = auth.includes(s.admin);
  if (body === undefined) {
    // HEAD: no body to tell which route answered.
    if (hasAdmin || /healthz|readyz|openapi\.json/.test(req.url) || isRoot(req.url)) return;
    fail(req, a, 'a 2xx HEAD answer without the admin token, off the public routes');
  }
  // The root's pointer to the OpenAPI document (`openapi` member), the document itself, the probes.
  const isPublic =
    'openapi' in body || ((body.status === 'ok' || body.status === 'ready') && 'store' in body);
  if (isPublic) return;
  if ('results' in body) {
    if (!hasKey) fail(req, a, 'a tool answered 2xx without a valid API key');
    return;
  }
  if (!hasAdmin) fail(req, a, 'an admin answer (2xx) without the admin token');
  const unstorable = unstorableIn(req);
  if (unstorable)
    fail(req, a, `an admin answer (2xx) to a request whose ${unstorable} PostgreSQL could not store`);
}

/** NUL or an unpaired surrogate: what PostgreSQL cannot store, so no admin request holding it may succeed. */
function unstorableText(text: string): boolean {
  return text.includes('\0') || !(text as string & { isWellFormed(): boolean }).isWellFormed();
}

function unstorableValue(value: unknown): boolean {
  if (typeof value === 'string') return unstorableText(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => unstorableText(k) || unstorableValue(v));
}

/**
 * Where a request holds a string PostgreSQL cannot store, once decoded as the server decodes it (a
 * path segment or query component that does not percent-decode to UTF-8 counts as one), if it does.
 */
function unstorableIn(req: Materialized): string | undefined {
  const decodes = (part: string) => {
    try {
      return !unstorableText(decodeURIComponent(part.replaceAll('+', ' ')));
    } catch {
      return false;
    }
  };
  const [path = '', query = ''] = req.url.split(/\?(.*)/s);
  if (!path.split('/').every(decodes)) return 'path holds a string';
  if (query !== '' && !query.split('&').every(decodes)) return 'query holds a string';
  // Fastify reads no body on GET and HEAD.
  if (req.payload === undefined || ['GET', 'HEAD'].includes(req.method.toUpperCase())) return undefined;
  try {
    const text = typeof req.payload === 'string' ? req.payload : req.payload.toString('utf8');
    if (unstorableValue(JSON.parse(text))) return 'body holds a string';
  } catch {}
  return undefined;
}
