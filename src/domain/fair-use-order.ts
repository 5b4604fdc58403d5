/**
 * @module An account's fair-use windows in key order (category, unit, window), the order both stores
 * read and write them in: the order itself, lookups by bisection (a consumption costs its own
 * category's windows, not the account's), and the stored form of a category's windows.
 */
import type { WindowSlot, WindowState } from './fair-use-window.js';
import type { Category, Unit, WindowKey } from './plans.js';

/** The windows' key order (category, unit, window), in which both stores read an account's windows. */
export function byWindowKey(a: WindowSlot, b: WindowSlot): number {
  if (a.category !== b.category) return a.category < b.category ? -1 : 1;
  if (a.unit !== b.unit) return a.unit < b.unit ? -1 : 1;
  return a.window < b.window ? -1 : a.window > b.window ? 1 : 0;
}

/** In the primary key's order, as a read gives them; sorted only if not (sorting allocates). */
export function inKeyOrder(windows: WindowState[]): WindowState[] {
  for (let i = 1; i < windows.length; i++) {
    if (byWindowKey(windows[i - 1]!, windows[i]!) > 0) return windows.sort(byWindowKey);
  }
  return windows;
}

/**
 * Where the category's windows are in `windows` (in key order, as the stores and applyConsumption
 * keep them): `[start, end)`, found by bisection, so that what a consumption does costs its own
 * category's windows, not the account's. Not there: an empty span where they would go.
 */
export function categorySpan(windows: readonly WindowState[], category: Category): [number, number] {
  let lo = 0;
  let hi = windows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (windows[mid]!.category < category) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  while (end < windows.length && windows[end]!.category === category) end++;
  return [lo, end];
}

/** The index of the window `slot` in `windows` (in key order), or -1. */
export function indexOfWindow(windows: readonly WindowState[], slot: WindowSlot): number {
  const [start, end] = categorySpan(windows, slot.category);
  return indexInSpan(windows, start, end, slot.unit, slot.window);
}

/**
 * The index of the window of `unit` and `window` among `windows[start, end)`, one category's span
 * (categorySpan), or -1: what renders or decides a category's several windows finds its span once.
 */
export function indexInSpan(
  windows: readonly WindowState[],
  start: number,
  end: number,
  unit: Unit,
  window: WindowKey,
): number {
  for (let i = start; i < end; i++) {
    const w = windows[i]!;
    if (w.unit === unit && w.window === window) return i;
  }
  return -1;
}

/** The window of `unit` and `window` among `windows[start, end)` (indexInSpan), if started. */
export function windowInSpan(
  windows: readonly WindowState[],
  start: number,
  end: number,
  unit: Unit,
  window: WindowKey,
): WindowState | undefined {
  const at = indexInSpan(windows, start, end, unit, window);
  return at < 0 ? undefined : windows[at];
}

/** The window `slot` of `windows` (in key order), if started. */
export function findWindow(windows: readonly WindowState[], slot: WindowSlot): WindowState | undefined {
  const at = indexOfWindow(windows, slot);
  return at < 0 ? undefined : windows[at];
}

/** A window as both stores keep it, under its category: `[unit, window, startedAt, endsAt, used]`. */
export type StoredWindow = [unit: Unit, window: WindowKey, startedAt: number, endsAt: number, used: number];

/** The category's windows of `windows` (in key order), as stored. */
export function storedWindowsOf(windows: readonly WindowState[], category: Category): StoredWindow[] {
  const [start, end] = categorySpan(windows, category);
  const stored: StoredWindow[] = [];
  for (let i = start; i < end; i++) {
    const w = windows[i]!;
    stored.push([w.unit, w.window, w.startedAt, w.endsAt, w.used]);
  }
  return stored;
}

/** An account's windows from its stored categories (PostgreSQL's `accounts.fair_use`), in key order. */
export function windowsFromStored(byCategory: Readonly<Record<Category, StoredWindow[]>>): WindowState[] {
  const windows: WindowState[] = [];
  for (const category of Object.keys(byCategory).sort())
    pushStoredWindows(windows, category, byCategory[category]!);
  return windows;
}

/** Appends a category's stored windows to `into`, as window states. */
export function pushStoredWindows(
  into: WindowState[],
  category: Category,
  stored: readonly StoredWindow[],
): void {
  for (const [unit, window, startedAt, endsAt, used] of stored)
    into.push({ category, unit, window, startedAt, endsAt, used });
}
