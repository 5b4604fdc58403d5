// biome-ignore-all lint/suspicious/noTemplateCurlyInString: catalogue placeholders, meant literally.
/**
 * The tool registry on a served catalogue (a real SQLite file, a real upstream): what it finds,
 * lists and prices, and the refusals every caller of a found tool gets; then a catalogue tool and
 * get_billing called through ToolCalls directly, the price in the ledger and in the answer.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/api-error.js';
import { createServices, type Services } from '../../src/service/index.js';
import { type Caller, ToolCalls } from '../../src/tools/call.js';
import { type ServedCatalogue, serveCatalogue } from '../../src/tools/catalogue.js';
import { TOOLS } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { accountWithKey, captureLogs, type Harness, scratchServices } from '../helpers.js';
import { sendJson, startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
  upstream.on('people', (call, res) => {
    const { n } = call.body as { n: number };
    sendJson(res, 200, { results: Array.from({ length: n }, (_, i) => ({ i })) });
  });
});
afterAll(async () => upstream.close());

describe('the tool registry, on a served catalogue', () => {
  let h: Harness;
  let served: ServedCatalogue;
  let services: Services;
  let registry: ToolRegistry;
  const { logger } = captureLogs('silent');

  beforeEach(async () => {
    upstream.reset();
    h = await scratchServices();
    const upstreamEnv = ['PEOPLE_TOKEN', 'NOT_SET_ANYWHERE'];
    served = await serveCatalogue({
      catalogue: h.store.catalogue,
      env: { PEOPLE_TOKEN: 'upstream-secret' },
      upstreamEnv,
    });
    services = createServices({ ...h.deps, upstreamEnv, catalogueChanged: () => served.refresh() });
    const imported = await services.catalogue.import({
      tools: [
        {
          name: 'zeta_people',
          input_schema: {
            type: 'object',
            properties: { n: { type: 'integer', minimum: 0 } },
            required: ['n'],
            additionalProperties: false,
          },
          upstream: { url: `${upstream.url}/people`, headers: { 'X-Token': '${PEOPLE_TOKEN}' } },
          metering: { category: 'search', tokens_per_call: 2, tokens_per_record: 1 },
        },
        { name: 'alpha_ping', upstream: { url: `${upstream.url}/people` } },
        {
          name: 'locked',
          upstream: { url: `${upstream.url}/people`, headers: { 'X-Token': '${NOT_SET_ANYWHERE}' } },
        },
      ],
    });
    expect(imported.ok).toBe(true);
    registry = new ToolRegistry(TOOLS, served);
  });
  afterEach(async () => {
    await served.close();
    await h.close();
  });

  it('finds a registered tool and a catalogue tool by name, and nothing else', () => {
    expect(registry.find('get_account')?.tool.name).toBe('get_account');
    expect(registry.find('zeta_people')?.tool.name).toBe('zeta_people');
    expect(registry.find('no_such_tool')).toBeUndefined();
  });

  it('lists the registered tools first, then the catalogue by name; made again only on a new revision', async () => {
    const first = registry.list();
    expect(first.map((t) => t.name)).toEqual([
      'get_account',
      'get_billing',
      'get_usage',
      'alpha_ping',
      'locked',
      'zeta_people',
    ]);
    expect(first.find((t) => t.name === 'zeta_people')?.inputSchema).toMatchObject({
      type: 'object',
      required: ['n'],
    });
    expect(first.every((t) => t.inputSchema.type === 'object')).toBe(true);
    expect(registry.list()).toBe(first);
    expect((await services.catalogue.remove('alpha_ping')).ok).toBe(true);
    const after = registry.list();
    expect(after).not.toBe(first);
    expect(after.map((t) => t.name)).not.toContain('alpha_ping');
  });

  it('prices every tool per call and per record; account and free tools 0 and 0', () => {
    expect(registry.tokenCosts()).toEqual({
      get_account: { per_call: 0, per_record: 0, unit: 'records' },
      get_billing: { per_call: 0, per_record: 0, unit: 'records' },
      get_usage: { per_call: 0, per_record: 0, unit: 'records' },
      alpha_ping: { per_call: 0, per_record: 0, unit: 'records' },
      locked: { per_call: 0, per_record: 0, unit: 'records' },
      zeta_people: { per_call: 2, per_record: 1, unit: 'records' },
    });
  });

  it('admits a found tool only when it is served here and its arguments are an object its schema takes', () => {
    const refusal = (name: string, args: unknown) => {
      const callable = registry.find(name);
      if (!callable) throw new Error(`no ${name}`);
      try {
        ToolRegistry.admit(callable, args);
        return undefined;
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        return { code: (err as ApiError).code, message: (err as ApiError).message };
      }
    };
    expect(refusal('zeta_people', { n: 1 })).toBeUndefined();
    expect(refusal('get_account', {})).toBeUndefined();
    expect(refusal('locked', {})?.code).toBe('unavailable');
    // Not served here says so without naming the variable.
    expect(refusal('locked', {})?.message).not.toContain('NOT_SET_ANYWHERE');
    expect(refusal('zeta_people', [])).toEqual({
      code: 'invalid_arguments',
      message: 'The arguments must be a JSON object.',
    });
    expect(refusal('zeta_people', { n: -1 })?.code).toBe('invalid_arguments');
    expect(refusal('zeta_people', { n: 1, more: 1 })?.code).toBe('invalid_arguments');
    expect(refusal('get_account', { plan: 'x' })?.code).toBe('invalid_arguments');
  });

  describe('called through ToolCalls', () => {
    let calls: ToolCalls;
    beforeEach(() => {
      calls = new ToolCalls(registry, services);
    });
    const caller = (who: { accountId: string; keyId: string }): Caller => ({
      ...who,
      requestId: 'req_registry',
      log: logger,
      startedAt: 0,
      refusal: null,
    });

    it('a catalogue hit reaches the upstream once and charges per call and per record in the ledger', async () => {
      const acme = await accountWithKey(services, { tokens: 20 });
      const res = await calls.call('mcp', caller(acme), 'zeta_people', { n: 3 });
      expect(res).toMatchObject({ ok: true, status: 200 });
      expect(res.ok && res.body).toMatchObject({
        results: [{ i: 0 }, { i: 1 }, { i: 2 }],
        status: 'ok',
        metadata: { tokens_charged: 5, tokens_remaining: 15 },
      });
      expect(upstream.calls).toHaveLength(1);
      expect(upstream.calls[0]?.headers['x-token']).toBe('upstream-secret');
      const ledger = await h.store.ledger.list(acme.accountId, { limit: 10 });
      expect(ledger.filter((e) => e.kind === 'charge')).toEqual([
        expect.objectContaining({ amount: 5, balanceAfter: 15, reason: 'zeta_people' }),
      ]);
      expect((await h.store.accounts.get(acme.accountId))?.tokenBalance).toBe(15);
    });

    it('a tool not served here is 503 unavailable, and its upstream is never called', async () => {
      const acme = await accountWithKey(services, { tokens: 20 });
      const res = await calls.call('http', caller(acme), 'locked', {});
      expect(res).toMatchObject({ ok: false, status: 503 });
      expect(!res.ok && res.error.code).toBe('unavailable');
      expect(upstream.calls).toHaveLength(0);
    });

    it("get_billing answers the registry's prices", async () => {
      const acme = await accountWithKey(services, { tokens: 20 });
      const res = await calls.call('http', caller(acme), 'get_billing', {});
      expect(res.ok).toBe(true);
      if (!res.ok) return;
      const body = res.json === undefined ? res.body : JSON.parse(res.json);
      expect(body.results.token_costs).toEqual({
        get_account: 0,
        get_billing: 0,
        get_usage: 0,
        alpha_ping: 0,
        locked: 0,
        zeta_people: 1,
      });
      expect(body.results.token_cost_details.zeta_people).toEqual({
        per_call: 2,
        per_record: 1,
        unit: 'records',
      });
    });
  });
});
