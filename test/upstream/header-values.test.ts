// biome-ignore-all lint/suspicious/noTemplateCurlyInString: catalogue placeholders, meant literally.
/**
 * Header values HTTP cannot carry (ESC, a byte-order mark, a lone surrogate, other control or
 * non-ASCII characters), written in a catalogue or held by a variable it names: refused at import,
 * or the tool answered 503 with one warning naming the header or variable, never forwarded to fail
 * as a 502 on every call. Against a real upstream HTTP server and the app's tools API.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/domain/catalogue.js';
import { serveCatalogue } from '../../src/tools/catalogue.js';
import { bearer, callTool } from '../calls.js';
import { type AppHarness, accountWithKey, scratchApp } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from './test-upstream.js';

const UNSENDABLE: [string, string][] = [
  ['ESC', bearer('\u001b[31mred')],
  ['a byte-order mark', `\ufeff${bearer('x')}`],
  ['a lone surrogate', bearer('\ud800x')],
  ['a tab', 'Bearer\tx'],
  ['DEL', bearer('x\u007f')],
  ['a Latin-1 letter', bearer('caf\u00e9')],
  ['an emoji', bearer('\u{1f600}')],
];

let upstream: TestUpstream;
let h: AppHarness | undefined;
beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('ping', (_call, res) => sendJson(res, 200, { results: { pong: true } }));
});
afterAll(async () => upstream.close());
afterEach(async () => {
  await h?.close();
  h = undefined;
  upstream.reset();
});

const call = async (app: AppHarness, key: string, tool: string) => callTool(app.app, key, tool, {});

describe('header values written in the catalogue', () => {
  it.each(UNSENDABLE)('one holding %s is refused at import, naming the header', async (_what, value) => {
    h = await scratchApp({ catalogue: {} });
    const put = await h.services.catalogue.put('ping', {
      upstream: { url: `${upstream.url}/ping`, headers: { 'X-Api': value } },
    });
    expect(put.ok).toBe(false);
    expect(!put.ok && put.error.details).toEqual({
      problems: [
        {
          path: '/upstream/headers/X-Api',
          reason: 'must be visible ASCII and spaces: no control character, byte-order mark or non-ASCII',
        },
      ],
    });
    expect(await h.store.catalogue.list()).toMatchObject({ revision: 0, tools: [] });
  });

  it('one written into the database past the import: 503 on every call, the upstream never called', async () => {
    h = await scratchApp({ catalogue: {} });
    const definitions: ToolDefinition[] = UNSENDABLE.map(([, value], i) => ({
      name: `raw_${i}`,
      description: '',
      input_schema: { type: 'object' },
      upstream: {
        url: `${upstream.url}/ping`,
        timeout_ms: 5000,
        max_response_bytes: 65536,
        headers: { 'X-Api': value },
      },
      metering: null,
    }));
    await h.store.catalogue.put(definitions, Math.floor(h.clock.now() / 1000));
    await h.catalogue?.refresh();
    const { key } = await accountWithKey(h.services);
    for (const { name } of definitions) {
      const res = await call(h, key, name);
      expect([name, res.statusCode, res.json().code]).toEqual([name, 503, 'unavailable']);
    }
    expect(upstream.calls).toHaveLength(0);
  });
});

describe('a variable holding what a header cannot carry', () => {
  it.each(UNSENDABLE)(
    '%s: 503 with one warning naming the variable, no 502 per call',
    async (_what, value) => {
      const env = { PEOPLE_TOKEN: value.replace(bearer(''), '') };
      h = await scratchApp({ catalogue: { env } });
      const put = await h.services.catalogue.put('people', {
        upstream: { url: `${upstream.url}/ping`, headers: { Authorization: bearer('${PEOPLE_TOKEN}') } },
      });
      expect(put.ok).toBe(true);
      const { key } = await accountWithKey(h.services);
      for (let i = 0; i < 5; i++) expect((await call(h, key, 'people')).statusCode).toBe(503);
      expect(upstream.calls).toHaveLength(0);

      // What a server logs when it loads that tool: the variable's name, never its value.
      const warnings: [string, Record<string, unknown>][] = [];
      const served = await serveCatalogue({
        catalogue: h.store.catalogue,
        env,
        upstreamEnv: ['PEOPLE_TOKEN'],
        warn: (message, fields) => warnings.push([message, fields]),
      });
      await served.close();
      expect(warnings).toEqual([
        [
          'catalogue tool unavailable: environment variables hold characters a header cannot carry (only visible ASCII and spaces)',
          { tool: 'people', not_ascii: ['PEOPLE_TOKEN'] },
        ],
      ]);
    },
  );

  it('visible ASCII and spaces pass through as they are', async () => {
    const token = ' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~';
    h = await scratchApp({ catalogue: { env: { PEOPLE_TOKEN: token } } });
    await h.services.catalogue.put('people', {
      upstream: { url: `${upstream.url}/ping`, headers: { 'X-Token': '[${PEOPLE_TOKEN}]' } },
    });
    const { key } = await accountWithKey(h.services);
    expect((await call(h, key, 'people')).statusCode).toBe(200);
    expect(upstream.calls[0]?.headers['x-token']).toBe(`[${token}]`);
  });
});
