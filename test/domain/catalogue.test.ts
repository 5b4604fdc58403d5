// biome-ignore-all lint/suspicious/noTemplateCurlyInString: header placeholders are written as ${NAME} literals.
import { describe, expect, it } from 'vitest';
import {
  allowedVariables,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  headerVariables,
  type Problem,
  parseCatalogue,
  parseTool,
  resolveHeaders,
  type ToolDefinition,
  type ToolMetering,
  tokenCost,
} from '../../src/domain/catalogue.js';
import { countRecords, expectedRecords, pointerGet } from '../../src/domain/json-pointer.js';
import { bearer } from '../calls.js';

const example = {
  name: 'search_people',
  description: 'Find people by title and company.',
  input_schema: {
    type: 'object',
    properties: { title: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
    required: ['title'],
    additionalProperties: false,
  },
  upstream: {
    url: 'http://10.0.0.5:9000/search_people',
    timeout_ms: 30000,
    headers: { Authorization: bearer('${PEOPLE_API_TOKEN}') },
  },
  metering: {
    category: 'search',
    records_pointer: '/results',
    expected_records_pointer: '/limit',
    tokens_per_call: 0,
    tokens_per_record: 1,
  },
};

const minimal = { name: 'ping', upstream: { url: 'https://svc.internal/ping' } };

/** TOOLGATE_UPSTREAM_ENV for these tests: every variable their headers name. */
const LISTED = ['PEOPLE_API_TOKEN', 'TOKEN', 'USER', 'PASS', '_PASS2', 'A'];
const ALLOWED = allowedVariables(LISTED);

/** The problems of a catalogue holding `tools`; fails the test when it parses. */
function problemsOf(...tools: unknown[]): Problem[] {
  const result = parseCatalogue({ tools }, LISTED);
  if (result.ok) throw new Error('expected the catalogue to be refused');
  return result.problems;
}

function toolOf(input: unknown): ToolDefinition {
  const result = parseCatalogue({ tools: [input] }, LISTED);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.tools[0]!;
}

const withHeaders = (headers: Record<string, string>): ToolDefinition =>
  toolOf({ ...minimal, upstream: { ...minimal.upstream, headers } });

describe('parseCatalogue', () => {
  it('parses the documented example, filling the defaults it leaves out', () => {
    expect(parseCatalogue({ tools: [example] }, LISTED)).toEqual({
      ok: true,
      tools: [
        { ...example, upstream: { ...example.upstream, max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES } },
      ],
    });
  });

  it('fills every default for a minimal tool', () => {
    expect(toolOf(minimal)).toEqual({
      name: 'ping',
      description: '',
      input_schema: { type: 'object' },
      upstream: {
        url: 'https://svc.internal/ping',
        timeout_ms: DEFAULT_TIMEOUT_MS,
        max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        headers: {},
      },
      metering: null,
    });
  });

  it('fills metering defaults and adds type "object" to a schema without one', () => {
    const tool = toolOf({ ...minimal, input_schema: { properties: {} }, metering: { category: 'enrich' } });
    expect(tool.input_schema).toEqual({ type: 'object', properties: {} });
    expect(tool.metering).toEqual({
      category: 'enrich',
      records_pointer: '/results',
      expected_records_pointer: null,
      tokens_per_call: 0,
      tokens_per_record: 0,
    });
    expect(toolOf({ ...minimal, metering: null }).metering).toBeNull();
  });

  it("keeps a category and unit of the operator's own, and refuses bad names", () => {
    const tool = toolOf({ ...minimal, metering: { category: 'scrape', unit: 'pages' } });
    expect(tool.metering).toMatchObject({ category: 'scrape', unit: 'pages' });
    const problems = problemsOf({ ...minimal, metering: { category: 'scrape', unit: 'Pages!' } });
    expect(problems).toEqual([
      { path: '/tools/0/metering/unit', reason: expect.stringMatching(/unit name/) },
    ]);
  });

  it('refuses a bad top level', () => {
    for (const input of [null, [], 'tools', 3]) {
      expect(parseCatalogue(input)).toEqual({ ok: false, problems: [expect.objectContaining({ path: '' })] });
    }
    const paths = (input: unknown) => {
      const result = parseCatalogue(input);
      return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.reason}`);
    };
    expect(paths({})).toEqual(['/tools: is required']);
    expect(paths({ tools: [] })).toEqual(['/tools: must be an array of 1 to 500 tools']);
    expect(paths({ tools: {} })).toEqual(['/tools: must be an array of 1 to 500 tools']);
    expect(paths({ tools: Array.from({ length: 501 }, (_, i) => ({ ...minimal, name: `t${i}` })) })).toEqual([
      '/tools: must be an array of 1 to 500 tools',
    ]);
    expect(paths({ tools: [minimal], version: 1 })).toEqual(['/version: unknown member']);
    expect(paths({ tools: [minimal, 'x'] })).toEqual(['/tools/1: must be an object']);
  });

  it('refuses the whole file, listing every problem with its path', () => {
    const problems = problemsOf(
      { ...minimal, colour: 'red' },
      { name: 'Bad-Name', description: 7, upstream: { url: 'ftp://x/', timeout_ms: 0, extra: 1 } },
      {
        name: 'two',
        input_schema: 'nope',
        upstream: { url: 'https://u:p@x/#top', max_response_bytes: 1.5, headers: [] },
        metering: {
          category: 'Other',
          records_pointer: 'results',
          tokens_per_call: -1,
          per: 2,
          unit: 'requests',
        },
      },
      { name: 'three', description: 'x'.repeat(4001) },
      {
        name: 'four',
        upstream: { url: 'not a url', timeout_ms: '30' },
        metering: { expected_records_pointer: '/a~2', tokens_per_record: 2e12 },
      },
    );
    const expected: Array<[string, RegExp]> = [
      ['/tools/0/colour', /unknown member/],
      ['/tools/1/name', /snake_case.*1-64/],
      ['/tools/1/description', /must be a string/],
      ['/tools/1/upstream/url', /http: or https:/],
      ['/tools/1/upstream/timeout_ms', /^must be an integer from 1 to 600000$/],
      ['/tools/1/upstream/extra', /unknown member/],
      ['/tools/2/input_schema', /must be an object/],
      ['/tools/2/upstream/url', /put credentials in upstream\.headers/],
      ['/tools/2/upstream/url', /fragment/],
      ['/tools/2/upstream/max_response_bytes', /^must be an integer from 1 to 104857600$/],
      ['/tools/2/upstream/headers', /must be an object/],
      ['/tools/2/metering/category', /must be a category name/],
      ['/tools/2/metering/unit', /not requests/],
      ['/tools/2/metering/records_pointer', /JSON Pointer/],
      ['/tools/2/metering/tokens_per_call', /^must be an integer from 0 to 1000000000000$/],
      ['/tools/2/metering/per', /unknown member/],
      ['/tools/3/description', /at most 4000 characters/],
      ['/tools/3/upstream', /is required/],
      ['/tools/4/upstream/url', /absolute URL/],
      ['/tools/4/upstream/timeout_ms', /integer/],
      ['/tools/4/metering/category', /is required/],
      ['/tools/4/metering/expected_records_pointer', /JSON Pointer/],
      ['/tools/4/metering/tokens_per_record', /integer from 0/],
    ];
    for (const [path, reason] of expected) {
      expect(problems).toContainEqual({ path, reason: expect.stringMatching(reason) });
    }
    expect(problems).toHaveLength(expected.length);
  });

  it('refuses a missing or non-string name and an upstream that is not an object', () => {
    expect(problemsOf({ upstream: minimal.upstream }, { name: 5, upstream: 'http://x/' })).toEqual([
      { path: '/tools/0/name', reason: 'is required' },
      { path: '/tools/1/name', reason: 'must be a string' },
      { path: '/tools/1/upstream', reason: 'must be an object' },
    ]);
    expect(problemsOf({ ...minimal, name: 'a'.repeat(65) })[0]?.path).toBe('/tools/0/name');
    expect(toolOf({ ...minimal, name: 'a'.repeat(64) }).name).toHaveLength(64);
  });

  it('refuses reserved and duplicate names', () => {
    expect(problemsOf({ ...minimal, name: 'get_usage' }, minimal, { ...minimal }, { ...minimal })).toEqual([
      { path: '/tools/0/name', reason: 'is reserved for an account tool' },
      { path: '/tools/2/name', reason: 'duplicate name (also at /tools/1)' },
      { path: '/tools/3/name', reason: 'duplicate name (also at /tools/1)' },
    ]);
  });

  it('refuses a schema that does not compile, with the compiler message', () => {
    const problems = problemsOf({
      ...minimal,
      input_schema: { type: 'object', properties: { a: { type: 'strng' } } },
    });
    expect(problems).toEqual([
      { path: '/tools/0/input_schema', reason: expect.stringMatching(/^does not compile: .*type/) },
    ]);
    const remote = problemsOf({
      ...minimal,
      input_schema: { properties: { a: { $ref: 'http://x/y.json' } } },
    });
    expect(remote[0]?.reason).toMatch(/does not compile: .*http:\/\/x\/y\.json/);
    const strict = problemsOf({ ...minimal, input_schema: { type: 'object', frobnicate: true } });
    expect(strict[0]?.reason).toMatch(/unknown keyword/);
  });

  it('refuses a schema whose type is not "object"', () => {
    expect(problemsOf({ ...minimal, input_schema: { type: 'array', items: {} } })).toEqual([
      { path: '/tools/0/input_schema/type', reason: expect.stringContaining('"object"') },
    ]);
  });

  it('accepts formats, and the same $id in two tools', () => {
    const schema = {
      $id: 'https://example.com/args',
      properties: { e: { type: 'string', format: 'email' } },
    };
    const result = parseCatalogue({
      tools: [
        { ...minimal, input_schema: schema },
        { ...minimal, name: 'pong', input_schema: schema },
      ],
    });
    expect(result.ok).toBe(true);
  });

  it('refuses a schema claiming the meta-schema id, and keeps checking afterwards', () => {
    const problems = problemsOf({
      ...minimal,
      input_schema: { $id: 'http://json-schema.org/draft-07/schema#' },
    });
    expect(problems[0]?.path).toBe('/tools/0/input_schema/$id');
    expect(toolOf({ ...minimal, input_schema: example.input_schema }).input_schema).toEqual(
      example.input_schema,
    );
    expect(problemsOf({ ...minimal, input_schema: { properties: { a: { type: 'strng' } } } })).toHaveLength(
      1,
    );
  });
});

const VISIBLE = 'must be visible ASCII and spaces: no control character, byte-order mark or non-ASCII';

describe('upstream headers', () => {
  it('refuses headers toolgate sets, bad names and bad values', () => {
    const problems = problemsOf({
      ...minimal,
      upstream: {
        url: 'http://x/',
        headers: {
          'Content-Type': 'text/plain',
          host: 'x',
          'X-Toolgate-Account': 'a',
          'X-Request-Id': 'r',
          'Bad Name': 'v',
          'X-Ok': 'a\r\nInjected: 1',
          'X-Esc': 'a\u001b[31mb',
          'X-Bom': `\ufeff${bearer('x')}`,
          'X-Surrogate': 'a\ud800b',
          'X-Long': 'x'.repeat(8193),
          'X-Num': 5 as unknown as string,
          'X-Broken': bearer('${TOKEN'),
          'X-Empty': '${}',
          'X-Digit': '${1ABC}',
          'x-ok': 'again',
        },
      },
    });
    const reasons = Object.fromEntries(
      problems.map((p) => [p.path.replace('/tools/0/upstream/headers/', ''), p.reason]),
    );
    expect(reasons).toEqual({
      'Content-Type': 'is set by toolgate and cannot be configured',
      host: 'is set by toolgate and cannot be configured',
      'X-Toolgate-Account': 'is set by toolgate and cannot be configured',
      'X-Request-Id': 'is set by toolgate and cannot be configured',
      'Bad Name': 'is not a valid HTTP header name',
      'X-Ok': VISIBLE,
      'X-Esc': VISIBLE,
      'X-Bom': VISIBLE,
      'X-Surrogate': VISIBLE,
      'X-Long': 'must be at most 8192 characters',
      'X-Num': 'must be a string',
      'X-Broken': expect.stringContaining('malformed placeholder'),
      'X-Empty': expect.stringContaining('malformed placeholder'),
      'X-Digit': expect.stringContaining('malformed placeholder'),
      'x-ok': 'repeats another header (names are case-insensitive)',
    });
    expect(problems).toHaveLength(15);
  });

  it('lists the placeholders, once each, and accepts a literal $', () => {
    const tool = withHeaders({
      Authorization: bearer('${TOKEN}'),
      'X-Pair': '${USER}:${_PASS2}@${TOKEN}',
      'X-Price': 'costs $5 or $ {x} or $$',
    });
    expect(headerVariables(tool)).toEqual(['TOKEN', 'USER', '_PASS2']);
    const priced = withHeaders({ 'X-Price': 'costs $5, $$ and a trailing $' });
    expect(headerVariables(priced)).toEqual([]);
  });

  it('refuses a lone "${" even after valid placeholders', () => {
    const problems = problemsOf({ ...minimal, upstream: { url: 'http://x/', headers: { 'X-A': '${A}${' } } });
    expect(problems).toEqual([{ path: '/tools/0/upstream/headers/X-A', reason: expect.any(String) }]);
  });

  it('resolves placeholders from the environment, or lists the missing ones', () => {
    const tool = withHeaders({ Authorization: bearer('${TOKEN}'), 'X-Pair': '${USER}:${PASS}/${USER}' });
    expect(headerVariables(tool)).toEqual(['TOKEN', 'USER', 'PASS']);
    expect(resolveHeaders(tool, { TOKEN: 't0k', USER: 'ann', PASS: 'p$1' }, ALLOWED)).toEqual({
      ok: true,
      headers: { Authorization: bearer('t0k'), 'X-Pair': 'ann:p$1/ann' },
    });
    expect(resolveHeaders(tool, { USER: 'ann' }, ALLOWED)).toEqual({
      ok: false,
      reason: 'missing',
      names: ['TOKEN', 'PASS'],
    });
    expect(resolveHeaders(withHeaders({ 'X-Price': '$5' }), {}, ALLOWED)).toEqual({
      ok: true,
      headers: { 'X-Price': '$5' },
    });
  });
});

describe('parseTool', () => {
  it('takes its name from the URL, and accepts the same name in the body', () => {
    const { name: _name, ...body } = example;
    const result = parseTool('search_people', body, LISTED);
    expect(result.ok && result.tool.name).toBe('search_people');
    expect(parseTool('search_people', example, LISTED).ok).toBe(true);
  });

  it('refuses a different name in the body, and paths are relative to the tool', () => {
    expect(parseTool('search_people', { ...example, name: 'other' }, LISTED)).toEqual({
      ok: false,
      problems: [{ path: '/name', reason: 'must equal the tool name in the URL ("search_people")' }],
    });
    expect(parseTool('ping', { upstream: { url: 'gopher://x/' } })).toEqual({
      ok: false,
      problems: [{ path: '/upstream/url', reason: 'must be an http: or https: URL' }],
    });
    expect(parseTool('get_account', { upstream: { url: 'http://x/' } })).toEqual({
      ok: false,
      problems: [{ path: '/name', reason: 'is reserved for an account tool' }],
    });
    expect(parseTool('ping', null)).toEqual({
      ok: false,
      problems: [{ path: '', reason: 'must be an object' }],
    });
  });
});

describe('pointerGet', () => {
  const doc = { 'a/b': { 'c~d': 1 }, list: [10, { x: 'y' }], '': 'empty key', n: null };

  it('follows RFC 6901, escapes and array indexes included', () => {
    expect(pointerGet(doc, '')).toBe(doc);
    expect(pointerGet(doc, '/a~1b/c~0d')).toBe(1);
    expect(pointerGet(doc, '/list/0')).toBe(10);
    expect(pointerGet(doc, '/list/1/x')).toBe('y');
    expect(pointerGet(doc, '/')).toBe('empty key');
    expect(pointerGet(doc, '/n')).toBeNull();
  });

  it('answers undefined for what is not there', () => {
    expect(pointerGet(doc, '/missing')).toBeUndefined();
    expect(pointerGet(doc, '/list/2')).toBeUndefined();
    expect(pointerGet(doc, '/list/01')).toBeUndefined();
    expect(pointerGet(doc, '/list/-')).toBeUndefined();
    expect(pointerGet(doc, '/n/x')).toBeUndefined();
    expect(pointerGet(doc, '/list/0/x')).toBeUndefined();
    expect(pointerGet(doc, '/__proto__')).toBeUndefined();
    expect(pointerGet(doc, '/constructor')).toBeUndefined();
    expect(pointerGet(doc, 'list')).toBeUndefined();
    expect(pointerGet(doc, '/a~2b')).toBeUndefined();
  });
});

describe('countRecords', () => {
  it('counts arrays, objects and safe whole numbers, null and absent as 0; anything else is no count (NaN)', () => {
    expect(countRecords({ results: [1, 2, 3] }, '/results')).toBe(3);
    expect(countRecords({ results: [] }, '/results')).toBe(0);
    expect(countRecords({ results: { id: 1 } }, '/results')).toBe(1);
    expect(countRecords({ total: 42 }, '/total')).toBe(42);
    expect(countRecords({ total: Number.MAX_SAFE_INTEGER }, '/total')).toBe(Number.MAX_SAFE_INTEGER);
    expect(countRecords({ results: null }, '/results')).toBe(0);
    expect(countRecords({}, '/results')).toBe(0);
    expect(countRecords([1, 2], '')).toBe(2);
    for (const value of ['3', -2, 2.5, true, 2 ** 53, 1e23])
      expect(countRecords({ results: value }, '/results'), String(value)).toBeNaN();
  });
});

describe('expectedRecords', () => {
  it('reads a whole number or an array length from the arguments', () => {
    expect(expectedRecords({ limit: 25 }, '/limit')).toBe(25);
    expect(expectedRecords({ ids: ['a', 'b'] }, '/ids')).toBe(2);
    expect(expectedRecords({ limit: 25 }, null)).toBe(0);
    expect(expectedRecords({}, '/limit')).toBe(0);
    expect(expectedRecords({ limit: '25' }, '/limit')).toBe(0);
    expect(expectedRecords({ limit: -1 }, '/limit')).toBe(0);
    expect(expectedRecords({ limit: { n: 1 } }, '/limit')).toBe(0);
  });
});

describe('tokenCost', () => {
  it('is the per-call price plus the per-record price times the records', () => {
    const m: ToolMetering = {
      category: 'search',
      records_pointer: '/results',
      expected_records_pointer: null,
      tokens_per_call: 2,
      tokens_per_record: 3,
    };
    expect(tokenCost(m, 0)).toBe(2);
    expect(tokenCost(m, 10)).toBe(32);
    expect(tokenCost({ ...m, tokens_per_call: 0, tokens_per_record: 0 }, 10)).toBe(0);
  });
});
