/**
 * The Redis the tests use: TOOLGATE_TEST_REDIS_URL, by default the local server. When it does not
 * answer, the Redis tests are skipped with a loud notice, unless TOOLGATE_REQUIRE_REDIS=1 (CI), in
 * which case they fail.
 */
import { createConnection } from 'node:net';

export const REDIS_URL = process.env.TOOLGATE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

let probe: Promise<boolean> | undefined;

export function redisAvailable(): Promise<boolean> {
  probe ??= new Promise<boolean>((resolve, reject) => {
    const url = new URL(REDIS_URL);
    const socket = createConnection({ host: url.hostname, port: Number(url.port || 6379) });
    const done = (ok: boolean, why?: string) => {
      socket.destroy();
      if (!ok) {
        if (process.env.TOOLGATE_REQUIRE_REDIS === '1') {
          reject(new Error(`TOOLGATE_REQUIRE_REDIS=1 but Redis at ${REDIS_URL} does not answer: ${why}`));
          return;
        }
        process.stderr.write(
          `\n${'!'.repeat(78)}\n!! Redis at ${REDIS_URL} does not answer (${why}).\n!! The Redis tests are SKIPPED. Set TOOLGATE_TEST_REDIS_URL, or TOOLGATE_REQUIRE_REDIS=1 to fail instead.\n${'!'.repeat(78)}\n\n`,
        );
      }
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false, 'timeout'));
    socket.once('error', (err) => done(false, err.message));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG'), d.toString().trim()));
  });
  return probe;
}
