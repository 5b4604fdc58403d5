/** @module The tools this server offers, in one list. A new tool is one file here and one line below. */
import { getAccount } from './get-account.js';
import { getBilling } from './get-billing.js';
import { getUsage } from './get-usage.js';
import type { Tool } from './tool.js';

export const TOOLS: readonly Tool[] = [getAccount, getBilling, getUsage];
