/**
 * @module How the console writes times and days for people: one formatter for every page, "29 Nov
 * 2026, 03:40 UTC" (the zone always said: the server renders, and cannot know the reader's), days
 * as "29 Nov 2026". Written by hand rather than with Intl: ICU versions disagree on short month
 * names ("Sep" or "Sept"), and a page must read the same on every server.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

const two = (n: number) => String(n).padStart(2, '0');

/** An ISO 8601 time or epoch seconds as a Date; undefined for anything else. */
function dateOf(value: string | number): Date | undefined {
  const d = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** "29 Nov 2026, 03:40 UTC"; a value that is no time is shown as given. */
export function formatTime(value: string | number): string {
  const d = dateOf(value);
  if (!d) return String(value);
  return `${formatDate(d)}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

/** A UTC day, `YYYY-MM-DD`, as "29 Nov 2026"; `weekday` adds "Sun ". */
export function formatDay(day: string, weekday = false): string {
  const d = /^\d{4}-\d{2}-\d{2}$/.test(day) ? dateOf(`${day}T00:00:00Z`) : undefined;
  if (!d) return day;
  return weekday ? `${WEEKDAYS[d.getUTCDay()]} ${formatDate(d)}` : formatDate(d);
}

/** An hour of a UTC day as "03:00–04:00 UTC". */
export function formatHour(hour: number): string {
  return `${two(hour)}:00\u2013${two((hour + 1) % 24)}:00 UTC`;
}

function formatDate(d: Date): string {
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** What every template gets, so that no page writes a time its own way. */
export const FORMATTERS = { time: formatTime, day: formatDay, hour: formatHour } as const;
