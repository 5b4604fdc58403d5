/**
 * A metered catalogue tool's record count, read at its `records_pointer` in a real upstream's
 * answer, on SQLite and PostgreSQL: an array counts its length, an object 1, a safe non-negative
 * whole number itself, null or absent 0; any other value there (a number too big to be exact,
 * fractional or negative, a string, a boolean) is the upstream's error, 502 upstream_error, and
 * nothing is consumed or charged, never counted as 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../calls.js';
import { type BackendApp, backends } from '../http/admin.backends.js';
import { admin } from '../http/admin.test-helpers.js';
import { startTestUpstream, type TestUpstream } from '../upstream/test-upstream.js';

/** The upstream's answer, as text (so numbers JSON.stringify would rewrite go out as written), by case. */
const ANSWERS: Record<string, string> = {
  'too big': '{"results": 99999999999999999999999}',
  '2^53': '{"results": 9007199254740992}',
  exponent: '{"results": 1e21}',
  fractional: '{"results": 1.5}',
  negative: '{"results": -1}',
  'a string': '{"results": "5"}',
  'a boolean': '{"results": true}',
  three: '{"results": 3}',
  'an array of two': '{"results": [{"a": 1}, {"a": 2}]}',
  'an object': '{"results": {"a": 1}}',
  null: '{"results": null}',
  absent: '{"metadata": {"note": "nothing"}}',
  '2^53 - 1': '{"results": 9007199254740991}',
};

const REFUSED = ['too big', '2^53', 'exponent', 'fractional', 'negative', 'a string', 'a boolean'];
const COUNTED: [string, number][] = [
  ['three', 3],
  ['an array of two', 2],
  ['an object', 1],
  ['null', 0],
  ['absent', 0],
];

for (const backend of await backends()) {
  describe(`record counts from the upstream, on ${backend.name}`, () => {
    let upstream: TestUpstream;
    let h: BackendApp;
    let key: string;
    let account: string;

    beforeAll(async () => {
      upstream = await startTestUpstream();
      upstream.on('count', (call, res) => {
        const text = ANSWERS[(call.body as { case: string }).case] ?? '{}';
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
      h = await backend.make({ catalogue: true });
      const a = admin(h);
      const put = await a.put('/tools/count_things', {
        description: 'Counts things.',
        input_schema: { type: 'object', properties: { case: { type: 'string' } } },
        upstream: { url: `${upstream.url}/count` },
        metering: { category: 'enrich', tokens_per_call: 1, tokens_per_record: 1 },
      });
      expect(put.statusCode, put.body).toBe(201);
      account = (await a.post('/accounts', { name: 'Counter', tokens: 1000 })).json().id;
      key = (await a.post(`/accounts/${account}/keys`, {})).json().key;
    });
    afterAll(async () => {
      await h?.close();
      await upstream?.close();
    });

    const call = (which: string) => callTool(h.app, key, 'count_things', { case: which });
    const standing = async () => {
      const body = (await admin(h).get(`/accounts/${account}`)).json();
      return { balance: body.token_balance, enrich: body.fair_use.enrich };
    };

    for (const which of REFUSED) {
      it(`${which} at the records pointer: 502 upstream_error, nothing consumed or charged`, async () => {
        const before = await standing();
        const res = await call(which);
        expect(res.statusCode, res.body).toBe(502);
        expect(res.json()).toMatchObject({ status: 'error', code: 'upstream_error' });
        expect(await standing()).toEqual(before);
      });
    }

    it('2^53 - 1 at the records pointer is a count, which fair use refuses (429), nothing consumed or charged', async () => {
      const before = await standing();
      const res = await call('2^53 - 1');
      expect(res.statusCode, res.body).toBe(429);
      expect(res.json()).toMatchObject({ code: 'fair_use_exceeded' });
      expect(await standing()).toEqual(before);
    });

    for (const [which, records] of COUNTED) {
      it(`${which} at the records pointer counts ${records}`, async () => {
        const before = await standing();
        const res = await call(which);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().metadata.tokens_charged).toBe(1 + records);
        const after = await standing();
        expect(after.balance).toBe(before.balance - 1 - records);
        expect(after.enrich.records['5h'].used - before.enrich.records['5h'].used).toBe(records);
      });
    }
  });
}
