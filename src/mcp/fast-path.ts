/**
 * @module The hot MCP messages answered without the SDK's per-request machinery: a single
 * `tools/call`, `tools/list`, `ping` or `initialize` that is plainly well-formed, in either protocol
 * era, is validated by the SDK's exported spec schemas and answered here with exactly the bytes the
 * SDK would write (test/mcp/mcp.fast-path.test.ts compares both on every shape). Anything else (a
 * batch, a notification, another method, a header or envelope the SDK would refuse or has
 * something to say about) is left to the SDK (sdk-engine.ts), which owns every refusal.
 *
 * Each message is answered on its own: no map keyed by JSON-RPC id, so two callers using the same
 * id cannot receive each other's answers.
 */

import type { IncomingHttpHeaders } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isSpecType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { Caller, ToolCalls } from '../tools/call.js';
import type { ToolListing } from '../tools/registry.js';
import { SERVER_INFO, toolCallAnswer } from './results.js';

/** The revision of the stateless era the SDK serves (its own list of them is not exported). */
export const MODERN_VERSION = '2026-07-28';

const HOT = new Set(['tools/call', 'tools/list', 'ping', 'initialize']);
const LEGACY = new Set<string>(SUPPORTED_PROTOCOL_VERSIONS);
const SERVER_INFO_JSON = JSON.stringify(SERVER_INFO);
const MODERN_META = `"_meta":{${JSON.stringify(SERVER_INFO_META_KEY)}:${SERVER_INFO_JSON}}`;
const INITIALIZE_TAIL = `,"capabilities":{"tools":{"listChanged":false}},"serverInfo":${SERVER_INFO_JSON}}`;

interface Message {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC answer: its HTTP status and body. */
export interface FastAnswer {
  status: number;
  json: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The era a message is plainly in, or undefined when the SDK must judge it. */
function eraOf(message: Message, headers: IncomingHttpHeaders): 'legacy' | 'modern' | undefined {
  const accept = headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (headers['mcp-session-id'] !== undefined) return undefined;
  const header = headers['mcp-protocol-version'];
  const meta = message.params?._meta;
  const claim = isObject(meta) ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
  if (claim === undefined) {
    if (meta !== undefined && !isObject(meta)) return undefined;
    return header === undefined || LEGACY.has(header as string) ? 'legacy' : undefined;
  }
  // The envelope a negotiating client sends, with its headers matching the body. The stateless era
  // has no initialize and no ping: the SDK answers both "Method not found".
  if (claim !== MODERN_VERSION || header !== MODERN_VERSION) return undefined;
  if (message.method === 'initialize' || message.method === 'ping') return undefined;
  if (headers['mcp-method'] !== message.method) return undefined;
  const name = message.params?.name;
  if (message.method === 'tools/call' && headers['mcp-name'] !== name) return undefined;
  if (!isObject(meta) || !isObject(meta[CLIENT_INFO_META_KEY])) return undefined;
  if (!isObject(meta[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  return 'modern';
}

/** Whether the SDK's own schema takes the message as the request it names. */
function valid(message: Message): boolean {
  switch (message.method) {
    case 'tools/call':
      return isSpecType.CallToolRequest(message);
    case 'tools/list':
      return isSpecType.ListToolsRequest(message) && message.params?.cursor === undefined;
    case 'ping':
      return isSpecType.PingRequest(message);
    case 'initialize':
      return (
        isSpecType.InitializeRequest(message) &&
        LEGACY.has((message.params as { protocolVersion: string }).protocolVersion)
      );
    default:
      return false;
  }
}

/** The message, when it is a single request of a hot method with a well-formed id. */
function hotMessage(body: unknown): Message | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') return undefined;
  if (!HOT.has(body.method)) return undefined;
  const id = body.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (body.params !== undefined && !isObject(body.params)) return undefined;
  return body as unknown as Message;
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
    const message = hotMessage(body);
    if (!message) return undefined;
    const era = eraOf(message, headers);
    if (!era || !valid(message)) return undefined;
    const id = JSON.stringify(message.id);
    switch (message.method) {
      case 'tools/call':
        return this.toolCall(message, era, id, caller);
      case 'tools/list':
        return result(
          id,
          `{"tools":${this.toolsJson()}${era === 'modern' ? `,"resultType":"complete","ttlMs":0,"cacheScope":"private",${MODERN_META}` : ''}}`,
        );
      case 'ping':
        return result(id, '{}');
      default: {
        const version = (message.params as { protocolVersion: string }).protocolVersion;
        return result(id, `{"protocolVersion":${JSON.stringify(version)}${INITIALIZE_TAIL}`);
      }
    }
  }

  private toolCall(
    message: Message,
    era: 'legacy' | 'modern',
    id: string,
    caller: Caller,
  ): FastAnswer | Promise<FastAnswer> | undefined {
    const params = message.params as { name: string; arguments?: Record<string, unknown> };
    const write = (answer: ReturnType<typeof toolCallAnswer>): FastAnswer => {
      if ('error' in answer) {
        return { status: 200, json: `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(answer.error)}}` };
      }
      const tail = era === 'modern' ? `,"resultType":"complete",${MODERN_META}}` : '}';
      return result(id, `${answer.json.slice(0, -1)}${tail}`);
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
