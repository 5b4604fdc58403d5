/**
 * @module What a consumption costs on a plan of many meters against one of the default plans' shape
 * (bench/meters-cost.ts, in process, not a load scenario): its target, and how its figures are
 * recorded beside the scenarios'. The "req/s" of each side is consumptions per second of CPU of the
 * toolgate process (10^6 / µs per consumption), so the ratio is the default plan's cost over the
 * 16 x 4 plan's: at least 1 / 1.5 means the many meters cost at most 1.5 times the default's.
 */
export const METERS_COST_ID = 'meters_cost';
export const METERS_COST_TITLE = 'consumption CPU, 16 categories x 4 windows / default plan';
/** "At most 1.5x a default plan's", as a rate: 1 / 1.5, rounded down. */
export const METERS_COST_TARGET = 0.66;
