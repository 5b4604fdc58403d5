/** @module `toolgate account --key`: call get_account through the typed client and render it for a person. */
import { type Command, Option } from 'commander';
import { ToolgateClient } from '../client/toolgate-client.js';
import { httpUrl, wholeNumber } from './args.js';
import { CliError, emit, JSON_HELP, type JsonOption } from './output.js';
import { accountBlock } from './render.js';

interface AccountOptions extends JsonOption {
  key: string;
  url?: string;
  timeout: number;
}

export function registerAccount(program: Command): void {
  program
    .command('account')
    .description('show the account that owns an API key, as get_account answers (over HTTP)')
    .addOption(new Option('--key <key>', 'the API key').env('TOOLGATE_API_KEY').makeOptionMandatory())
    .option(
      '--url <base-url>',
      'where toolgate answers (default http://HOST:PORT, else http://127.0.0.1:8080)',
      httpUrl,
    )
    .option(
      '--timeout <ms>',
      'give up after this many milliseconds',
      wholeNumber('--timeout', 1, 600_000),
      10_000,
    )
    .option('--json', JSON_HELP)
    .action(async (opts: AccountOptions) => {
      const client = new ToolgateClient({
        baseUrl: opts.url ?? defaultUrl(process.env),
        apiKey: opts.key,
        timeoutMs: opts.timeout,
      });
      const answer = await client.getAccount();
      emit(opts, answer, () => accountBlock(answer.results));
    });
}

/** The address `toolgate serve` would listen on, from HOST and PORT; a wildcard host is reached on loopback. */
export function defaultUrl(env: NodeJS.ProcessEnv): string {
  const port = env.PORT || '8080';
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new CliError(
      'invalid_configuration',
      `PORT must be a port number from 1 to 65535 (got "${port}"); or give --url.`,
    );
  }
  let host = env.HOST || '127.0.0.1';
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
