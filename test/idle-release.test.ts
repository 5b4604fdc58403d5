/**
 * src/idle-release.ts: one full collection once the server has gone a whole interval without a
 * request, none while requests keep coming, and one again only after requests came and went. The
 * timer is driven by hand, so nothing here depends on time.
 */
import { describe, expect, it } from 'vitest';
import { type Every, IdleRelease } from '../src/idle-release.js';

function handTimer(): { every: Every; tick(): void; cancelled(): boolean } {
  let tick: (() => void) | null = null;
  let cancelled = false;
  return {
    every: (_ms, fn) => {
      tick = fn;
      return () => {
        cancelled = true;
      };
    },
    tick: () => tick?.(),
    cancelled: () => cancelled,
  };
}

function setUp() {
  const timer = handTimer();
  let collections = 0;
  const release = new IdleRelease({ gc: () => collections++, idleMs: 50, every: timer.every });
  release.start();
  return { timer, release, collections: () => collections };
}

describe('the idle release', () => {
  it('collects once after a whole interval without a request, counting start-up as busy', () => {
    const { timer, collections } = setUp();
    timer.tick();
    expect(collections()).toBe(0);
    timer.tick();
    expect(collections()).toBe(1);
  });

  it('does not collect again while the server stays idle', () => {
    const { timer, collections } = setUp();
    for (let i = 0; i < 10; i++) timer.tick();
    expect(collections()).toBe(1);
  });

  it('never collects while every interval has a request', () => {
    const { timer, release, collections } = setUp();
    for (let i = 0; i < 10; i++) {
      release.touch();
      timer.tick();
    }
    expect(collections()).toBe(0);
  });

  it('collects again after requests came and went', () => {
    const { timer, release, collections } = setUp();
    timer.tick();
    timer.tick();
    release.touch();
    timer.tick();
    expect(collections()).toBe(1);
    timer.tick();
    expect(collections()).toBe(2);
  });

  it('stops its timer when stopped', () => {
    const { timer, release } = setUp();
    release.stop();
    expect(timer.cancelled()).toBe(true);
  });
});
