/**
 * @module A plan category's meters, compiled once per plan limits object: its windows in the plan's
 * order, by unit, with their limits, lengths and `metadata.fair_use` member names (every unit's:
 * a call summarises the unit its tool counts). A consumption,
 * its answer and get_account read these on every call; walking the plan's objects with Object.keys
 * each time (allocating arrays, storing keyed members) cost more than the metering itself.
 */
import { type Category, type PlanLimits, type Unit, type WindowKey, windowSeconds } from './plans.js';

export interface CompiledSlot {
  unit: Unit;
  window: WindowKey;
  limit: number;
  lengthSeconds: number;
}

export interface MetadataSlot {
  window: WindowKey;
  limit: number;
  lengthSeconds: number;
  remainingKey: string;
  resetKey: string;
}

export interface CategoryShape {
  /** Every window of the category, unit by unit, in the plan's order. */
  slots: CompiledSlot[];
  /** The same windows grouped by unit, in the plan's order. */
  units: { unit: Unit; windows: CompiledSlot[] }[];
  /** Each unit's windows, in the plan's order, as `metadata.fair_use` names them (`<unit>_remaining_<window>`). */
  metadata: Map<Unit, MetadataSlot[]>;
  /**
   * The records windows when they are the default plans' (5h then 1w), else null: their metadata is
   * written out as literals.
   */
  seedMetadata: readonly [MetadataSlot, MetadataSlot] | null;
  /**
   * The default plans' shape, in their order (records 5h and 1w, then requests 5h): its answers are
   * written out as literals, the shape the seed system's clients are typed for.
   */
  seedShape: boolean;
}

const EMPTY: CategoryShape = {
  slots: [],
  units: [],
  metadata: new Map(),
  seedMetadata: null,
  seedShape: false,
};

const NO_SLOTS: readonly MetadataSlot[] = [];

/** The windows of `unit` in the category, as `metadata.fair_use` names them; none when the plan has none. */
export function metadataSlots(shape: CategoryShape, unit: Unit): readonly MetadataSlot[] {
  return shape.metadata.get(unit) ?? NO_SLOTS;
}

/** Made once per limits object (a plan read again is a new one), and per category asked for. */
const compiled = new WeakMap<PlanLimits, Map<Category, CategoryShape>>();

/** The category's shape in `limits`; an empty one for a category the plan does not have. */
export function categoryShape(limits: PlanLimits, category: Category): CategoryShape {
  let byCategory = compiled.get(limits);
  if (!byCategory) {
    byCategory = new Map();
    compiled.set(limits, byCategory);
  }
  let shape = byCategory.get(category);
  if (!shape) {
    shape = Object.hasOwn(limits, category) ? compile(limits[category]!) : EMPTY;
    byCategory.set(category, shape);
  }
  return shape;
}

function compile(units: PlanLimits[Category]): CategoryShape {
  const shape: CategoryShape = {
    slots: [],
    units: [],
    metadata: new Map(),
    seedMetadata: null,
    seedShape: false,
  };
  for (const unit of Object.keys(units)) {
    const windows: CompiledSlot[] = [];
    const metadata: MetadataSlot[] = [];
    for (const window of Object.keys(units[unit]!)) {
      const slot = { unit, window, limit: units[unit]![window]!, lengthSeconds: windowSeconds(window)! };
      windows.push(slot);
      shape.slots.push(slot);
      metadata.push({
        window,
        limit: slot.limit,
        lengthSeconds: slot.lengthSeconds,
        remainingKey: `${unit}_remaining_${window}`,
        resetKey: `${unit}_reset_${window}`,
      });
    }
    shape.units.push({ unit, windows });
    shape.metadata.set(unit, metadata);
  }
  const names = shape.slots.map((s) => `${s.unit}.${s.window}`).join(' ');
  shape.seedShape = names === 'records.5h records.1w requests.5h';
  const records = metadataSlots(shape, 'records');
  if (records.map((m) => m.window).join(' ') === '5h 1w') shape.seedMetadata = [records[0]!, records[1]!];
  return shape;
}
