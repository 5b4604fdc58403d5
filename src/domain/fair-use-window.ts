/** @module One fair-use window: where it is (category, unit, window) and, once stored, its state. */
import type { EpochSeconds } from './clock.js';
import type { Category, Unit, WindowKey } from './plans.js';

export interface WindowSlot {
  category: Category;
  unit: Unit;
  window: WindowKey;
}

/** A window as stored: it exists once something was consumed in it, and may have ended since. */
export interface WindowState extends WindowSlot {
  startedAt: EpochSeconds;
  endsAt: EpochSeconds;
  used: number;
}
