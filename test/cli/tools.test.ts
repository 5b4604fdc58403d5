import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportAnswer, ToolRecord } from '../../src/service/catalogue.js';
import type { AuditRecord } from '../../src/service/views.js';
import { bearer } from '../calls.js';
import { type Scratch, scratch } from './run-cli.js';

const ACTOR = `cli:${userInfo().username}`;

const PEOPLE = {
  name: 'people_search',
  description: 'Find people by name.',
  input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  upstream: {
    url: 'https://people.example.com/v1/search?api_key=in-the-query',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a header placeholder, kept literally.
    headers: { Authorization: bearer('${PEOPLE_TOKEN}') },
  },
  metering: { category: 'search', tokens_per_call: 2, tokens_per_record: 1 },
};
const PING = { name: 'ping', upstream: { url: 'http://127.0.0.1:9000/ping' } };

let t: Scratch;
/** Writes `content` (JSON unless a string) into the scratch directory; answers its path. */
const file = (name: string, content: unknown): string => {
  const path = join(t.dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const listJson = () => t.json<ToolRecord[]>('tools', 'list');

beforeAll(() => {
  // Wide enough for every cell whole: fitting the terminal is table.test.ts's.
  t = scratch({ TOOLGATE_UPSTREAM_ENV: 'PEOPLE_TOKEN', COLUMNS: '1000' });
});
afterAll(() => t.cleanup());

// One catalogue, changed step by step: each test starts from what the one before left.
describe('toolgate tools', () => {
  it('a dry run on an empty catalogue says what would be created and writes nothing', async () => {
    const path = file('catalogue.json', { tools: [PEOPLE, PING] });
    const human = await t.run('tools', 'import', path, '--dry-run');
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toBe(
      'created    people_search\ncreated    ping\n\nDry run: would create 2; nothing was written.\n',
    );
    const json = await t.json<ImportAnswer>('tools', 'import', path, '--dry-run');
    expect(json).toEqual({
      dry_run: true,
      revision: 0,
      tools: [
        // Each tool with every default applied, as it would be stored.
        expect.objectContaining({
          name: 'people_search',
          outcome: 'created',
          upstream: expect.objectContaining({ timeout_ms: 30_000 }),
        }),
        expect.objectContaining({ name: 'ping', outcome: 'created', metering: null }),
      ],
    });
    expect(await listJson()).toEqual([]);
    expect((await t.run('tools', 'list')).stdout).toBe('No tools in the catalogue.\n');
  });

  it('imports a metered and a free tool, then a re-import changes nothing', async () => {
    const path = file('catalogue.json', { tools: [PEOPLE, PING] });
    const human = await t.run('tools', 'import', path);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toBe(
      'created    people_search\ncreated    ping\n\nImported 2 tools (2 created); catalogue revision 1.\n',
    );

    const again = await t.json<ImportAnswer>('tools', 'import', path);
    expect(again).toEqual({
      dry_run: false,
      revision: 1,
      tools: [
        expect.objectContaining({ name: 'people_search', outcome: 'unchanged' }),
        expect.objectContaining({ name: 'ping', outcome: 'unchanged' }),
      ],
    });
    expect((await t.run('tools', 'import', path)).stdout).toContain(
      'Imported 2 tools (2 unchanged); catalogue revision 1.',
    );

    const tools = await listJson();
    expect(tools.map((x) => x.name)).toEqual(['people_search', 'ping']);
    expect(tools[1]).toMatchObject({ name: 'ping', metering: null, description: '' });
  });

  it('a dry run after an edit tells created, updated and unchanged apart, and writes nothing', async () => {
    const edited = { ...PING, description: 'Is the upstream alive?' };
    const fresh = { name: 'company_enrich', upstream: { url: 'https://co.example.com/enrich' } };
    const path = file('edited.json', { tools: [PEOPLE, edited, fresh] });

    const human = await t.run('tools', 'import', path, '--dry-run');
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(
      'unchanged  people_search\nupdated    ping\ncreated    company_enrich\n\n' +
        'Dry run: would create 1, update 1 (1 unchanged); nothing was written.\n',
    );
    const json = await t.json<ImportAnswer>('tools', 'import', path, '--dry-run');
    expect(json.tools.map((x) => x.outcome)).toEqual(['unchanged', 'updated', 'created']);
    expect(json.revision).toBe(1);

    expect((await listJson()).map((x) => x.name)).toEqual(['people_search', 'ping']);
    expect((await t.json<ToolRecord>('tools', 'show', 'ping')).description).toBe('');

    // The real import does what the dry run said.
    const done = await t.run('tools', 'import', path);
    expect(done.stdout).toContain(
      'Imported 3 tools (1 created, 1 updated, 1 unchanged); catalogue revision 2.',
    );
    expect((await t.json<ToolRecord>('tools', 'show', 'ping')).description).toBe('Is the upstream alive?');
    expect((await t.run('tools', 'import', path, '--dry-run')).stdout).toContain(
      'Dry run: would change nothing (3 unchanged); nothing was written.',
    );
  });

  it('refuses a bad catalogue whole, listing every problem in both modes, exit 1', async () => {
    const path = file('bad.json', {
      tools: [
        { name: 'brand_new', upstream: { url: 'https://ok.example.com/x' } }, // fine on its own
        { name: 'Bad Name', upstream: { url: 'ftp://files.example.com/' } },
        { ...PING, metering: { category: 'Weather!' } },
        { name: 'slow', upstream: { url: 'http://a.example.com/', timeout_ms: 0 }, extra: true },
      ],
    });
    const paths = [
      '/tools/1/name',
      '/tools/1/upstream/url',
      '/tools/2/metering/category',
      '/tools/3/extra',
      '/tools/3/upstream/timeout_ms',
    ];

    const human = await t.run('tools', 'import', path);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    const lines = human.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('toolgate: The catalogue has 5 problems; nothing was changed.');
    expect(lines.slice(1).map((l) => l.match(/^ {2}(\S+): /)?.[1])).toEqual(paths);
    expect(human.stderr).toContain(
      '  /tools/2/metering/category: must be a category name: [a-z][a-z0-9_]{0,31}, such as enrich\n',
    );

    const json = await t.run('tools', 'import', path, '--json');
    expect(json.code).toBe(1);
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({ status: 'error', code: 'invalid_arguments' });
    expect(body.problems.map((p: { path: string }) => p.path)).toEqual(paths);
    expect(body.problems.every((p: { reason: string }) => p.reason.length > 0)).toBe(true);

    // A dry run refuses it the same way.
    expect((await t.run('tools', 'import', path, '--dry-run')).code).toBe(1);

    // Nothing half-imported: the good tool is not there, ping keeps its definition.
    expect((await listJson()).map((x) => x.name)).toEqual(['company_enrich', 'people_search', 'ping']);
    expect((await t.json<ToolRecord>('tools', 'show', 'ping')).metering).toBeNull();
    expect((await t.run('tools', 'show', 'brand_new')).code).toBe(1);
  });

  it('names the whole file when it is not a catalogue at all', async () => {
    const r = await t.run('tools', 'import', file('array.json', [PING]));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'toolgate: The catalogue has 1 problem; nothing was changed.\n' +
        '  (whole file): must be an object with a "tools" array\n',
    );
  });

  it('refuses a file that is not JSON, or is missing, with exit 2 and the path', async () => {
    const broken = file('broken.json', '{"tools": [');
    const human = await t.run('tools', 'import', broken);
    expect(human.code).toBe(2);
    expect(human.stderr).toMatch(
      new RegExp(`^toolgate: The catalogue file "${broken}" is not valid JSON: .+\\n$`),
    );
    const json = await t.run('tools', 'import', broken, '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'error', code: 'invalid_json' });

    const missing = join(t.dir, 'no-such.json');
    const gone = await t.run('tools', 'import', missing);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toBe(`toolgate: Cannot read the catalogue file "${missing}": no such file.\n`);
    const goneJson = await t.run('tools', 'import', missing, '--json');
    expect(goneJson.code).toBe(2);
    expect(JSON.parse(goneJson.stdout)).toMatchObject({ code: 'invalid_arguments' });
    expect(JSON.parse(goneJson.stdout).message).toContain(missing);
  });

  it('lists the catalogue as a table: category or free, the cost, the upstream without its query', async () => {
    const r = await t.run('tools', 'list');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+CATEGORY\s+TOKENS\s+UPSTREAM\s+UPDATED$/m);
    expect(r.stdout).toMatch(
      /^people_search\s+search\s+2\/call \+ 1\/record\s+https:\/\/people\.example\.com\/v1\/search\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m,
    );
    expect(r.stdout).toMatch(/^ping\s+free\s+0\s+http:\/\/127\.0\.0\.1:9000\/ping\s+\S+Z$/m);
    expect(r.stdout).not.toContain('in-the-query');
  });

  it('shows a whole definition, with the defaults applied', async () => {
    const record = await t.json<ToolRecord>('tools', 'show', 'people_search');
    expect(record).toEqual({
      ...PEOPLE,
      upstream: { ...PEOPLE.upstream, timeout_ms: 30_000, max_response_bytes: 10 * 1024 * 1024 },
      metering: { ...PEOPLE.metering, records_pointer: '/results', expected_records_pointer: null },
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const human = await t.run('tools', 'show', 'people_search');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^name\s+people_search$/m);
    expect(human.stdout).toMatch(/^category\s+search$/m);
    expect(human.stdout).toMatch(/^tokens\s+2\/call \+ 1\/record$/m);
    expect(human.stdout).toMatch(/^records pointer\s+"\/results"$/m);
    expect(human.stdout).toMatch(
      /^upstream\s+https:\/\/people\.example\.com\/v1\/search\?api_key=in-the-query$/m,
    );
    const headerLines = human.stdout
      .split('\n')
      .filter((l) => /^headers\s/.test(l))
      .map((l) => l.replace(/^headers\s+/, ''));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder, shown literally.
    expect(headerLines).toContain(`Authorization: ${bearer('${PEOPLE_TOKEN}')}`);
    expect(human.stdout).toContain('input schema:\n  {\n    "type": "object",');
    expect((await t.run('tools', 'show', 'ping')).stdout).toMatch(/^category\s+free$/m);
  });

  it('refuses to show or remove an unknown tool with exit 1', async () => {
    const show = await t.run('tools', 'show', 'nope');
    expect(show).toMatchObject({ code: 1, stdout: '', stderr: 'toolgate: No tool "nope".\n' });
    const showJson = await t.run('tools', 'show', 'nope', '--json');
    expect(showJson.code).toBe(1);
    expect(JSON.parse(showJson.stdout)).toMatchObject({ error: 'Not Found', code: 'not_found' });
    const remove = await t.run('tools', 'remove', 'nope', '--json');
    expect(remove.code).toBe(1);
    expect(JSON.parse(remove.stdout).code).toBe('not_found');
  });

  it('removes a tool, saying what it was', async () => {
    const human = await t.run('tools', 'remove', 'ping');
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toBe('Removed tool ping (free; http://127.0.0.1:9000/ping).\n');
    const json = await t.json<ToolRecord>('tools', 'remove', 'company_enrich');
    expect(json).toMatchObject({ name: 'company_enrich', metering: null });
    expect((await listJson()).map((x) => x.name)).toEqual(['people_search']);
    const again = await t.run('tools', 'remove', 'ping');
    expect(again).toMatchObject({ code: 1, stderr: 'toolgate: No tool "ping".\n' });
  });

  it('audits every change as cli:<OS user>, and no refusal or unchanged re-import', async () => {
    const entries = (await t.json<AuditRecord[]>('audit', 'list')).filter((e) =>
      e.action.startsWith('tool.'),
    );
    expect(entries.map((e) => [e.actor, e.action, e.account_id, e.target_id])).toEqual([
      [ACTOR, 'tool.put', null, 'people_search'],
      [ACTOR, 'tool.put', null, 'ping'],
      [ACTOR, 'tool.put', null, 'ping'],
      [ACTOR, 'tool.put', null, 'company_enrich'],
      [ACTOR, 'tool.remove', null, 'ping'],
      [ACTOR, 'tool.remove', null, 'company_enrich'],
    ]);
    // Header names only: a value may hold a secret written in place of a ${NAME}.
    expect(entries[0]?.details).toMatchObject({
      upstream: 'https://people.example.com/v1/search',
      header_names: ['Authorization'],
    });
  });
});
