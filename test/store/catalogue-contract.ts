/**
 * The tool catalogue's part of the Store contract, written once and run on every backend: puts that
 * create, replace or leave a tool as it was, the revision that every change raises, removal, and
 * the audit entries written only with a change.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit.js';
import type { ToolDefinition } from '../../src/domain/catalogue.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import type { Store } from '../../src/store/store.js';
import type { StoreFixture } from './contract-fixtures.js';

const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

function tool(name: string, over: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    description: `The ${name} tool.`,
    input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    upstream: {
      url: `http://127.0.0.1:9/${name}`,
      timeout_ms: 30_000,
      max_response_bytes: 10_485_760,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a catalogue placeholder, meant literally.
      headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
    },
    metering: {
      category: 'search',
      records_pointer: '/results',
      expected_records_pointer: null,
      tokens_per_call: 0,
      tokens_per_record: 1,
    },
    ...over,
  };
}

let ms = T * 1000;
const audit = (targetId: string, action: 'tool.put' | 'tool.remove' = 'tool.put'): AuditEntry => ({
  id: newId('aud', ++ms),
  at: T,
  actor: 'cli:test',
  action,
  accountId: null,
  targetId,
  details: { name: targetId },
});

export function catalogueContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} tool catalogue`, () => {
    let fixture: StoreFixture;
    let store: Store;
    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      await store.migrate(DEFAULT_PLANS, T);
    });
    afterEach(async () => fixture.cleanup());

    it('starts empty at revision 0', async () => {
      expect(await store.catalogue.revision()).toBe(0);
      expect(await store.catalogue.list()).toEqual({ revision: 0, tools: [] });
      expect(await store.catalogue.get('search_people')).toBeUndefined();
    });

    it('puts several tools in one change, read back as given, in name order', async () => {
      const put = await store.catalogue.put([tool('search_people'), tool('enrich_company')], T);
      expect(put).toEqual({ revision: 1, outcomes: ['created', 'created'] });
      const listed = await store.catalogue.list();
      expect(listed.revision).toBe(1);
      expect(listed.tools.map((t) => t.definition)).toEqual([tool('enrich_company'), tool('search_people')]);
      expect(listed.tools[0]).toEqual({ definition: tool('enrich_company'), createdAt: T, updatedAt: T });
      // Read back member for member, in the order written: what an operator wrote is what is shown.
      const got = await store.catalogue.get('search_people');
      expect(JSON.stringify(got?.definition)).toBe(JSON.stringify(tool('search_people')));
    });

    it('replaces a changed tool, leaves an unchanged one, and raises the revision once', async () => {
      await store.catalogue.put([tool('a_tool'), tool('b_tool')], T);
      const changed = tool('b_tool', { description: 'New words.' });
      const put = await store.catalogue.put([tool('a_tool'), changed, tool('c_tool')], T + 60);
      expect(put).toEqual({ revision: 2, outcomes: ['unchanged', 'updated', 'created'] });
      expect(await store.catalogue.get('a_tool')).toEqual({
        definition: tool('a_tool'),
        createdAt: T,
        updatedAt: T,
      });
      expect(await store.catalogue.get('b_tool')).toEqual({
        definition: changed,
        createdAt: T,
        updatedAt: T + 60,
      });
    });

    it('a put that changes nothing keeps the revision and writes no audit entry', async () => {
      await store.catalogue.put([tool('a_tool')], T, [audit('a_tool')]);
      const again = await store.catalogue.put([tool('a_tool')], T + 1, [audit('a_tool')]);
      expect(again).toEqual({ revision: 1, outcomes: ['unchanged'] });
      const trail = await store.audit.list({ limit: 10 });
      expect(trail.map((e) => [e.action, e.targetId])).toEqual([['tool.put', 'a_tool']]);
    });

    it('writes the audit entry of each changed tool only', async () => {
      await store.catalogue.put([tool('a_tool')], T);
      await store.catalogue.put([tool('a_tool'), tool('b_tool')], T + 1, [audit('a_tool'), audit('b_tool')]);
      const trail = await store.audit.list({ limit: 10 });
      expect(trail.map((e) => e.targetId)).toEqual(['b_tool']);
    });

    it('removes a tool (audited, revision raised) and answers undefined for none', async () => {
      await store.catalogue.put([tool('a_tool'), tool('b_tool')], T);
      const removed = await store.catalogue.remove('a_tool', audit('a_tool', 'tool.remove'));
      expect(removed?.definition).toEqual(tool('a_tool'));
      expect(await store.catalogue.revision()).toBe(2);
      expect((await store.catalogue.list()).tools.map((t) => t.definition.name)).toEqual(['b_tool']);
      expect(await store.catalogue.remove('a_tool', audit('a_tool', 'tool.remove'))).toBeUndefined();
      expect(await store.catalogue.revision()).toBe(2);
      const trail = await store.audit.list({ limit: 10 });
      expect(trail.map((e) => e.action)).toEqual(['tool.remove']);
    });

    it('concurrent puts are each applied whole, and every change raises the revision', async () => {
      const rounds = Array.from({ length: 8 }, (_, i) =>
        store.catalogue.put([tool('shared', { description: `round ${i}` }), tool(`own_${i}`)], T + i),
      );
      const outcomes = await Promise.all(rounds);
      expect(new Set(outcomes.map((o) => o.revision)).size).toBe(8);
      expect(await store.catalogue.revision()).toBe(8);
      expect((await store.catalogue.list()).tools).toHaveLength(9);
    });
  });
}
