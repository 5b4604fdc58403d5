/**
 * @module What a tool call's answer is over MCP, the same for the hot path and the SDK: a result
 * whose `structuredContent` is exactly the HTTP answer's body and whose text is that body's JSON
 * (an error result for a refusal), or the JSON-RPC error of a tool that does not exist.
 */

import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorBody } from '../domain/api-error.js';
import { brandSlug } from '../domain/brand.js';
import type { Called } from '../tools/call.js';

/** MCP's serverInfo: the implementation's name and version, and a title for people when branded. */
export interface ServerInfo {
  name: string;
  title?: string;
  version: string;
}

export const SERVER_INFO: ServerInfo = { name: 'toolgate', version: '1' };

/** The serverInfo of a brand: its slug as the name and its name as the title; toolgate's own without one. */
export function serverInfoOf(brand: { name: string } | undefined): ServerInfo {
  if (!brand || brand.name === SERVER_INFO.name) return SERVER_INFO;
  return { name: brandSlug(brand.name), title: brand.name, version: SERVER_INFO.version };
}

/** JSON-RPC's invalid-params code: what the SDK answers a call of a tool it does not have with. */
const INVALID_PARAMS = -32602;

export type ToolCallAnswer =
  | { result: () => CallToolResult; json: string }
  | { error: { code: number; message: string } };

/**
 * The MCP answer to a tool call: the result (as a value, made only when asked for, and as JSON), or
 * the protocol error of an unknown tool.
 */
export function toolCallAnswer(called: Called, requestId: string): ToolCallAnswer {
  if (called.ok) {
    const json = called.json ?? JSON.stringify(called.body);
    const body = called.body;
    return {
      result: () => toolResult(body === undefined ? JSON.parse(json) : body, json, false),
      json: resultJson(json, false),
    };
  }
  const e = called.error;
  if (e.code === 'unknown_tool') return { error: { code: INVALID_PARAMS, message: e.message } };
  const json = JSON.stringify(errorBody(e.code, e.message, requestId, e.details));
  return { result: () => toolResult(JSON.parse(json), json, true), json: resultJson(json, true) };
}

function toolResult(body: unknown, json: string, isError: boolean): CallToolResult {
  return {
    content: [{ type: 'text', text: json }],
    structuredContent: body as Record<string, unknown>,
    ...(isError ? { isError: true } : {}),
  };
}

/** The same result as JSON.stringify(toolResult(...)) writes it, without parsing the body again. */
function resultJson(json: string, isError: boolean): string {
  return `{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}${isError ? ',"isError":true' : ''}}`;
}
