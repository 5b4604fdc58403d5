import { describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { SlidingWindowLimiter } from '../../src/domain/rate-limit.js';
import { seededRandom } from '../seeded-random.js';

const T = 1_795_000_000_000;

/** The most events of `times` (sorted, in ms) within any half-open span `spanMs` long. */
function busiestSpan(times: number[], spanMs = 1000): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= spanMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('sliding-window limiter', () => {
  it('lets a fresh key spend its whole limit at once, then refuses until a window has passed', () => {
    const clock = new FixedClock(T + 930);
    const l = new SlidingWindowLimiter(100, 1, clock);
    const states = Array.from({ length: 300 }, () => l.take('a'));
    expect(states.filter((s) => s.allowed)).toHaveLength(100);
    expect(states[0]).toMatchObject({ allowed: true, remaining: 99, resetSeconds: 1 });
    expect(states[99]).toMatchObject({ allowed: true, remaining: 0 });
    expect(states[100]).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    expect(l.take('b').allowed).toBe(true); // another key has its own budget
    // Just under a second after the burst, a tenth more at most; a second after it, the rest.
    clock.set(T + 1929);
    expect(Array.from({ length: 20 }, () => l.take('a')).filter((s) => s.allowed)).toHaveLength(10);
    clock.set(T + 1930);
    expect(Array.from({ length: 200 }, () => l.take('a')).filter((s) => s.allowed)).toHaveLength(90);
  });

  it('does not admit a second burst right after a window boundary (a fixed window admitted 200 within 141 ms)', () => {
    const clock = new FixedClock(T + 930);
    const l = new SlidingWindowLimiter(100, 1, clock);
    const admitted: number[] = [];
    for (let i = 0; i < 150; i++) if (l.take('k').allowed) admitted.push(clock.now());
    clock.set(T + 1071);
    for (let i = 0; i < 150; i++) if (l.take('k').allowed) admitted.push(clock.now());
    expect(admitted).toHaveLength(100);
  });

  for (const limit of [100, 7, 1000]) {
    it(`admits at most the limit plus a tenth in any one-second span, whatever the pattern (limit ${limit})`, () => {
      for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
        const random = seededRandom(seed * 7919 + limit);
        const clock = new FixedClock(T + Math.floor(random() * 1000));
        const l = new SlidingWindowLimiter(limit, 1, clock);
        const admitted: number[] = [];
        for (let step = 0; step < 2_000; step++) {
          // Bursts of every size, pauses of every length: the shapes that beat a fixed window.
          const burst = random() < 0.1 ? Math.floor(random() * limit * 2) : Math.floor(random() * 3);
          for (let i = 0; i < burst; i++) if (l.take('k').allowed) admitted.push(clock.now());
          clock.set(clock.now() + Math.floor(random() < 0.05 ? random() * 1500 : random() * 40));
        }
        expect(busiestSpan(admitted), `seed ${seed}`).toBeLessThanOrEqual(limit + Math.floor(limit / 10));
        expect(admitted.length, `seed ${seed}: admitted next to nothing`).toBeGreaterThan(limit * 10);
      }
    });
  }

  it('never refuses a client that keeps exactly to the limit, and gives one that goes faster the limit', () => {
    const clock = new FixedClock(T + 3);
    const l = new SlidingWindowLimiter(100, 1, clock);
    for (let i = 0; i < 500; i++) {
      expect(l.take('paced').allowed, `request ${i}`).toBe(true);
      clock.set(clock.now() + 10);
    }
    const admitted: number[] = [];
    for (let i = 0; i < 1200; i++) {
      if (l.take('eager').allowed) admitted.push(clock.now());
      clock.set(clock.now() + 5);
    }
    expect(busiestSpan(admitted)).toBeLessThanOrEqual(110);
    expect(admitted.length).toBeGreaterThanOrEqual(550); // some 100 a second over 6 s
  });

  it('takes a batch whole or not at all', () => {
    const l = new SlidingWindowLimiter(5, 1, new FixedClock(T));
    expect(l.take('a', 3).allowed).toBe(true);
    expect(l.take('a', 3)).toMatchObject({ allowed: false, remaining: 2 });
    expect(l.take('a', 2)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('says when a refused request can pass: a retry after that many seconds is admitted', () => {
    const clock = new FixedClock(T + 50);
    const l = new SlidingWindowLimiter(20, 60, clock);
    for (let i = 0; i < 20; i++) l.record('addr');
    const refused = l.peek('addr');
    expect(refused.allowed).toBe(false);
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(54);
    expect(refused.resetSeconds).toBeLessThanOrEqual(60);
    clock.set(clock.now() + (refused.resetSeconds - 1) * 1000);
    expect(l.peek('addr').allowed).toBe(false);
    clock.set(clock.now() + 1000);
    expect(l.peek('addr').allowed).toBe(true);
  });

  it('counts every recorded event, and peeking counts nothing', () => {
    const l = new SlidingWindowLimiter(2, 60, new FixedClock(T));
    for (let i = 0; i < 5; i++) expect(l.peek('a').allowed).toBe(true);
    expect(l.record('a')).toMatchObject({ allowed: true, remaining: 1 });
    expect(l.record('a')).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.record('a').allowed).toBe(false);
    expect(l.peek('a').allowed).toBe(false);
    expect(l.peek('b').allowed).toBe(true);
  });

  it('says whether any key may be full, which is when peek can refuse', () => {
    const clock = new FixedClock(0);
    const l = new SlidingWindowLimiter(2, 60, clock);
    expect(l.anyFull()).toBe(false);
    l.record('a');
    l.record('b');
    expect(l.anyFull()).toBe(false);
    l.record('a');
    expect(l.anyFull()).toBe(true);
    expect(l.peek('a').allowed).toBe(false);
    clock.set(66_000); // a window and a slot later
    expect(l.anyFull()).toBe(false);
    expect(l.peek('a').allowed).toBe(true);
  });

  it('forgets a key unseen for a window, so a long pause starts afresh', () => {
    const clock = new FixedClock(T);
    const l = new SlidingWindowLimiter(3, 1, clock);
    for (let i = 0; i < 3; i++) l.take('a');
    for (const pause of [5_000, 100_000]) {
      clock.set(clock.now() + pause);
      expect([l.take('a'), l.take('a'), l.take('a'), l.take('a')].map((s) => s.allowed)).toEqual([
        true,
        true,
        true,
        false,
      ]);
    }
  });
});
