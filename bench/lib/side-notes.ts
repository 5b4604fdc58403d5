/**
 * @module The notes every measured pair of sides gets: the per-key rate limiter's (in play, never
 * refusing) and the peak RSS of both servers.
 */
import type { Note } from '../scenarios/scenario.js';
import type { SideResult } from './runner.js';

/** Share of the per-key limit above which the busiest key is too close to it for comfort. */
export const NEAR_LIMIT = 0.8;

/**
 * The per-key rate limiter must be in play but never refuse: a 429 is a loud warning (the figures
 * are not toolgate's get_account any more), and so is a busiest key near the limit.
 */
export function rateNotes(reference: SideResult, subject: SideResult, rotated: string): Note[] {
  const notes: Note[] = [];
  for (const side of [reference, subject]) {
    if (side.rateLimited > 0)
      notes.push({
        level: 'warning',
        text: `RATE LIMITED: ${side.name} answered ${side.rateLimited} requests with 429: the per-key rate limiter was hit (busiest key ${side.perKey.maxPerSecond}/s); rotate over more keys (--accounts)`,
      });
  }
  const { limit, limiterMaxCount } = subject.perKey;
  const busiest = Math.max(subject.perKey.maxPerSecond, limiterMaxCount ?? 0);
  if (limit !== null && busiest >= NEAR_LIMIT * limit && subject.rateLimited === 0)
    notes.push({
      level: 'warning',
      text: `${subject.name}'s busiest key reached ${busiest} requests in one second, within ${Math.round((1 - NEAR_LIMIT) * 100)}% of the per-key limit ${limit}/s; rotate over more keys (--accounts)`,
    });
  const mean = (s: SideResult) => (s.perKey.slots > 0 ? s.rps / s.perKey.slots : 0).toFixed(1);
  const limiter =
    limit === null
      ? 'no per-key limit on this route'
      : `per-key limit ${limit}/s (toolgate's default), its limiter's highest count in one second ${limiterMaxCount ?? '?'}, 429 answers ${subject.rateLimited}`;
  notes.push({
    level: 'info',
    text: `rate per ${rotated}: ${subject.perKey.slots} rotated; busiest in one second (load generator's count): ${reference.name} ${reference.perKey.maxPerSecond}, ${subject.name} ${subject.perKey.maxPerSecond} (mean ${mean(reference)} and ${mean(subject)}/s); ${limiter}`,
  });
  return notes;
}

export function memoryLine(sides: readonly SideResult[]): string {
  const one = (s: SideResult) => {
    const m = s.memory;
    if (m.peakMib === null) return `${s.name} ?`;
    return `${s.name} ${m.peakMib} MiB (${m.source}; since start ${m.lifetimeMib ?? '?'} MiB)`;
  };
  return `peak RSS over the warm-up and rounds: ${sides.map(one).join(', ')}`;
}
