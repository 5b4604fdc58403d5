import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from '../../src/http/request-logger.js';
import { captureLogs as capture } from '../helpers.js';

describe('the per-request logger', () => {
  it('logs what an eager child would, bindings and redaction included, only at enabled levels', () => {
    const { logger, lines } = capture('warn');
    let children = 0;
    // Counts the children made (pino's children inherit this method, so grandchildren count too).
    const child = logger.child;
    logger.child = function (this: typeof logger, ...a: Parameters<typeof logger.child>) {
      children++;
      return child.apply(this, a);
    } as typeof logger.child;
    const log = lazyChildLogger(logger, { request_id: 'req_1' }, {});

    log.info({ authorization: 'Bearer secret' }, 'not at warn');
    log.debug('nor this');
    expect(lines).toEqual([]);
    expect(children).toBe(0); // nothing logged, nothing made
    expect(log.level).toBe('warn');

    log.warn({ authorization: 'Bearer secret' }, 'store unavailable');
    log.error(new Error('boom'), 'unhandled error');
    expect(children).toBe(1);
    expect(lines.map((l) => [l.level, l.msg, l.request_id])).toEqual([
      [40, 'store unavailable', 'req_1'],
      [50, 'unhandled error', 'req_1'],
    ]);
    expect(lines[0]!.authorization).toBe('[redacted]');
    expect((lines[1]!.err as { message: string }).message).toBe('boom');

    log.child({ tool: 'get_account' }).warn('from a grandchild');
    expect(lines.at(-1)).toMatchObject({
      request_id: 'req_1',
      tool: 'get_account',
      msg: 'from a grandchild',
    });
  });

  it('follows a level set on it, as a child would', () => {
    const { logger, lines } = capture('warn');
    const log = lazyChildLogger(logger, { request_id: 'req_2' }, {});
    log.level = 'debug';
    log.debug('now shown');
    expect(lines).toMatchObject([{ msg: 'now shown', request_id: 'req_2' }]);
    expect(logger.level).toBe('warn'); // the parent is untouched
  });
});
