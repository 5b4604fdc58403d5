import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { TOOLS } from '../../src/tools/index.js';
import type { AccountTool } from '../../src/tools/tool.js';
import { callTool } from '../calls.js';
import { ADMIN_TOKEN, type AppHarness, accountWithKey, captureLogs, scratchApp } from '../helpers.js';

/** Test-only tools: one that logs a warning and answers, one that throws. */
const noisy: AccountTool = {
  kind: 'account',
  name: 'test_noisy',
  summary: 'test only',
  description: 'logs a warning',
  args: Type.Object({}, { additionalProperties: false }),
  response: Type.Object({ results: Type.Object({}), status: Type.Literal('ok'), metadata: Type.Object({}) }),
  run(ctx) {
    ctx.log.warn({ tool: 'test_noisy' }, 'noisy tool warns');
    return { results: {}, status: 'ok', metadata: {} };
  },
};
const broken: AccountTool = {
  ...noisy,
  name: 'test_broken',
  description: 'throws',
  run() {
    throw new Error('tool broke');
  },
};

describe('request logging', () => {
  let h: AppHarness;
  let key: string;
  beforeEach(async () => {
    h = await scratchApp();
    ({ key } = await accountWithKey(h.services));
  });
  afterEach(async () => h.close());

  async function serve(level: string) {
    const { logger, lines } = captureLogs(level);
    const app = await buildApp({
      services: h.services,
      adminToken: ADMIN_TOKEN,
      logger,
      tools: [...TOOLS, noisy, broken],
    });
    const call = async (tool: string) => {
      const res = await callTool(app, key, tool, {});
      return { status: res.statusCode, id: String(res.headers['x-request-id']) };
    };
    return { app, lines, call };
  }

  it('at warn: nothing per request, and warnings and errors carry the request id', async () => {
    const { app, lines, call } = await serve('warn');
    const ok = await call('get_account');
    expect(ok.status).toBe(200);
    expect(lines).toEqual([]);

    const warned = await call('test_noisy');
    const failed = await call('test_broken');
    await app.close();
    expect(warned.status).toBe(200);
    expect(failed.status).toBe(500);
    expect(lines.map((l) => [l.level, l.msg, l.request_id])).toEqual([
      [40, 'noisy tool warns', warned.id],
      [50, 'unhandled error', failed.id],
    ]);
    expect(lines[0]!.tool).toBe('test_noisy');
    expect((lines[1]!.err as { message: string }).message).toBe('tool broke');
  });

  it('at info: an incoming and a completed line per request, with the request id and status', async () => {
    const { app, lines, call } = await serve('info');
    const ok = await call('get_account');
    await app.close();
    const mine = lines.filter((l) => l.request_id === ok.id);
    expect(mine.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
    expect(mine[1]).toMatchObject({ level: 30, res: { statusCode: 200 } });
    expect(typeof mine[1]!.responseTime).toBe('number');
  });

  it('at error: a warning is not logged, an error is', async () => {
    const { app, lines, call } = await serve('error');
    await call('test_noisy');
    const failed = await call('test_broken');
    await app.close();
    expect(lines.map((l) => [l.msg, l.request_id])).toEqual([['unhandled error', failed.id]]);
  });
});
