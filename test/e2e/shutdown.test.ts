import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer } from '../calls.js';
import { scratchDir } from '../helpers.js';
import { adminCall, E2E_ADMIN_TOKEN } from './admin-client.js';
import { startServer } from './process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('graceful shutdown', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterEach(() => cleanup());

  it('on SIGTERM stops accepting, finishes the request in flight, and exits 0', async () => {
    const server = await startServer({
      TOOLGATE_DATABASE_URL: `sqlite:${join(dir, 'toolgate.db')}`,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      NODE_ENV: 'production',
    });
    const accountId = (await adminCall(server.url, 'POST', '/accounts', { name: 'shutdown' })).body.id;
    const key = (await adminCall(server.url, 'POST', `/accounts/${accountId}/keys`, {})).body.key;
    const { port } = new URL(server.url);

    // A request in flight: headers sent, half of its body still to come.
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let answer = '';
    socket.on('data', (d) => {
      answer += d;
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /api/v1/tools/get_account HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(key)}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
    );
    await sleep(100);

    const exited = server.stop('SIGTERM');
    // New connections are refused once the listener is closed.
    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) {
      refused = await fetch(`${server.url}/healthz`).then(
        () => false,
        () => true,
      );
      if (!refused) await sleep(20);
    }
    expect(refused).toBe(true);

    // The request in flight is finished and answered.
    socket.end('}');
    await closed;
    expect(answer).toMatch(/^HTTP\/1.1 200 OK/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).results.id).toBe(accountId);
    expect(await exited).toBe(0);
  });
});
