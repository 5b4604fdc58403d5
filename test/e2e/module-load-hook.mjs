// Loaded with `node --import` by serve.test.ts: says on stderr when the MCP SDK is first resolved,
// so a test can see when the server loads it.
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@modelcontextprotocol/')) process.stderr.write('resolving ' + specifier + '\\n');
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
