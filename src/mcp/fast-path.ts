/**
 * @module The hot MCP messages answered without the SDK's per-request machinery: a single
 * `tools/call` or `tools/list` in either era, `ping`, `initialize` and `notifications/initialized`
 * (2025) and `server/discover` (2026-07-28), when plainly well-formed (hot-messages.ts), answered
 * with exactly the bytes the SDK would write (test/mcp/mcp.fast-path.test.ts compares both on
 * every shape). Anything else is left to the SDK (sdk-engine.ts), which owns every refusal.
 *
 * Each message is answered on its own: no map keyed by JSON-RPC id, so two callers using the same
 * id cannot receive each other's answers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Caller, ToolCalls } from '../tools/call.js';
import type { ToolListing } from '../tools/registry.js';
import { type Era, type HotMessage, hotMessage, META_KEYS, MODERN_VERSION } from './hot-messages.js';
import { SERVER_INFO, toolCallAnswer } from './results.js';

const SERVER_INFO_JSON = JSON.stringify(SERVER_INFO);
const CAPABILITIES = '{"tools":{"listChanged":false}}';
const MODERN_META = `"_meta":{${JSON.stringify(META_KEYS.serverInfo)}:${SERVER_INFO_JSON}}`;
const CACHE_HINTS = '"ttlMs":0,"cacheScope":"private"';
const DISCOVERED = `{"supportedVersions":["${MODERN_VERSION}"],"capabilities":${CAPABILITIES},"resultType":"complete",${CACHE_HINTS},${MODERN_META}}`;

/** A JSON-RPC answer: its HTTP status and body ('' for an accepted notification). */
export interface FastAnswer {
  status: number;
  json: string;
}

export class FastPath {
  private listed: { tools: ToolListing[]; json: string } | undefined;

  constructor(private readonly calls: ToolCalls) {}

  /**
   * The answer to a hot message, at once or through one promise; undefined when the SDK must
   * answer (then nothing has been counted or run).
   */
  answer(
    body: unknown,
    headers: IncomingHttpHeaders,
    caller: Caller,
  ): FastAnswer | Promise<FastAnswer> | undefined {
    const message = hotMessage(body, headers);
    if (!message) return undefined;
    const id = message.id ?? 'null';
    switch (message.method) {
      case 'tools/call':
        return this.toolCall(message, id, caller);
      case 'tools/list': {
        const tail = message.era === 'modern' ? `,"resultType":"complete",${CACHE_HINTS},${MODERN_META}` : '';
        return result(id, `{"tools":${this.toolsJson()}${tail}}`);
      }
      case 'ping':
        return result(id, '{}');
      case 'server/discover':
        return result(id, DISCOVERED);
      case 'notifications/initialized':
        return { status: 202, json: '' };
      default: {
        const version = JSON.stringify(message.params?.protocolVersion);
        return result(
          id,
          `{"protocolVersion":${version},"capabilities":${CAPABILITIES},"serverInfo":${SERVER_INFO_JSON}}`,
        );
      }
    }
  }

  private toolCall(message: HotMessage, id: string, caller: Caller): FastAnswer | Promise<FastAnswer> {
    const params = message.params as { name: string; arguments?: Record<string, unknown> };
    const write = (answer: ReturnType<typeof toolCallAnswer>): FastAnswer => {
      if ('error' in answer) {
        return { status: 200, json: `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(answer.error)}}` };
      }
      return result(id, `${answer.json.slice(0, -1)}${tail(message.era)}`);
    };
    const called = this.calls.call('mcp', caller, params.name, params.arguments ?? {});
    return called instanceof Promise
      ? called.then((c) => write(toolCallAnswer(c, caller.requestId)))
      : write(toolCallAnswer(called, caller.requestId));
  }

  /** The tool list as JSON, made again only when the catalogue changed. */
  private toolsJson(): string {
    const tools = this.calls.registry.list();
    if (this.listed?.tools !== tools) this.listed = { tools, json: JSON.stringify(tools) };
    return this.listed.json;
  }
}

/** What closes a tool call's result: 2026-07-28's completion and server identity, or nothing. */
const tail = (era: Era) => (era === 'modern' ? `,"resultType":"complete",${MODERN_META}}` : '}');

function result(id: string, json: string): FastAnswer {
  return { status: 200, json: `{"result":${json},"jsonrpc":"2.0","id":${id}}` };
}
