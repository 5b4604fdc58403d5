/**
 * Generated hostile input for the HTTP surface (fast-check arbitraries).
 *
 * Everything is generated as small, printable descriptors (a body of 70,000 bytes is `{kind:'big',
 * size:70000, ...}`, a real key is the placeholder `{{KEY}}`), and turned into bytes only when a
 * case runs (`materialize`). So a failing case prints a readable counterexample, and the same seed
 * gives the same descriptors on every run even though the ids and keys of the scratch store differ.
 */
import { METHODS } from 'node:http';
import fc from 'fast-check';

/** The real secrets and ids of the scratch store, substituted for the placeholders at run time. */
export interface Secrets {
  /** The caller's key: its account id is never generated, so no admin call can revoke it. */
  key: string;
  /** A key of the victim account, whose ids the admin calls do target (it may end up revoked). */
  victimKey: string;
  admin: string;
  /** The victim account (its key is `victimKey`). */
  accountId: string;
  /** Three more accounts the admin calls target; they are never closed, so they stay usable. */
  spareAccountIds: readonly [string, string, string];
  keyId: string;
  userId: string;
}

/** `{{NAME}}` in a url, a header value or a body: replaced by the real value when the case runs. */
export function resolve(text: string, s: Secrets): string {
  if (!text.includes('{{')) return text;
  const flip = (k: string) => {
    // The last character moved one step along the base62 alphabet: same shape, another key.
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const last = k.at(-1) ?? '0';
    return k.slice(0, -1) + alphabet[(alphabet.indexOf(last) + 1) % alphabet.length];
  };
  return text
    .replaceAll('{{KEY}}', s.key)
    .replaceAll('{{VICTIM_KEY}}', s.victimKey)
    .replaceAll('{{KEY_FLIPPED}}', flip(s.key))
    .replaceAll('{{KEY_SHORT}}', s.key.slice(0, -1))
    .replaceAll('{{KEY_LONG}}', `${s.key}A`)
    .replaceAll('{{KEY_UPPER}}', s.key.toUpperCase())
    .replaceAll('{{KEY_OTHER_PREFIX}}', `zz${s.key.slice(s.key.indexOf('_'))}`)
    .replaceAll('{{KEY_BODY}}', s.key.slice(s.key.indexOf('_') + 1))
    .replaceAll('{{ADMIN}}', s.admin)
    .replaceAll('{{ADMIN_SHORT}}', s.admin.slice(0, -1))
    .replaceAll('{{ADMIN_UPPER}}', s.admin.toUpperCase())
    .replaceAll('{{ACCOUNT}}', s.accountId)
    .replaceAll('{{ACCOUNT_1}}', s.spareAccountIds[0])
    .replaceAll('{{ACCOUNT_2}}', s.spareAccountIds[1])
    .replaceAll('{{ACCOUNT_3}}', s.spareAccountIds[2])
    .replaceAll('{{KEY_ID}}', s.keyId)
    .replaceAll('{{USER_ID}}', s.userId);
}

// ---------------------------------------------------------------------------------------------
// Methods

const STANDARD_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;

/** Methods an in-process `inject` can carry: every method Node knows, in any case. */
export const methodArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('POST') },
  { weight: 6, arbitrary: fc.constantFrom(...STANDARD_METHODS) },
  { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
  // inject takes a method in upper or lower case only; mixed case goes over the socket.
  { weight: 1, arbitrary: fc.constantFrom(...STANDARD_METHODS).map((m) => m.toLowerCase()) },
);

// ---------------------------------------------------------------------------------------------
// Credentials

export type CredClass = 'none' | 'key' | 'admin' | 'bad' | 'odd';

/** An `Authorization` header (undefined: absent) and what it is meant to be. */
export interface Cred {
  cls: CredClass;
  value: string | undefined;
}

const cred = (cls: CredClass, value: string | undefined): Cred => ({ cls, value });

const base62 = fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
const base62String = (min: number, max: number) =>
  fc.array(base62, { minLength: min, maxLength: max }).map((a) => a.join(''));

/** Keys of every wrong shape: none of these may open anything. */
const badKeyArb: fc.Arbitrary<Cred> = fc.oneof(
  fc
    .constantFrom(
      '',
      ' ',
      '\t',
      'Bearer',
      'Bearer ',
      'Bearer  ',
      'Bearer\t',
      'Bearer null',
      'Bearer undefined',
      'Bearer tg_',
      'Bearer _',
      'Bearer tg',
      'Token {{KEY}}',
      'Bearer{{KEY}}',
      'Bearer: {{KEY}}',
      '{{KEY}}',
      'Bearer "{{KEY}}"',
      'Bearer <{{KEY}}>',
      'Bearer {{KEY}} {{KEY}}',
      'Bearer {{KEY}},{{KEY}}',
      'Bearer {{KEY}}\u0000',
      'Bearer {{KEY}}\u00a0x',
      'Bearer {{KEY_FLIPPED}}',
      'Bearer {{KEY_SHORT}}',
      'Bearer {{KEY_LONG}}',
      'Bearer {{KEY_OTHER_PREFIX}}',
      'Bearer {{KEY_BODY}}',
      'Bearer _{{KEY_BODY}}',
      'Bearer tg-{{KEY_BODY}}',
      'Bearer tg__{{KEY_BODY}}',
      'Bearer {{ADMIN_SHORT}}',
      'Bearer {{ADMIN_UPPER}}',
      'Bearer tg_ÄÖÜäöüßéèà',
      'Bearer tg_аааааааааа1',
      'Bearer tg_😀😀😀😀😀😀',
      'Bearer tg_\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000',
      "Bearer tg_' OR 1=1--",
      'Bearer tg_%00%00%00%00',
      'Bearer tg_../../../..',
      'Bearer tg_-----------',
      'Bearer tg_+/+/+/+/+/=',
      'Bearer __proto__',
      'Bearer constructor',
      'Bearer tg_constructor',
      'Bearer tg___proto__',
      'Basic dXNlcjpwYXNz',
      'Basic {{KEY}}',
      'Digest username="x"',
      'Negotiate YII=',
      'Bearer Bearer {{KEY}}',
    )
    .map((v) => cred('bad', v)),
  // Right prefix, wrong length.
  fc
    .oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 12, max: 40 }))
    .chain((n) => base62String(n, n).map((b) => cred('bad', `Bearer tg_${b}`))),
  // Right length, a character outside base62.
  fc
    .tuple(base62String(10, 10), fc.constantFrom('-', '_', '+', '/', '=', '.', '~', '!', '$', 'é', 'ı', '٣'))
    .map(([b, c]) => cred('bad', `Bearer tg_${b}${c}`)),
  // Well shaped but unknown, under another prefix or none.
  fc
    .tuple(fc.constantFrom('tg', 'ms', 'TG', 'sk', 'x', 'tg_tg'), base62String(11, 11))
    .map(([p, b]) => cred('bad', `Bearer ${p}_${b}`)),
  // Very long.
  fc
    .tuple(fc.integer({ min: 200, max: 12_000 }), fc.constantFrom('a', '0', 'é', ' '))
    .map(([n, c]) => cred('bad', `Bearer tg_${c.repeat(n)}x`)),
  fc.string({ maxLength: 40 }).map((s) => cred('bad', `Bearer tg_${s}x`)),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => cred('bad', `${s}x`)),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => cred('bad', `Bearer ${s}x`)),
);

/** Accepted spellings of a valid key (the scheme is case-insensitive). */
const validKeyArb: fc.Arbitrary<Cred> = fc
  .constantFrom('Bearer {{KEY}}', 'bearer {{KEY}}', 'BEARER {{KEY}}', 'BeArEr {{KEY}}')
  .map((v) => cred('key', v));

/** Whitespace around a valid key: the contract does not say; anything but a 5xx is fine. */
const oddKeyArb: fc.Arbitrary<Cred> = fc
  .constantFrom(
    'Bearer  {{KEY}}',
    'Bearer   {{KEY}}',
    ' Bearer {{KEY}}',
    'Bearer {{KEY}} ',
    'Bearer\t{{KEY}}',
    'Bearer {{KEY}}\t',
    'Bearer\u00a0{{KEY}}',
    'Bearer\u3000{{KEY}}',
    'Bearer \r\n{{KEY}}',
  )
  .map((v) => cred('odd', v));

const adminArb: fc.Arbitrary<Cred> = fc
  .constantFrom('Bearer {{ADMIN}}', 'bearer {{ADMIN}}')
  .map((v) => cred('admin', v));

export const credArb = (weights: {
  none: number;
  key: number;
  victim: number;
  admin: number;
  bad: number;
  odd: number;
}): fc.Arbitrary<Cred> =>
  fc.oneof(
    { weight: weights.none, arbitrary: fc.constant(cred('none', undefined)) },
    { weight: weights.key, arbitrary: validKeyArb },
    { weight: weights.victim, arbitrary: fc.constant(cred('key', 'Bearer {{VICTIM_KEY}}')) },
    { weight: weights.admin, arbitrary: adminArb },
    { weight: weights.bad, arbitrary: badKeyArb },
    { weight: weights.odd, arbitrary: oddKeyArb },
  );

// ---------------------------------------------------------------------------------------------
// Content types

export const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 3, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
      'APPLICATION/JSON; CHARSET=UTF-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset="utf-8"',
      'application/json; foo="bar;baz"',
      'application/json; charset=utf-8; charset=latin1',
      'application/json;',
      'application/json ;',
      'application/json\t',
      ' application/json',
      'application/json;;;',
      'application/json; =',
      'application/json; charset',
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'application/jsonx',
      'application/json-patch+json',
      'application/vnd.api+json',
      'application/problem+json',
      'application/ld+json',
      'text/json',
      'text/plain',
      'text/plain; charset=utf-8',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=----x',
      'multipart/form-data',
      'multipart/mixed; boundary="a b"',
      'application/octet-stream',
      'application/xml',
      '*/*',
      'application/*',
      '',
      ' ',
      ';',
      ';;;',
      '/',
      'json',
      'application/',
      '/json',
      'application/json, text/plain',
      'application/json\u0000',
      'application/jsön',
      'application/json; charset=\u00ff',
      '__proto__',
      'constructor',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((p) => `application/json; ${p}`) },
);

/** Mostly right, so that the arguments are reached; the hostile ones still come up. */
export const mostlyJsonArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: contentTypeArb },
);

// ---------------------------------------------------------------------------------------------
// Extra headers

const headerNameArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'x-request-id',
      'content-length',
      'transfer-encoding',
      'content-encoding',
      'expect',
      'host',
      'accept',
      'accept-encoding',
      'accept-charset',
      'connection',
      'x-forwarded-for',
      'x-forwarded-proto',
      'x-real-ip',
      'forwarded',
      'cookie',
      'origin',
      'referer',
      'user-agent',
      'x-http-method-override',
      'x-admin-token',
      'proxy-authorization',
      'ratelimit',
      'if-none-match',
      'range',
      'upgrade',
      '__proto__',
      'constructor',
      'prototype',
    ),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/) },
);

const headerValueArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      '0',
      '1',
      '-1',
      '2',
      '65537',
      '99999999999999999999',
      'abc',
      'chunked',
      'gzip',
      'gzip, chunked',
      'br',
      'deflate',
      'identity',
      '100-continue',
      'close',
      'keep-alive',
      'upgrade',
      'websocket',
      'h2c',
      'req_spoofed0000000000000000000',
      '127.0.0.1',
      '[::1]',
      'bytes=0-10',
      '{{ADMIN}}',
      'Bearer {{ADMIN}}',
      '{{KEY}}',
      '__proto__',
      'a'.repeat(8000),
    ),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);

export const extraHeadersArb: fc.Arbitrary<[string, string][]> = fc.oneof(
  { weight: 3, arbitrary: fc.constant([] as [string, string][]) },
  { weight: 2, arbitrary: fc.array(fc.tuple(headerNameArb, headerValueArb), { minLength: 1, maxLength: 4 }) },
);

// ---------------------------------------------------------------------------------------------
// Paths

const percentGarbage = [
  '%',
  '%z',
  '%zz',
  '%G0',
  '%E0%A4%A',
  '%C0%AF',
  '%C0%80',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%FF',
  '%FE%FF',
  '%00',
  '%0A',
  '%0D%0A',
  '%2F',
  '%2f%2f',
  '%5C',
  '%2e%2e',
  '%2e',
  '%25',
  '%2525',
  '%u0041',
  '%%',
];

const urlUnsafe = (s: string) => encodeURIComponent(s);

/** A tool name: the registered one, snake_case unknown ones, and every wrong shape. */
const toolNameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.constant('get_account') },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      'GET_ACCOUNT',
      'Get_Account',
      'get-account',
      'get_account/',
      'get_account/x',
      'get_account//',
      'get_account/..',
      'get_account/../get_account',
      './get_account',
      'x/../get_account',
      'get_account%00',
      'get_account%20',
      '%67et_account',
      'get%5Faccount',
      'get_account;x',
      'get_account.json',
      'get_account%2F',
      'get_account%3F',
      'get_account#frag',
      'get_accounT',
      '_get_account',
      '0get_account',
      '__proto__',
      'constructor',
      'prototype',
      'hasOwnProperty',
      'toString',
      '*',
      ':tool',
      '..',
      '.',
      '...',
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom(...percentGarbage) },
  { weight: 1, arbitrary: fc.constantFrom(...percentGarbage).map((g) => `get_account${g}`) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map(urlUnsafe) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map((s) => `${s}_x`) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }).map(urlUnsafe) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 60, max: 5_000 }), fc.constantFrom('a', 'é', '%41', '_'))
      .map(([n, c]) => (c === 'é' ? urlUnsafe(c.repeat(n)) : c.repeat(n))),
  },
);

const toolPrefixArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('/api/v1/tools/') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/api/v1/tools//',
      '//api/v1/tools/',
      '/api/v1//tools/',
      '/api//v1/tools/',
      '/api/v1/tools/./',
      '/api/v1/./tools/',
      '/api/v1/tools/../tools/',
      '/api/v2/../v1/tools/',
      '/API/v1/tools/',
      '/api/V1/tools/',
      '/api/v1/Tools/',
      '/api/v1/tools%2F',
      '/api%2Fv1%2Ftools%2F',
      '/api/v1/tools/%2e%2e/tools/',
      '/./api/v1/tools/',
      '/api/v1/tools%5C',
      '/api/v1/tools;/',
      '/api/v1/tools/../../../admin/v1/',
      '/api/v1/tools/%2e%2e/%2e%2e/%2e%2e/admin/v1/',
    ),
  },
);

export const toolPathArb: fc.Arbitrary<string> = fc
  .tuple(toolPrefixArb, toolNameArb)
  .map(([prefix, name]) => prefix + name);

/** An id in a path: the real ones (placeholders), well shaped unknown ones, and every wrong shape. */
export const idArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('{{ACCOUNT}}') },
  { weight: 6, arbitrary: fc.constantFrom('{{ACCOUNT_1}}', '{{ACCOUNT_2}}', '{{ACCOUNT_3}}') },
  { weight: 2, arbitrary: fc.constantFrom('{{KEY_ID}}', '{{USER_ID}}') },
  { weight: 2, arbitrary: fc.stringMatching(/^(acc|key|usr|led)_[0-9a-z]{26}$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '%20',
      '0',
      '-1',
      '1e9',
      'null',
      'undefined',
      'NaN',
      'true',
      '[]',
      '{}',
      '__proto__',
      'constructor',
      'prototype',
      'hasOwnProperty',
      'toString',
      'valueOf',
      '..',
      '.',
      '...',
      '%2e%2e',
      '%2e',
      '..%2F..%2F..%2Fetc%2Fpasswd',
      '%00',
      'acc_%00',
      "'%20OR%201=1--",
      '%27%3B%20DROP%20TABLE%20accounts%3B--',
      '%22',
      'acc_',
      'acc',
      'ACC_01M7ZJ06PJ02TRVESB5M3MV35B',
      '*',
      '%2A',
      ';',
      'a;b',
      'a,b',
      ':id',
      '{id}',
      '%7Bid%7D',
      '{{ACCOUNT}}/',
      '{{ACCOUNT}}%00',
      '{{ACCOUNT}}%ED%A0%80',
      '%ED%BF%BF',
      '{{ACCOUNT}}%F0%9F%98%80',
      '{{ACCOUNT}}%20',
      '{{ACCOUNT}}x',
      '{{ACCOUNT}}/..',
      '{{ACCOUNT}}/../{{ACCOUNT}}',
      '{{KEY_ID}}x',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(...percentGarbage) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(99, 100, 101, 199, 200, 201, 255, 256, 1000, 10_000),
        fc.constantFrom('a', 'é', '%41'),
      )
      .map(([n, c]) => (c === 'é' ? urlUnsafe(c.repeat(n)) : c.repeat(n))),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map(urlUnsafe) },
  { weight: 1, arbitrary: fc.webSegment() },
);

const planIdArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'free',
      'subscription_27',
      'subscription_97',
      'tiny',
      'fuzz-plan',
      'BAD',
      '-x',
      '_x',
      'x'.repeat(64),
      'x'.repeat(65),
      '__proto__',
      'constructor',
    ),
  },
  { weight: 2, arbitrary: idArb },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/) },
);

const queryArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '?',
      '?&',
      '?=',
      '?limit=1',
      '?limit=50',
      '?limit=500',
      '?limit=501',
      '?limit=0',
      '?limit=-1',
      '?limit=1.5',
      '?limit=1e3',
      '?limit=',
      '?limit=abc',
      '?limit=9999',
      '?limit=99999999999999999999',
      '?limit=1&limit=2',
      '?limit[]=1',
      '?limit[a]=1',
      '?after=',
      '?after={{ACCOUNT}}',
      '?after=acc_zzzzzzzzzzzzzzzzzzzzzzzzzz',
      '?after=%00',
      '?after=%ED%A0%80',
      '?after=a%ED%BF%BF',
      '?after=%F0%9F%98%80',
      '?after=%zz',
      `?after=${'a'.repeat(101)}`,
      '?limit=2&after={{ACCOUNT}}',
      '?unknown=1',
      '?__proto__[polluted]=1',
      '?__proto__.polluted=1',
      '?constructor[prototype][polluted]=1',
      '?constructor.prototype.polluted=1',
      '?prototype=1',
      '?hasOwnProperty=1',
      '?toString=1',
      '?%zz=1',
      '?a=%zz',
      '?a=%E0%A4%A',
      '?a=%00',
      '?a=1#frag',
      '?a=1?b=2',
      '??',
      `?${'a=1&'.repeat(3_000)}`,
      `?${'x'.repeat(20_000)}`,
    ),
  },
  { weight: 1, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) },
  {
    weight: 1,
    arbitrary: fc
      .dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 4 })
      .map((d) => `?${new URLSearchParams(d).toString()}`),
  },
);

type AdminTemplate = { path: (id: string, plan: string) => string; method: string; body: BodyKind };

type BodyKind = 'none' | 'account' | 'patch' | 'patch-open' | 'key' | 'user' | 'tokens' | 'usage' | 'plan';

const ADMIN_OPS: readonly AdminTemplate[] = [
  { method: 'POST', path: () => '/accounts', body: 'account' },
  { method: 'GET', path: () => '/accounts', body: 'none' },
  { method: 'GET', path: (id) => `/accounts/${id}`, body: 'none' },
  { method: 'PATCH', path: (id) => `/accounts/${id}`, body: 'patch' },
  { method: 'POST', path: (id) => `/accounts/${id}/keys`, body: 'key' },
  { method: 'GET', path: (id) => `/accounts/${id}/keys`, body: 'none' },
  { method: 'DELETE', path: (id) => `/keys/${id.replace('{{ACCOUNT}}', '{{KEY_ID}}')}`, body: 'none' },
  { method: 'POST', path: (id) => `/accounts/${id}/users`, body: 'user' },
  { method: 'GET', path: (id) => `/accounts/${id}/users`, body: 'none' },
  { method: 'DELETE', path: (id) => `/users/${id.replace('{{ACCOUNT}}', '{{USER_ID}}')}`, body: 'none' },
  { method: 'POST', path: (id) => `/accounts/${id}/tokens`, body: 'tokens' },
  { method: 'GET', path: (id) => `/accounts/${id}/tokens`, body: 'none' },
  { method: 'POST', path: (id) => `/accounts/${id}/usage`, body: 'usage' },
  { method: 'GET', path: () => '/plans', body: 'none' },
  { method: 'PUT', path: (_id, plan) => `/plans/${plan}`, body: 'plan' },
];

const adminPrefixArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 15, arbitrary: fc.constant('/admin/v1') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '//admin/v1',
      '/admin//v1',
      '/admin/v1/',
      '/ADMIN/v1',
      '/admin/V1',
      '/admin/v2',
      '/admin',
      '/admin/v1/.',
      '/admin/v1/..',
      '/admin/v1/%2e%2e',
      '/admin%2Fv1',
      '/api/v1/tools/../../../admin/v1',
      '/admin/v1/../../api/v1/tools',
    ),
  },
);

export interface AdminShape {
  method: string;
  path: string;
  body: BodyKind;
}

export const adminShapeArb: fc.Arbitrary<AdminShape> = fc
  .tuple(fc.constantFrom(...ADMIN_OPS), adminPrefixArb, idArb, planIdArb, queryArb)
  .map(([op, prefix, id, plan, query]) => ({
    method: op.method,
    path: `${prefix}${op.path(id, plan)}${op.method === 'GET' ? query : ''}`,
    // The spare accounts are never closed (closing is for good), so they serve the whole run.
    body: op.body === 'patch' && id.includes('{{ACCOUNT_') ? 'patch-open' : op.body,
  }));

const otherPathArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '/',
      '*',
      '/healthz',
      '/healthz/',
      '/healthz?x=1',
      '/HEALTHZ',
      '/openapi.json',
      '/openapi.json?__proto__[x]=1',
      '/openapi',
      '/docs',
      '/api',
      '/api/',
      '/api/v1',
      '/api/v1/tools',
      '/api/v1/tools/',
      '/api/v2/tools/get_account',
      '/admin',
      '/admin/',
      '/admin/v1',
      '/admin/v1/',
      '/..',
      '/../..',
      '/../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/..%2F..%2Fetc%2Fpasswd',
      '//',
      '///',
      '/./',
      '/.env',
      '/.git/config',
      '/favicon.ico',
      '/robots.txt',
      '/%00',
      '/%zz',
      '/%5C',
      '/;',
      '/?',
      '/#',
      '/__proto__',
      '/constructor/prototype',
      'http://evil.example/healthz',
      'http://evil.example/api/v1/tools/get_account',
      'https://127.0.0.1:1/admin/v1/accounts',
      `/${'a/'.repeat(2_000)}`,
      `/${'x'.repeat(20_000)}`,
    ),
  },
  { weight: 2, arbitrary: fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => `/${urlUnsafe(s)}`) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom('a', '..', '.', '', '%2e%2e', 'admin', 'v1', 'api', 'tools', 'get_account'), {
        maxLength: 8,
      })
      .map((segs) => `/${segs.join('/')}`),
  },
);

// ---------------------------------------------------------------------------------------------
// Bodies

/** A body descriptor; `materializeBody` turns it into what goes on the wire. */
export type BodySpec =
  | { kind: 'none' }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: number[] }
  | { kind: 'bom'; encoding: 'utf8' | 'utf8-bytes' | 'utf16le' | 'utf16be' | 'double'; text: string }
  | { kind: 'deep'; open: string; close: string; depth: number; inner: string; closed: number }
  | { kind: 'big'; size: number; unit: string; wrap: 'member' | 'raw' | 'key' | 'array' | 'unknown' }
  | { kind: 'invalid-utf8'; where: 'value' | 'key' | 'raw' | 'prefix' | 'suffix'; bytes: number[] };

export function materializeBody(spec: BodySpec): string | Buffer | undefined {
  switch (spec.kind) {
    case 'none':
      return undefined;
    case 'text':
      return spec.text;
    case 'bytes':
      return Buffer.from(spec.bytes);
    case 'bom':
      switch (spec.encoding) {
        case 'utf8':
          return `\ufeff${spec.text}`;
        case 'utf8-bytes':
          return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(spec.text)]);
        case 'double':
          return `\ufeff\ufeff${spec.text}`;
        case 'utf16le':
          return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(spec.text, 'utf16le')]);
        case 'utf16be': {
          const le = Buffer.from(spec.text, 'utf16le');
          return Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(le).swap16()]);
        }
      }
      return undefined;
    case 'deep': {
      const closers = spec.close.repeat(Math.min(spec.closed, spec.depth));
      return spec.open.repeat(spec.depth) + spec.inner + closers;
    }
    case 'big': {
      const unitBytes = Buffer.byteLength(spec.unit);
      const frame = (fill: string): string => {
        switch (spec.wrap) {
          case 'member':
            return `{"name":"${fill}"}`;
          case 'unknown':
            return `{"padding":"${fill}"}`;
          case 'key':
            return `{"${fill}":1}`;
          case 'array':
            return `[${fill}]`;
          case 'raw':
            return fill;
        }
      };
      const overhead = Buffer.byteLength(frame(''));
      if (spec.wrap === 'array') {
        // "1," repeated: the array is valid JSON, of about `size` bytes.
        const n = Math.max(0, Math.floor((spec.size - overhead + 1) / 2));
        return frame(n === 0 ? '' : `${'1,'.repeat(n - 1)}1`);
      }
      const n = Math.max(0, Math.floor((spec.size - overhead) / unitBytes));
      return frame(spec.unit.repeat(n));
    }
    case 'invalid-utf8': {
      const bad = Buffer.from(spec.bytes);
      const parts: Buffer[] =
        spec.where === 'value'
          ? [Buffer.from('{"name":"'), bad, Buffer.from('"}')]
          : spec.where === 'key'
            ? [Buffer.from('{"'), bad, Buffer.from('":1}')]
            : spec.where === 'prefix'
              ? [bad, Buffer.from('{}')]
              : spec.where === 'suffix'
                ? [Buffer.from('{}'), bad]
                : [bad];
      return Buffer.concat(parts);
    }
  }
}

/** A short description of a body for failure messages. */
export function describeBody(payload: string | Buffer | undefined): string {
  if (payload === undefined) return '(none)';
  const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const head = bytes.subarray(0, 160).toString('latin1');
  return `${bytes.length} bytes: ${JSON.stringify(head)}${bytes.length > 160 ? '…' : ''}`;
}

const text = (t: string): BodySpec => ({ kind: 'text', text: t });

const hugeInts = [
  -1,
  -0,
  0.5,
  1.5,
  -1.5,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  2 ** 64,
  1e20,
  1e21,
  1e300,
  1.7976931348623157e308,
  -(2 ** 53),
  -(2 ** 63),
  -1e300,
  Number.MIN_VALUE,
];

/** Integers as an operator would send them, with the edges and the absurd mixed in. */
const amountArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 1_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: -1_000, max: 1_000 }) },
  { weight: 2, arbitrary: fc.constantFrom(...hugeInts) },
  { weight: 1, arbitrary: fc.constantFrom('5', '', null, true, [], {}, [1], '1e3', '0x10') },
);

const nameArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'x'.repeat(200),
      'x'.repeat(201),
      'é'.repeat(200),
      '😀'.repeat(100),
      '😀'.repeat(101),
      '\u0000',
      '\ud800',
      '\udfff',
      'a\u0000b',
      'Acme \ud83d',
      'Acme \ud83d\ude00',
      '<script>alert(1)</script>',
      "'; DROP TABLE accounts; --",
      '__proto__',
      'constructor',
      '{{ACCOUNT}}',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 1, true, [], {}, ['x']) },
);

const idemKeyArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('k1', 'k2', 'k3', 'fuzz-0', 'fuzz-1') },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'x'.repeat(200),
      'x'.repeat(201),
      '😀'.repeat(100),
      'k\u0000',
      '\ud800',
      null,
      1,
      {},
    ),
  },
);

const planRefArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('free', 'subscription_27', 'subscription_97', 'tiny', 'fuzz-plan'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('nope', '', 'FREE', '__proto__', 'constructor', 'toString', null, 1, {}),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const boolishArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 0, 1, '', [], {}) },
);

const windowsArb = (limit: fc.Arbitrary<unknown>) =>
  fc.record({
    enrich: fc.record({
      records: fc.record({ '5h': limit, '1w': limit }),
      requests: fc.record({ '5h': limit }),
    }),
    search: fc.record({
      records: fc.record({ '5h': limit, '1w': limit }),
      requests: fc.record({ '5h': limit }),
    }),
  });

function patchArb(closing: boolean): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      name: nameArb,
      plan: planRefArb,
      status: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('active', 'active', 'suspended') },
        { weight: closing ? 1 : 0, arbitrary: fc.constant('closed') },
        { weight: 1, arbitrary: fc.constantFrom('deleted', '', 'ACTIVE', 'Closed', null, 1) },
      ),
      unlimited: boolishArb,
    },
    { requiredKeys: [] },
  );
}

/** Plausible argument objects for each admin endpoint: mostly valid, with wrong members mixed in. */
const argsFor: Record<Exclude<BodyKind, 'none'>, fc.Arbitrary<Record<string, unknown>>> = {
  account: fc.record(
    { name: nameArb, plan: planRefArb, unlimited: boolishArb, tokens: amountArb },
    { requiredKeys: [] },
  ),
  patch: patchArb(true),
  'patch-open': patchArb(false),
  key: fc.record({ name: nameArb }, { requiredKeys: [] }),
  user: fc.record(
    {
      email: fc.oneof(
        { weight: 4, arbitrary: fc.emailAddress() },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            '',
            'not-an-email',
            '@',
            'a@',
            '@b',
            'a@b',
            'a b@c.d',
            `${'x'.repeat(250)}@b.co`,
            `${'x'.repeat(300)}@b.co`,
            'ÄÖÜ@ümlaut.de',
            'a@b.c\u0000',
            'a\ud800@b.co',
            'a\udfff@b.co',
            null,
            1,
          ),
        },
        { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
      ),
      role: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('owner', 'member') },
        { weight: 1, arbitrary: fc.constantFrom('admin', 'root', '', 'OWNER', null) },
      ),
    },
    { requiredKeys: [] },
  ),
  tokens: fc.record(
    {
      kind: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('grant', 'charge', 'adjust') },
        { weight: 1, arbitrary: fc.constantFrom('refund', '', 'GRANT', null) },
      ),
      amount: amountArb,
      reason: fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.constantFrom('x'.repeat(500), 'x'.repeat(501), 'why\u0000', 'why\ud800', '\udfff'),
      ),
      idempotency_key: idemKeyArb,
    },
    { requiredKeys: [] },
  ),
  usage: fc.record(
    {
      category: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('enrich', 'search') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'browse',
            '',
            'ENRICH',
            '__proto__',
            'constructor',
            'enrich\u0000',
            '\udfff',
            null,
            1,
          ),
        },
      ),
      records: amountArb,
      requests: amountArb,
      idempotency_key: idemKeyArb,
    },
    { requiredKeys: [] },
  ),
  plan: fc.record(
    {
      limits: fc.oneof(
        { weight: 4, arbitrary: windowsArb(fc.integer({ min: 0, max: 100_000 })) },
        { weight: 2, arbitrary: windowsArb(amountArb) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom({ 'enrich\u0000': {} }, { '\ud800': { records: { '5h': 1 } } }),
        },
      ),
      unlimited: boolishArb,
    },
    { requiredKeys: [] },
  ),
};

const idemKeyValidArb = fc.oneof(
  fc.constantFrom('k1', 'k2', 'k3', 'k4', 'k5'),
  fc.string({ minLength: 1, maxLength: 30 }),
);

/** Arguments each endpoint accepts, so that the handlers and the store are reached and succeed. */
const validArgsFor: Record<Exclude<BodyKind, 'none'>, fc.Arbitrary<Record<string, unknown>>> = {
  account: fc.record(
    {
      name: fc.string({ minLength: 1, maxLength: 40 }),
      plan: fc.constantFrom('free', 'subscription_27', 'subscription_97'),
      unlimited: fc.constantFrom(true, false, null),
      tokens: fc.nat(1_000),
    },
    { requiredKeys: ['name'] },
  ),
  patch: fc.record(
    {
      name: fc.string({ minLength: 1, maxLength: 40 }),
      plan: fc.constantFrom('free', 'subscription_27', 'subscription_97'),
      status: fc.constantFrom('active', 'suspended'),
      unlimited: fc.constantFrom(true, false, null),
    },
    { requiredKeys: [] },
  ),
  'patch-open': fc.constant({}),
  key: fc.record({ name: fc.string({ maxLength: 30 }) }, { requiredKeys: [] }),
  user: fc.record(
    { email: fc.emailAddress(), role: fc.constantFrom('owner', 'member') },
    { requiredKeys: ['email'] },
  ),
  tokens: fc.record(
    {
      kind: fc.constantFrom('grant', 'charge', 'charge', 'adjust'),
      amount: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: -100, max: 1_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: -1_000_000, max: 1_000_000 }) },
      ),
      reason: fc.string({ maxLength: 30 }),
      idempotency_key: idemKeyValidArb,
    },
    { requiredKeys: ['kind', 'amount'] },
  ),
  usage: fc.record(
    {
      category: fc.constantFrom('enrich', 'search'),
      // Now and then more than any window of the default plans holds.
      records: fc.oneof({ weight: 4, arbitrary: fc.nat(20) }, { weight: 1, arbitrary: fc.nat(200_000) }),
      requests: fc.oneof({ weight: 4, arbitrary: fc.nat(5) }, { weight: 1, arbitrary: fc.nat(200_000) }),
      idempotency_key: idemKeyValidArb,
    },
    { requiredKeys: ['category'] },
  ),
  plan: fc.record(
    { limits: windowsArb(fc.nat(100_000)), unlimited: fc.boolean() },
    { requiredKeys: ['limits'] },
  ),
};
validArgsFor['patch-open'] = validArgsFor.patch;

/** An unknown or dangerous member added to an otherwise plausible argument object, as text. */
const extraMemberArb: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(null) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '"__proto__":{"polluted":true}',
      '"constructor":{"prototype":{"polluted":true}}',
      '"prototype":{"polluted":true}',
      '"extra":1',
      '"id":"acc_01m7zj06pj02trvesb5m3mv35b"',
      '"token_balance":1000000',
      '"status":"active"',
      '"":1',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map((k) => `${JSON.stringify(k)}:1`) },
);

const argsBodyArb = (kind: Exclude<BodyKind, 'none'>): fc.Arbitrary<BodySpec> =>
  fc.oneof(
    { weight: 2, arbitrary: validArgsFor[kind].map((args) => text(JSON.stringify(args))) },
    {
      weight: 1,
      arbitrary: fc.tuple(argsFor[kind], extraMemberArb).map(([args, extra]) => {
        const json = JSON.stringify(args);
        if (!extra) return text(json);
        return text(json === '{}' ? `{${extra}}` : `${json.slice(0, -1)},${extra}}`);
      }),
    },
  );

const dangerousKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'polluted',
  '__defineGetter__',
  '__lookupGetter__',
  'hasOwnProperty',
  'toString',
  'valueOf',
  'isPrototypeOf',
  'name',
  'a',
);

/** JSON text whose members are named `__proto__`, `constructor`, `prototype`... at any depth. */
const protoTreeArb: fc.Arbitrary<string> = fc.letrec<{ node: string; obj: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('true', '1', '"polluted"', 'null', '{}', '[]', '{"polluted":true}'),
    tie('obj'),
    tie('obj').map((o) => `[${o}]`),
  ),
  obj: fc
    .array(fc.tuple(dangerousKey, tie('node')), { minLength: 1, maxLength: 4 })
    .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
})).obj;

const nonObjectJson = [
  'null',
  'true',
  'false',
  '0',
  '-0',
  '1',
  '1e999',
  '-1e999',
  '1.5',
  '"x"',
  '""',
  '"{}"',
  '[]',
  '[{}]',
  '[1,2]',
  '[null]',
  'NaN',
  'Infinity',
  'undefined',
  '{}garbage',
  '{},{}',
  '{} {}',
  '{}\u0000',
  '\u0000{}',
  "{'a':1}",
  '{a:1}',
  '{"a":1,}',
  '{"a" 1}',
  '{"a":01}',
  '{"a":1e}',
  '{"a":.5}',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"}',
  '{"a":"\\uDEAD\\uBEEF"}',
  '{"a":"\t"}',
  '{"a":"\u0001"}',
  '/*c*/{}',
  '{} //c',
  ' \n\t{}\n ',
  '\r\n{}\r\n',
  '   ',
  '\n',
  '\u00a0{}',
  '\u2028{}',
  '{"":1}',
  '{"\\u0000":1}',
  '{"a":1,"a":2}',
  '{',
  '}',
  '[',
  '{"',
  '{"a":',
  '{"a":"',
  '{"a":[',
  '{"name":"x"',
  '{"name":"x",',
  '{"name"',
];

const INVALID_UTF8: number[][] = [
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xfc, 0x84, 0x80, 0x80, 0x80, 0x80],
  [0xfe],
  [0xff],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xc3],
  [0xef, 0xbf, 0xbe],
  [0x00],
];

const invalidUtf8Arb: fc.Arbitrary<BodySpec> = fc
  .tuple(
    fc.constantFrom('value', 'key', 'raw', 'prefix', 'suffix'),
    fc.array(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...INVALID_UTF8) },
        {
          weight: 1,
          arbitrary: fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 6 }),
        },
      ),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([where, seqs]) => ({ kind: 'invalid-utf8', where, bytes: seqs.flat() }));

const deepArb: fc.Arbitrary<BodySpec> = fc
  .tuple(
    fc.constantFrom<[string, string]>(
      ['[', ']'],
      ['{"a":', '}'],
      ['{"__proto__":', '}'],
      ['{"constructor":{"prototype":', '}}'],
      ['[{"a":', '}]'],
      ['{"name":', '}'],
      ['{"limits":', '}'],
      ['{"":', '}'],
    ),
    fc.oneof(
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 64 }) },
      { weight: 2, arbitrary: fc.integer({ min: 64, max: 4_000 }) },
      { weight: 2, arbitrary: fc.integer({ min: 4_000, max: 40_000 }) },
      { weight: 1, arbitrary: fc.constantFrom(100_000, 200_000) },
    ),
    fc.constantFrom('1', 'null', '{}', '[]', '"x"', '{"polluted":true}', '', '['),
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(Number.MAX_SAFE_INTEGER) },
      { weight: 1, arbitrary: fc.nat() },
    ),
  )
  .map(([[open, close], depth, inner, closed]) => ({ kind: 'deep', open, close, depth, inner, closed }));

const bigArb: fc.Arbitrary<BodySpec> = fc
  .tuple(
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 65_536 - 64, max: 65_536 + 64 }) },
      { weight: 1, arbitrary: fc.constantFrom(65_535, 65_536, 65_537, 1 << 20) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 200_000 }) },
    ),
    fc.constantFrom('a', 'é', '€', '😀', '\\u0000', '\\"', ' '),
    fc.constantFrom('member', 'raw', 'key', 'array', 'unknown'),
  )
  .map(([size, unit, wrap]) => ({ kind: 'big', size, unit, wrap }));

const bomArb: fc.Arbitrary<BodySpec> = fc
  .tuple(
    fc.constantFrom('utf8', 'utf8-bytes', 'utf16le', 'utf16be', 'double'),
    fc.constantFrom('{}', '{"name":"x"}', '[]', '', '{"__proto__":{}}'),
  )
  .map(([encoding, t]) => ({ kind: 'bom', encoding, text: t }));

const truncatedArb: fc.Arbitrary<BodySpec> = fc
  .tuple(
    fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'),
      protoTreeArb,
    ),
    fc.nat(),
  )
  .map(([t, n]) => text(t.slice(0, n % Math.max(1, t.length))));

/** Any hostile body, with plausible arguments for `kind` mixed in so that handlers are reached too. */
export const bodyArb = (kind: BodyKind | 'tool' | 'any', plausibleWeight = 14): fc.Arbitrary<BodySpec> => {
  const plausible: fc.Arbitrary<BodySpec> =
    kind === 'tool'
      ? fc.oneof(
          {
            weight: 6,
            arbitrary: fc.constantFrom(text('{}'), text(''), text(' '), text('{ }'), text('\n{}\n')),
          },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              text('{"x":1}'),
              text('{"account_id":"{{ACCOUNT}}"}'),
              text('{"key":"{{KEY}}"}'),
              text('{"__proto__":{}}'),
              text('{"constructor":{}}'),
            ),
          },
          {
            weight: 1,
            arbitrary: fc
              .dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }))
              .map((d) => text(JSON.stringify(d))),
          },
        )
      : kind === 'any'
        ? fc
            .constantFrom<Exclude<BodyKind, 'none'>>(
              'account',
              'patch-open',
              'key',
              'user',
              'tokens',
              'usage',
              'plan',
            )
            .chain(argsBodyArb)
        : kind === 'none'
          ? fc.constant<BodySpec>({ kind: 'none' })
          : argsBodyArb(kind);
  return fc.oneof(
    { weight: kind === 'none' ? 6 : plausibleWeight, arbitrary: plausible },
    { weight: 3, arbitrary: fc.constant<BodySpec>({ kind: 'none' }) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => text(JSON.stringify(v) ?? 'null')) },
    { weight: 2, arbitrary: fc.constantFrom(...nonObjectJson).map(text) },
    { weight: 1, arbitrary: truncatedArb },
    { weight: 2, arbitrary: protoTreeArb.map(text) },
    { weight: 2, arbitrary: deepArb },
    { weight: 2, arbitrary: bigArb },
    { weight: 1, arbitrary: invalidUtf8Arb },
    { weight: 1, arbitrary: bomArb },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map(text) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 200 }).map((b): BodySpec => ({ kind: 'bytes', bytes: [...b] })),
    },
  );
};

// ---------------------------------------------------------------------------------------------
// Whole requests

/** One generated request, before its placeholders are resolved. */
export interface RequestSpec {
  method: string;
  url: string;
  cred: Cred;
  contentType: string | undefined;
  extra: [string, string][];
  body: BodySpec;
}

export interface Materialized {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | Buffer | undefined;
  cred: Cred;
  /** The resolved Authorization header. */
  authorization: string | undefined;
}

export function materialize(spec: RequestSpec, s: Secrets): Materialized {
  // Defined, not assigned: a header named `__proto__` must be a header, not a prototype.
  const headers: Record<string, string> = {};
  const set = (name: string, value: string) =>
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  for (const [name, value] of spec.extra) set(name, resolve(value, s));
  const authorization = spec.cred.value === undefined ? undefined : resolve(spec.cred.value, s);
  if (authorization !== undefined) set('authorization', authorization);
  if (spec.contentType !== undefined) set('content-type', spec.contentType);
  const raw = materializeBody(spec.body);
  const payload = typeof raw === 'string' ? resolve(raw, s) : raw;
  return { method: spec.method, url: resolve(spec.url, s), headers, payload, cred: spec.cred, authorization };
}

/** Anything at all: every route family, every method, every header and body. */
export const anyRequestArb: fc.Arbitrary<RequestSpec> = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: toolPathArb.map((url) => ({ url, kind: 'tool' as const })) },
      { weight: 4, arbitrary: adminShapeArb.map((a) => ({ url: a.path, kind: a.body })) },
      { weight: 2, arbitrary: otherPathArb.map((url) => ({ url, kind: 'any' as const })) },
    ),
    methodArb,
    queryArb,
    credArb({ none: 3, key: 3, victim: 1, admin: 3, bad: 3, odd: 1 }),
    contentTypeArb,
    extraHeadersArb,
  )
  .chain(([target, method, query, cred, contentType, extra]) =>
    bodyArb(target.kind).map(
      (body): RequestSpec => ({
        method,
        url: target.url.includes('?') ? target.url : target.url + query,
        cred,
        contentType,
        extra,
        body,
      }),
    ),
  );

/** Tool calls: mostly `POST /api/v1/tools/get_account`, every credential, every body. */
export const toolRequestArb: fc.Arbitrary<RequestSpec> = fc.record({
  method: fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: methodArb }),
  url: fc
    .tuple(
      fc.oneof(
        { weight: 8, arbitrary: fc.constant('/api/v1/tools/get_account') },
        { weight: 2, arbitrary: toolPathArb },
      ),
      fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryArb }),
    )
    .map(([p, q]) => p + q),
  cred: credArb({ none: 2, key: 8, victim: 1, admin: 2, bad: 6, odd: 1 }),
  contentType: mostlyJsonArb,
  extra: extraHeadersArb,
  body: bodyArb('tool', 30),
});

/** Admin calls: every endpoint, ids of every shape, mostly with the admin token. */
export const adminRequestArb: fc.Arbitrary<RequestSpec> = fc
  .tuple(
    adminShapeArb,
    fc.oneof({ weight: 10, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: methodArb }),
    credArb({ none: 1, key: 2, victim: 0, admin: 14, bad: 2, odd: 0 }),
    mostlyJsonArb,
    extraHeadersArb,
  )
  .chain(([shape, method, cred, contentType, extra]) =>
    bodyArb(shape.body, 30).map(
      (body): RequestSpec => ({
        method: method ?? shape.method,
        url: shape.path,
        cred,
        contentType,
        extra,
        body,
      }),
    ),
  );
