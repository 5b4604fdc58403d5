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
import { type HotMessage, hotMessage, META_KEYS, MODERN_VERSION } from './hot-messages.js';
import { type ServerInfo, toolCallAnswer } from './results.js';

const CAPABILITIES = '{"tools":{"listChanged":false}}';
const CACHE_HINTS = '"ttlMs":0,"cacheScope":"private"';

/** The answers' parts that name the server, written once for its serverInfo. */
function serverParts(info: ServerInfo) {
  const json = JSON.stringify(info);
  const meta = `"_meta":{${JSON.stringify(META_KEYS.serverInfo)}:${json}}`;
  return {
    json,
    meta,
    discovered: `{"supportedVersions":["${MODERN_VERSION}"],"capabilities":${CAPABILITIES},"resultType":"complete",${CACHE_HINTS},${meta}}`,
  };
}

/** A JSON-RPC answer: its HTTP status and body ('' for an accepted notification). */
export interface FastAnswer {
  status: number;
  json: string;
}

export class FastPath {
  private listed: { tools: ToolListing[]; json: string } | undefined;
  private readonly server: ReturnType<typeof serverParts>;

  constructor(
    private readonly calls: ToolCalls,
    serverInfo: ServerInfo,
  ) {
    this.server = serverParts(serverInfo);
  }

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
        const tail =
          message.era === 'modern' ? `,"resultType":"complete",${CACHE_HINTS},${this.server.meta}` : '';
        return result(id, `{"tools":${this.toolsJson()}${tail}}`);
      }
      case 'ping':
        return result(id, '{}');
      case 'server/discover':
        return result(id, this.server.discovered);
      case 'notifications/initialized':
        return { status: 202, json: '' };
      default: {
        const version = JSON.stringify(message.params?.protocolVersion);
        return result(
          id,
          `{"protocolVersion":${version},"capabilities":${CAPABILITIES},"serverInfo":${this.server.json}}`,
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
      const end = message.era === 'modern' ? `,"resultType":"complete",${this.server.meta}}` : '}';
      return result(id, `${answer.json.slice(0, -1)}${end}`);
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

function result(id: string, json: string): FastAnswer {
  return { status: 200, json: `{"result":${json},"jsonrpc":"2.0","id":${id}}` };
}
