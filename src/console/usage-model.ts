/**
 * @module What the Usage page shows, apart from its route: the period choices (this billing period,
 * 7, 30 or 90 days, UTC days ending today), the days that can be seen by the hour, and the chart's
 * bars (an SVG made on the server, with the table beside it).
 */
import { addDays } from '../domain/usage-history.js';
import { HOURLY_RETENTION_DAYS } from '../domain/usage-hours.js';

export const PERIODS = [
  { id: 'billing', label: 'This billing period', days: 0 },
  { id: '7', label: '7 days', days: 7 },
  { id: '30', label: '30 days', days: 30 },
  { id: '90', label: '90 days', days: 90 },
] as const;

export type PeriodId = (typeof PERIODS)[number]['id'];
export const DEFAULT_PERIOD: PeriodId = '30';

/** The chosen period, or the default for anything else (an old link, a hand-made URL). */
export function periodOf(value: unknown, billingStart: string | null): PeriodId {
  const found = PERIODS.find((p) => p.id === value);
  if (!found || (found.id === 'billing' && billingStart === null)) return DEFAULT_PERIOD;
  return found.id;
}

/** The days of a period: the billing period's from its first day, else the `days` ending today. */
export function periodDays(
  period: PeriodId,
  today: string,
  billingStart: string | null,
): { from: string; to: string } {
  if (period === 'billing' && billingStart !== null)
    return { from: billingStart < today ? billingStart : today, to: today };
  const days = PERIODS.find((p) => p.id === period)?.days ?? 30;
  return { from: addDays(today, -(days - 1)), to: today };
}

/** The days that have hours to show, today first. */
export function hourDays(today: string): string[] {
  return Array.from({ length: HOURLY_RETENTION_DAYS }, (_, i) => addDays(today, -i));
}

/** The chosen day of the hourly view: one of hourDays, else today. */
export function chosenDay(value: unknown, today: string): string {
  return typeof value === 'string' && hourDays(today).includes(value) ? value : today;
}

export const CHART = { width: 720, height: 180, top: 10, bottom: 24, left: 40 };

export interface Bar {
  label: string;
  calls: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The chart's bars, scaled to the busiest point (a point without calls has a zero-height bar). */
export function bars(points: { label: string; calls: number }[]): { bars: Bar[]; max: number } {
  const max = Math.max(1, ...points.map((d) => d.calls));
  const plot = CHART.height - CHART.top - CHART.bottom;
  const step = (CHART.width - CHART.left) / Math.max(1, points.length);
  return {
    max,
    bars: points.map((d, i) => {
      const height = Math.round((d.calls / max) * plot);
      return {
        label: d.label,
        calls: d.calls,
        x: Math.round(CHART.left + i * step + Math.min(2, step / 4)),
        y: CHART.top + plot - height,
        width: Math.max(1, Math.round(step - Math.min(4, step / 2))),
        height,
      };
    }),
  };
}
