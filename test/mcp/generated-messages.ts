/**
 * Generated MCP messages of both protocol eras for test/mcp/mcp.fast-path.test.ts: mostly well
 * formed (so that the hot path takes many of them), with the members and headers it judges wrong
 * now and then (so that it leaves some to the SDK). 2025: initialize, tools/call, tools/list, ping
 * and notifications/initialized under an MCP-Protocol-Version of the SDK's list (or none); 2026-07-28:
 * server/discover, tools/call and tools/list with the per-request `_meta` envelope and its headers.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { MODERN_VERSION } from '../../src/mcp/hot-messages.js';

export interface GeneratedCase {
  name: string;
  body: unknown;
  headers: Record<string, string>;
}

const id = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -3, max: 1_000 }) },
  { weight: 3, arbitrary: fc.string({ maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 1.5, true) },
);
const toolName = fc.constantFrom('get_account', 'get_account', 'get_usage', 'nope');
const toolArguments = fc.constantFrom(undefined, {}, {}, { period: 'week' }, { period: 'x' }, { x: 1 }, [1]);
const clientInfo = fc.constantFrom({ name: 'gen', version: '1.0.0' }, { name: 'gen' }, undefined);

/** Params of a method as a generator; `undefined` members are left out when sent (JSON). */
const PARAMS: Record<string, fc.Arbitrary<Record<string, unknown> | undefined>> = {
  initialize: fc.record({
    protocolVersion: fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '1999-01-01'),
    capabilities: fc.constantFrom({}, {}, undefined),
    clientInfo,
  }),
  'tools/call': fc.record({ name: toolName, arguments: toolArguments }),
  'tools/list': fc.constantFrom(undefined, {}, {}, { cursor: 'x' }),
  ping: fc.constantFrom(undefined, {}),
  'server/discover': fc.constant({}),
  'notifications/initialized': fc.constant(undefined),
};

const withoutUndefined = (headers: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;

const legacyCase: fc.Arbitrary<GeneratedCase> = fc
  .record({
    method: fc.constantFrom(
      'initialize',
      'tools/call',
      'tools/call',
      'tools/list',
      'ping',
      'notifications/initialized',
    ),
    id,
    header: fc.constantFrom<string | undefined>(...SUPPORTED_PROTOCOL_VERSIONS, undefined, '2099-01-01'),
  })
  .chain(({ method, id, header }) =>
    PARAMS[method]!.map((params) => ({
      name: `2025 ${method}`,
      body: {
        jsonrpc: '2.0',
        // The notification has no id (a request's id on it is the SDK's to refuse).
        ...(method === 'notifications/initialized' ? {} : { id }),
        method,
        ...(params === undefined ? {} : { params }),
      },
      headers: withoutUndefined({ 'mcp-protocol-version': header }),
    })),
  );

const modernCase: fc.Arbitrary<GeneratedCase> = fc
  .record({
    method: fc.constantFrom('server/discover', 'tools/call', 'tools/call', 'tools/list', 'ping'),
    id,
    version: fc.constantFrom(MODERN_VERSION, MODERN_VERSION, MODERN_VERSION, '2099-01-01'),
    clientInfo: fc.constantFrom(
      { name: 'gen', version: '1.0.0' },
      { name: 'gen', version: '1.0.0' },
      undefined,
    ),
    // The MCP-Name header: the tool's name as sent, or another one.
    nameHeader: fc.constantFrom('same', 'same', 'same', 'other'),
  })
  .chain(({ method, id, version, clientInfo, nameHeader }) =>
    (PARAMS[method] ?? fc.constant(undefined)).map((params) => {
      const _meta = {
        'io.modelcontextprotocol/protocolVersion': version,
        ...(clientInfo ? { 'io.modelcontextprotocol/clientInfo': clientInfo } : {}),
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const name = params?.name;
      return {
        name: `2026 ${method}`,
        body: { jsonrpc: '2.0', id, method, params: { ...params, _meta } },
        headers: withoutUndefined({
          'mcp-protocol-version': version,
          'mcp-method': method,
          'mcp-name': typeof name === 'string' ? (nameHeader === 'same' ? name : 'get_billing') : undefined,
        }),
      };
    }),
  );

/** A message of either era, with the headers it is sent with (Accept and the key aside). */
export const generatedCase: fc.Arbitrary<GeneratedCase> = fc.oneof(legacyCase, modernCase);
