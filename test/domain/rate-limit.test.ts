import { describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { FixedWindowLimiter } from '../../src/domain/rate-limit.js';

describe('fixed-window limiter', () => {
  it('allows the limit per window, then refuses until the window ends', () => {
    const clock = new FixedClock(10_000);
    const l = new FixedWindowLimiter(2, 60, clock);
    expect(l.hit('a')).toMatchObject({ allowed: true, remaining: 1 });
    expect(l.hit('a')).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.hit('a')).toMatchObject({ allowed: false, remaining: 0 });
    expect(l.peek('a').allowed).toBe(false);
    expect(l.peek('b').allowed).toBe(true);
    clock.set(60_000);
    expect(l.hit('a')).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('reports whole seconds to the end of the window, at least 1', () => {
    const clock = new FixedClock(59_500);
    const l = new FixedWindowLimiter(5, 60, clock);
    expect(l.hit('a').resetSeconds).toBe(1);
    clock.set(60_000);
    expect(l.hit('a').resetSeconds).toBe(60);
  });

  it('does not count while peeking', () => {
    const l = new FixedWindowLimiter(1, 1, new FixedClock(0));
    for (let i = 0; i < 5; i++) expect(l.peek('a').allowed).toBe(true);
    expect(l.hit('a').allowed).toBe(true);
  });

  it('says whether any key is full, which is when peek can refuse', () => {
    const clock = new FixedClock(0);
    const l = new FixedWindowLimiter(2, 60, clock);
    expect(l.anyFull()).toBe(false);
    l.hit('a');
    l.hit('b');
    expect(l.anyFull()).toBe(false);
    expect(l.peek('a').allowed).toBe(true);
    l.hit('a');
    expect(l.anyFull()).toBe(true);
    expect(l.peek('a').allowed).toBe(false);
    l.hit('a'); // past the limit: still one full key
    clock.set(60_000);
    expect(l.anyFull()).toBe(false); // a new window
    expect(l.peek('a').allowed).toBe(true);
  });
});
