/** @module `toolgate serve`: run the HTTP service in the foreground, as `npm start` does. */
import type { Command } from 'commander';
import { nonEmpty, wholeNumber } from './args.js';
import { JSON_HELP, type JsonOption } from './output.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'serve the tools API (and the admin API when TOOLGATE_ADMIN_TOKEN is set) until SIGTERM/SIGINT',
    )
    .option('--host <host>', 'address to listen on (default HOST or 127.0.0.1)', nonEmpty('--host'))
    .option(
      '--port <n>',
      'port to listen on, 0 for any free one (default PORT or 8080)',
      wholeNumber('--port', 0, 65535),
    )
    .option('--json', `${JSON_HELP} (the log is JSON lines either way)`)
    .action(async (opts: JsonOption & { host?: string; port?: number }) => {
      // Imported here so that the other commands do not load the HTTP stack.
      const { serve } = await import('../main.js');
      await serve({
        ...(opts.host !== undefined ? { host: opts.host } : {}),
        ...(opts.port !== undefined ? { port: opts.port } : {}),
      });
    });
}
