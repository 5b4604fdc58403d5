/** @module The scenarios, in the order they run. */

import { consumptionBefore, getAccountBefore, mcpBeforeOauth } from './before.js';
import { consoleCost } from './console.js';
import { consumption, consumptionAlerts } from './consumption.js';
import { getAccount } from './get-account.js';
import { mcp2025, mcp2026, mcpMetered } from './mcp.js';
import { oauthCost } from './oauth-cost.js';
import { paymentsCost } from './payments-cost.js';
import { proxiedCharged, proxiedFree, proxiedMetered } from './proxied.js';
import type { Scenario } from './scenario.js';

export const SCENARIOS: readonly Scenario[] = [
  getAccount,
  consumption,
  proxiedMetered,
  proxiedFree,
  proxiedCharged,
  mcp2025,
  mcp2026,
  mcpMetered,
  consoleCost,
  oauthCost,
  paymentsCost,
  // Only when named (--only before): against the builds before the meters and before OAuth, without
  // the alerts' endpoint.
  getAccountBefore,
  consumptionBefore,
  mcpBeforeOauth,
  // Last: the endpoint it adds stays, and the scenarios before it run without one.
  consumptionAlerts,
];
