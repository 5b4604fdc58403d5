/**
 * Hostile bytes on a real socket: arbitrary bytes, malformed request lines, invalid and oversized
 * headers, invalid UTF-8 in headers, broken chunked bodies, smuggling-shaped framing. A small
 * client that writes them and reads whatever comes back, and the checks on what came back.
 */
import { STATUS_CODES } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/domain/errors.js';
import { type BodySpec, materializeBody, resolve, type Secrets, toolPathArb } from './hostile-input.js';

export type RawHeader =
  | { kind: 'line'; text: string }
  | { kind: 'bytes'; name: string; bytes: number[] }
  | { kind: 'pad'; size: number }
  | { kind: 'many'; count: number }
  | { kind: 'content-length' };

export type RawSpec =
  | { kind: 'bytes'; bytes: number[] }
  /** A complete well-formed request with stray bytes after it in the same write. */
  | { kind: 'stray'; base: number; bytes: number[] }
  | { kind: 'mutated'; base: number; at: number; remove: number; bytes: number[] }
  | {
      kind: 'request';
      method: string;
      target: string;
      version: string;
      eol: string;
      headers: RawHeader[];
      body: BodySpec;
      complete: boolean;
      pipelined: boolean;
    };

/** Well-formed requests that the `mutated` cases damage at one place. */
const BASES = [
  'POST /api/v1/tools/get_account HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {{KEY}}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
  'GET /admin/v1/accounts/{{ACCOUNT}} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {{ADMIN}}\r\n\r\n',
  'POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {{ADMIN}}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{"name":"x"}\r\n0\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
];

const VALID_FOLLOWER = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

export function materializeRaw(spec: RawSpec, s: Secrets): Buffer {
  switch (spec.kind) {
    case 'bytes':
      return Buffer.from(spec.bytes);
    case 'stray':
      return Buffer.concat([
        Buffer.from(resolve(BASES[spec.base % BASES.length]!, s)),
        Buffer.from(spec.bytes),
      ]);
    case 'mutated': {
      const base = Buffer.from(resolve(BASES[spec.base % BASES.length]!, s));
      const at = spec.at % (base.length + 1);
      return Buffer.concat([base.subarray(0, at), Buffer.from(spec.bytes), base.subarray(at + spec.remove)]);
    }
    case 'request': {
      const body = materializeBody(spec.body);
      const bodyBytes =
        body === undefined
          ? Buffer.alloc(0)
          : typeof body === 'string'
            ? Buffer.from(resolve(body, s))
            : body;
      const lines: Buffer[] = [Buffer.from(resolve(`${spec.method} ${spec.target} ${spec.version}`, s))];
      for (const h of spec.headers) {
        switch (h.kind) {
          case 'line':
            lines.push(Buffer.from(resolve(h.text, s)));
            break;
          case 'bytes':
            lines.push(Buffer.concat([Buffer.from(`${h.name}: `), Buffer.from(h.bytes)]));
            break;
          case 'pad':
            lines.push(Buffer.from(`X-Pad: ${'a'.repeat(h.size)}`));
            break;
          case 'many':
            for (let i = 0; i < h.count; i++) lines.push(Buffer.from(`X-Many-${i}: ${i}`));
            break;
          case 'content-length':
            lines.push(Buffer.from(`Content-Length: ${bodyBytes.length}`));
            break;
        }
      }
      const eol = Buffer.from(spec.eol);
      const parts: Buffer[] = [];
      for (const line of lines) parts.push(line, eol);
      if (spec.complete) parts.push(eol, bodyBytes);
      if (spec.complete && spec.pipelined) parts.push(Buffer.from(VALID_FOLLOWER));
      return Buffer.concat(parts);
    }
  }
}

const rawMethodArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'get',
      'post',
      'Post',
      'FOO',
      'M-SEARCH',
      'PROPFIND',
      'PRI',
      'CONNECT',
      'TRACE',
      'QUERY',
      '',
      ' ',
      'POST ',
      ' POST',
      'G\u0000ET',
      'POST\t',
      'GE T',
      'ÄÖÜ',
      'POST/',
      'P'.repeat(100),
    ),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
);

const rawTargetArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '/api/v1/tools/get_account',
      '/healthz',
      '/admin/v1/accounts',
      '/admin/v1/accounts/{{ACCOUNT}}',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '*',
      '',
      'x',
      'http://x/healthz',
      'http://x:99999/healthz',
      'https://x/api/v1/tools/get_account',
      'x:80',
      '//healthz',
      '/%zz',
      '/%',
      '/a b',
      '/a\tb',
      '/é',
      '/😀',
      '/\u0000',
      '/\u007f',
      '/api/v1/tools/get_account#x',
      '/api/v1/tools/get_account?__proto__[polluted]=1',
      '/admin/v1/accounts?limit=1&limit=2',
      '/../../etc/passwd',
      '/\\',
      '/api/v1/tools\\get_account',
      `/${'a'.repeat(9_000)}`,
      `/${'a'.repeat(20_000)}`,
    ),
  },
  { weight: 1, arbitrary: toolPathArb },
  { weight: 1, arbitrary: fc.webPath() },
);

const rawVersionArb = fc.oneof(
  { weight: 10, arbitrary: fc.constant('HTTP/1.1') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'HTTP/1.0',
      'HTTP/2.0',
      'HTTP/2',
      'HTTP/0.9',
      'HTTP/1.2',
      'HTTP/9.9',
      'http/1.1',
      'HTTP/1.1 ',
      'HTTP/1',
      'HTTP/',
      'HTTPS/1.1',
      '',
      'HTTP/1.1x',
      'HTTP/1.1 extra',
      'HTTP/11',
    ),
  },
);

const line = (text: string): RawHeader => ({ kind: 'line', text });

const rawHeaderArb: fc.Arbitrary<RawHeader> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom(
        'Authorization: Bearer {{KEY}}',
        'Authorization: Bearer {{ADMIN}}',
        'Authorization: Bearer {{KEY}}x',
        'Authorization: Basic dXNlcjpwYXNz',
        'Authorization: bearer  {{KEY}}',
        'Authorization:',
        'Authorization: Bearer {{KEY}}\r\nAuthorization: Bearer {{ADMIN}}',
        'Content-Type: application/json',
        'Content-Type: text/plain',
        'Content-Type: multipart/form-data; boundary=x',
        'Content-Type:',
        'Content-Length: 0',
        'Content-Length: -1',
        'Content-Length: abc',
        'Content-Length: 99999999999999999999',
        'Content-Length: +2',
        'Content-Length: 0x2',
        'Content-Length: 1, 2',
        'Content-Length: 2\r\nContent-Length: 3',
        'Content-Length: 1000000',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: chunked, gzip',
        'Transfer-Encoding: gzip, chunked',
        'Transfer-Encoding: xchunked',
        'Transfer-Encoding: chunked\r\nTransfer-Encoding: identity',
        'Transfer-Encoding : chunked',
        ' Transfer-Encoding: chunked',
        'Connection: close',
        'Connection: keep-alive',
        'Connection: Upgrade\r\nUpgrade: websocket',
        'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__',
        'Expect: 100-continue',
        'Expect: nonsense',
        'Host: x',
        'Host:',
        'Host: x\r\nHost: y',
        'Host: a b',
        'X-Request-Id: req_spoofed',
        '__proto__: polluted',
        'constructor: x',
        'NoColonHere',
        'Bad Name: x',
        ': empty-name',
        'X-Space : x',
        ' X-Folded: x',
        'X-Fold: a\r\n b',
        'X-Nul: a\u0000b',
        'X-Cr: a\rb',
        'X-Lf: a\nb',
        'X-Del: a\u007fb',
        'X-Utf8: é€😀',
        'X-Tab:\tx\t',
        '\u0000: x',
        'Ä: x',
      )
      .map(line),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('X-Bytes', 'Authorization', 'Content-Type', 'Host', 'Cookie'),
        fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 12 }),
      )
      .map(([name, bytes]): RawHeader => ({ kind: 'bytes', name, bytes })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.integer({ min: 1_000, max: 40_000 }), fc.constantFrom(16_300, 16_384, 16_400, 80_000))
      .map((size): RawHeader => ({ kind: 'pad', size })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.integer({ min: 10, max: 3_000 }), fc.constantFrom(1_999, 2_000, 2_001))
      .map((count): RawHeader => ({ kind: 'many', count })),
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((t) => line(`X-Rand: ${t}`)),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map(line) },
);

const rawBodyArb: fc.Arbitrary<BodySpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<BodySpec>({ kind: 'text', text: '{}' }) },
  { weight: 2, arbitrary: fc.constant<BodySpec>({ kind: 'none' }) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '2\r\n{}\r\n0\r\n\r\n',
        'zz\r\n{}\r\n0\r\n\r\n',
        'ffffffffffffffffff\r\n{}\r\n0\r\n\r\n',
        '-1\r\n{}\r\n0\r\n\r\n',
        '2;ext=\u0000\r\n{}\r\n0\r\n\r\n',
        '2\r\n{}0\r\n\r\n',
        '2\n{}\n0\n\n',
        '0\r\nTrailer: x\r\n\r\n',
        '1\r\n{\r\n1\r\n}\r\n0\r\n\r\n',
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '[]',
        'null',
        '{',
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      )
      .map((text): BodySpec => ({ kind: 'text', text })),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 })
      .map((bytes): BodySpec => ({ kind: 'bytes', bytes })),
  },
);

export const rawSpecArb: fc.Arbitrary<RawSpec> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .array(fc.integer({ min: 0, max: 255 }), { maxLength: 3_000 })
      .map((bytes): RawSpec => ({ kind: 'bytes', bytes })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        base: fc.nat(),
        bytes: fc.oneof(
          fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 16 }),
          fc
            .constantFrom('XX', 'NOT HTTP\r\n\r\n', 'GET / HTTP/1.1\r\nNoColon\r\n\r\n')
            .map((t) => [...Buffer.from(t)]),
        ),
      })
      .map((r): RawSpec => ({ kind: 'stray', ...r })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        base: fc.nat(),
        at: fc.nat(),
        remove: fc.integer({ min: 0, max: 8 }),
        bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 8 }),
      })
      .map((m): RawSpec => ({ kind: 'mutated', ...m })),
  },
  {
    weight: 8,
    arbitrary: fc
      .record({
        method: rawMethodArb,
        target: rawTargetArb,
        version: rawVersionArb,
        eol: fc.oneof(
          { weight: 12, arbitrary: fc.constant('\r\n') },
          { weight: 1, arbitrary: fc.constantFrom('\n', '\r', '\r\r\n', '\n\r') },
        ),
        headers: fc
          .tuple(
            fc.oneof(
              { weight: 8, arbitrary: fc.constant([line('Host: x')]) },
              { weight: 1, arbitrary: fc.constant([] as RawHeader[]) },
            ),
            fc.array(rawHeaderArb, { maxLength: 5 }),
            fc.oneof(
              { weight: 3, arbitrary: fc.constant([{ kind: 'content-length' } as RawHeader]) },
              { weight: 1, arbitrary: fc.constant([] as RawHeader[]) },
            ),
          )
          .map(([host, rest, cl]) => [...host, ...rest, ...cl]),
        body: rawBodyArb,
        complete: fc.oneof(
          { weight: 8, arbitrary: fc.constant(true) },
          { weight: 1, arbitrary: fc.constant(false) },
        ),
        pipelined: fc.oneof(
          { weight: 4, arbitrary: fc.constant(false) },
          { weight: 1, arbitrary: fc.constant(true) },
        ),
      })
      .map((r): RawSpec => ({ kind: 'request', ...r })),
  },
);

export interface Exchange {
  out: Buffer;
  /** The server neither answered nor closed within the hard limit after the client's FIN. */
  hung: boolean;
}

/**
 * Writes `bytes` and reads until the server closes. Once nothing has arrived for `idleMs`, the
 * client half-closes (FIN), which ends any request the server is still waiting for; after that
 * the server has `hardMs` to close.
 */
export function exchange(port: number, bytes: Buffer, idleMs = 60, hardMs = 5_000): Promise<Exchange> {
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let hung = false;
    let idle: NodeJS.Timeout | undefined;
    let hard: NodeJS.Timeout | undefined;
    const socket = connect(port, '127.0.0.1');
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        socket.end();
        hard ??= setTimeout(() => {
          hung = true;
          socket.destroy();
        }, hardMs);
      }, idleMs);
    };
    socket.on('connect', () => {
      socket.write(bytes, () => armIdle());
    });
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      armIdle();
    });
    // EPIPE / ECONNRESET: the server closed on us; what it sent before is in `chunks`.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(idle);
      clearTimeout(hard);
      resolvePromise({ out: Buffer.concat(chunks), hung });
    });
  });
}

const REQUEST_ID = /^req_[0-9a-z]{26}$/;

const NOT_HTTP = 'The request is not well-formed HTTP.';

/**
 * What came back holds: nothing (the server closed), or HTTP/1.1 answers whose first final answer
 * is below 500, JSON, with a request id; a 4xx in the error shape. No 5xx anywhere in the stream.
 * Bytes that begin with a complete well-formed request get that request's answer first, never
 * only the 400 of what follows it (a client retrying on that 400 would pay twice).
 */
export function checkRawAnswer(request: Buffer, ex: Exchange, s: Secrets): string | undefined {
  if (ex.hung) return 'the server neither answered nor closed the connection after the client finished';
  let rest = ex.out.toString('latin1');
  if (rest === '') return undefined;
  const sent = request.toString('latin1');
  const complete = BASES.some((b) => sent.startsWith(resolve(b, s)));
  if (/^HTTP\/1\.[01] 5\d\d /m.test(rest)) return 'a 5xx status line in the answer';
  for (;;) {
    const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(rest);
    if (!m) return 'the answer does not start with an HTTP/1.1 status line';
    const status = Number(m[1]);
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return 'the answer has no end of headers';
    const headers = new Map<string, string>();
    for (const h of rest.slice(m[0].length, end).split('\r\n')) {
      const colon = h.indexOf(':');
      if (colon > 0) headers.set(h.slice(0, colon).trim().toLowerCase(), h.slice(colon + 1).trim());
    }
    rest = rest.slice(end + 4);
    if (status >= 100 && status < 200) continue;
    if (status >= 500) return `answered ${status}`;
    if (status >= 300 && status < 400) return `answered ${status}`;
    const requestId = headers.get('x-request-id');
    if (!requestId || !REQUEST_ID.test(requestId))
      return `answered ${status} without a well-formed x-request-id`;
    const type = headers.get('content-type') ?? '';
    if (!/^application\/json\b/.test(type)) return `answered ${status} with content-type "${type}"`;
    const length = Number(headers.get('content-length') ?? Number.NaN);
    // No body to read: a HEAD answer (nothing, or the next answer, follows), or framing not decoded here.
    if (!Number.isFinite(length) || rest.length < length || /^HTTP\/1\.1 /.test(rest)) return undefined;
    const text = Buffer.from(rest.slice(0, length), 'latin1').toString('utf8');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return `answered ${status} with a body that is not JSON`;
    }
    if (status >= 400) {
      if (complete && body.message === NOT_HTTP)
        return 'a complete request followed by stray bytes was answered only 400 not well-formed';
      const code = body.code;
      if (body.status !== 'error') return 'an error body without status "error"';
      if (typeof code !== 'string' || !Object.hasOwn(ERROR_STATUS, code))
        return `code ${String(code)} unknown`;
      if (ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== status)
        return `code ${code} with status ${status}`;
      if (body.error !== STATUS_CODES[status]) return 'error is not the reason phrase';
      if (body.request_id !== requestId) return 'request_id differs from x-request-id';
    } else if ('results' in body) {
      const sent = request.toString('latin1');
      if (!sent.includes(s.key) && !sent.includes(s.victimKey)) return 'a tool answered 2xx without a key';
    } else if (!('openapi' in body) && body.status !== 'ok') {
      if (!request.toString('latin1').includes(s.admin)) return 'an admin answer without the admin token';
    }
    return undefined;
  }
}

export function describeRaw(bytes: Buffer, ex?: Exchange): string {
  const show = (b: Buffer) =>
    JSON.stringify(b.subarray(0, 400).toString('latin1')) + (b.length > 400 ? `…(${b.length} bytes)` : '');
  return `sent: ${show(bytes)}${ex ? `\nreceived: ${show(ex.out)}${ex.hung ? ' (hung)' : ''}` : ''}`;
}
