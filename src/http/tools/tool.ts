/** @module What a tool is: a name, its argument and answer schemas, and what it does for an authenticated caller. */
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from 'typebox';
import type { Services } from '../../service/index.js';

export interface ToolContext {
  accountId: string;
  keyId: string;
  services: Services;
  log: FastifyBaseLogger;
}

export interface Tool {
  name: string;
  summary: string;
  description: string;
  /** The JSON body: an object; members a tool does not declare are refused. */
  args: TSchema;
  /** The 200 answer: `{results, status, metadata}`. */
  response: TSchema;
  run(ctx: ToolContext, args: unknown): Promise<unknown>;
}
