#!/usr/bin/env node
/** @module `npm start`: serve on the configured database (embedded SQLite by default). */
// First: before anything big is loaded (see tick-shape.ts).
import './tick-shape.js';
import { ConfigError, loadConfig } from './config.js';
import { startServer } from './server.js';

export async function serve(overrides: { host?: string; port?: number } = {}): Promise<void> {
  let starting: Promise<Awaited<ReturnType<typeof startServer>>> | undefined;
  // Listened for before the start: a signal that arrives while it finishes (the listening line is
  // out) waits for it, then shuts down cleanly, instead of killing the process mid-way.
  const stop = (signal: string) => {
    void starting?.then(
      (running) => {
        running.log.info({ signal }, 'shutting down');
        running.close().then(
          () => process.exit(0),
          (err) => {
            running.log.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
        // A start that failed is reported (and exits) where it is awaited below.
      },
      () => {},
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  try {
    const config = loadConfig();
    // Only what was given overrides the environment.
    if (overrides.host !== undefined) config.host = overrides.host;
    if (overrides.port !== undefined) config.port = overrides.port;
    starting = startServer(config);
    await starting;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`toolgate: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

const entry = process.argv[1] ?? '';
if (import.meta.url === `file://${entry}` || entry.endsWith('/dist/main.js')) {
  serve().catch((err) => {
    process.stderr.write(`toolgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
