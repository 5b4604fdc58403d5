import { describe, expect, it } from 'vitest';
import { lazyChildLogger, requestForLog } from '../../src/http/request-logger.js';
import { bearer } from '../calls.js';
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

    log.info({ authorization: bearer('secret') }, 'not at warn');
    log.debug('nor this');
    expect(lines).toEqual([]);
    expect(children).toBe(0); // nothing logged, nothing made
    expect(log.level).toBe('warn');

    log.warn({ authorization: bearer('secret') }, 'store unavailable');
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

describe('a request as a log line shows it', () => {
  const shown = (url: string, host: string) =>
    requestForLog({ method: 'GET', url, host, ip: '192.0.2.1', socket: { remotePort: 4000 } });

  it('keeps the path and drops the query string, the fragment and credentials in an absolute URL', () => {
    expect(shown('/healthz?key=tg_AAAAAAAAAAA', 'x').url).toBe('/healthz');
    expect(shown('/a#token=secret', 'x').url).toBe('/a');
    expect(shown('http://user:secret@x/healthz?k=1', 'x').url).toBe('http://x/healthz');
    expect(shown('/api/v1/tools/get_account', 'x')).toEqual({
      method: 'GET',
      url: '/api/v1/tools/get_account',
      host: 'x',
      remoteAddress: '192.0.2.1',
      remotePort: 4000,
    });
  });

  it('shows a Host that is a host name, an IPv4 or an IPv6 address, with its port; nothing else', () => {
    for (const host of [
      'api.example.com',
      'api.example.com:8080',
      '127.0.0.1:3000',
      '[::1]:8080',
      'localhost',
    ])
      expect(shown('/', host).host).toBe(host);
    for (const host of ['tg_AAAAAAAAAAA', 'x:secret@y', 'a b', '', `${'a'.repeat(300)}.com`, 'x\u0000'])
      expect(shown('/', host).host).toBe('[not a host name]');
  });
});
