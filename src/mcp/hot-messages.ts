/**
 * @module Which MCP messages the hot path may answer: a single, plainly well-formed request (or the
 * `notifications/initialized` that follows a 2025 handshake) whose era, headers and members the
 * SDK would take without a word. The checks are the SDK's spec schemas' rules for these few shapes,
 * written out so that a server whose callers only make hot calls does not load the SDK and its
 * schemas (some 20-25 MiB); test/mcp/mcp.fast-path.test.ts holds them to the SDK's own
 * `isSpecType` and to its answers. Anything not plainly so is left to the SDK.
 */
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The stateless revision the SDK serves. The SDK keeps its list of these internal (no public
 * constant, unlike SUPPORTED_PROTOCOL_VERSIONS): test/mcp/mcp.fast-path.test.ts holds this one to
 * what a bare SDK handler's `server/discover` answer and its unsupported-revision refusal name.
 */
export const MODERN_VERSION = '2026-07-28';
/** The SDK's SUPPORTED_PROTOCOL_VERSIONS and envelope keys (test/mcp/mcp.fast-path.test.ts compares). */
export const LEGACY_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];
export const META_KEYS = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

const LEGACY = new Set(LEGACY_VERSIONS);

export type HotMethod =
  | 'tools/call'
  | 'tools/list'
  | 'ping'
  | 'initialize'
  | 'server/discover'
  | 'notifications/initialized';
export type Era = 'legacy' | 'modern';

export interface HotMessage {
  era: Era;
  method: HotMethod;
  /** The request's id as JSON, undefined for the notification. */
  id: string | undefined;
  params: Record<string, unknown> | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Methods by era: the stateless era has no initialize and no ping, the 2025 ones no discovery. */
const METHODS: Record<Era, ReadonlySet<string>> = {
  legacy: new Set(['tools/call', 'tools/list', 'ping', 'initialize', 'notifications/initialized']),
  modern: new Set(['tools/call', 'tools/list', 'server/discover']),
};

/** The message when the hot path may answer it, else undefined (the SDK answers). */
export function hotMessage(body: unknown, headers: IncomingHttpHeaders): HotMessage | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') return undefined;
  const params = body.params;
  if (params !== undefined && !isObject(params)) return undefined;
  const isNotification = body.method === 'notifications/initialized';
  if (isNotification ? 'id' in body : !validId(body.id)) return undefined;
  const era = eraOf(body.method, params, headers);
  if (!era || !METHODS[era].has(body.method)) return undefined;
  const method = body.method as HotMethod;
  if (!membersValid(method, params)) return undefined;
  return { era, method, id: isNotification ? undefined : JSON.stringify(body.id), params };
}

const validId = (id: unknown) => typeof id === 'string' || Number.isSafeInteger(id);

/** The era a message is plainly in, or undefined when the SDK must judge it. */
function eraOf(
  method: string,
  params: Record<string, unknown> | undefined,
  headers: IncomingHttpHeaders,
): Era | undefined {
  const accept = headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (headers['mcp-session-id'] !== undefined) return undefined;
  const header = headers['mcp-protocol-version'];
  const meta = params?._meta;
  if (meta !== undefined && !isObject(meta)) return undefined;
  const claim = meta?.[META_KEYS.protocolVersion];
  if (claim === undefined) return header === undefined || LEGACY.has(header as string) ? 'legacy' : undefined;
  // The envelope a negotiating client sends, with its headers matching the body.
  if (claim !== MODERN_VERSION || header !== MODERN_VERSION || headers['mcp-method'] !== method)
    return undefined;
  if (method === 'tools/call' && headers['mcp-name'] !== params?.name) return undefined;
  if (!isObject(meta?.[META_KEYS.clientInfo]) || !isObject(meta?.[META_KEYS.clientCapabilities]))
    return undefined;
  const info = meta[META_KEYS.clientInfo] as Record<string, unknown>;
  return typeof info.name === 'string' && typeof info.version === 'string' ? 'modern' : undefined;
}

/** The members each hot method must have, as its spec schema requires them. */
function membersValid(method: HotMethod, params: Record<string, unknown> | undefined): boolean {
  switch (method) {
    case 'tools/call':
      return (
        params !== undefined &&
        typeof params.name === 'string' &&
        (params.arguments === undefined || isObject(params.arguments)) &&
        params.task === undefined
      );
    case 'tools/list':
      // A cursor is the SDK's to refuse: toolgate lists every tool on one page.
      return params?.cursor === undefined;
    case 'initialize': {
      const info = params?.clientInfo;
      return (
        typeof params?.protocolVersion === 'string' &&
        LEGACY.has(params.protocolVersion) &&
        isObject(params.capabilities) &&
        isObject(info) &&
        typeof info.name === 'string' &&
        typeof info.version === 'string'
      );
    }
    default:
      return true;
  }
}
