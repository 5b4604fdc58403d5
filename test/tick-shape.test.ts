/**
 * src/tick-shape.ts keeps one nextTick entry alive so that full garbage collections at idle moments
 * do not free the hidden classes of Node's nextTick entries (which turns the feedback of their
 * literal megamorphic for good). Checked in a separate Node process, on the built module, with V8's
 * own test intrinsics: after two full collections while no tick is queued, a fresh entry still has
 * the hidden class of the one kept, and the hook used to capture it is gone.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'tick-shape.js')).href;

/** Runs `body` in a module of its own, after the built tick-shape module; returns its stdout as JSON. */
function runNode(body: string): Record<string, unknown> {
  const script = `import { keptTickObject } from ${JSON.stringify(MODULE)};\n${body}`;
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 20_000 },
  );
  return JSON.parse(out);
}

describe('the kept nextTick entry', () => {
  it('is a nextTick entry, and no async hook stays enabled after capturing it', () => {
    const seen = runNode(`
      import { executionAsyncId } from 'node:async_hooks';
      const kept = keptTickObject();
      // With an init hook left enabled, a promise would get an async resource of its own.
      let inPromise = -1;
      await Promise.resolve().then(() => { inPromise = executionAsyncId(); });
      process.stdout.write(JSON.stringify({
        kept: kept !== undefined,
        callback: typeof kept?.callback,
        symbols: Object.getOwnPropertySymbols(kept ?? {}).map(String),
        promiseTracked: inPromise !== executionAsyncId(),
      }));
    `);
    expect(seen.kept).toBe(true);
    expect(seen.callback).toBe('function');
    // Node 22 and later add the async context frame the tick runs in.
    const symbols = seen.symbols as string[];
    expect(symbols.slice(0, 2)).toEqual(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']);
    expect(symbols.slice(2).every((s) => s === 'Symbol(kAsyncContextFrame)')).toBe(true);
    expect(seen.promiseTracked).toBe(false);
  });

  it('keeps the hidden class of new entries through full collections while no tick is queued', () => {
    const seen = runNode(`
      import { createHook } from 'node:async_hooks';
      const noop = () => {};
      const ticks = (n) => new Promise((done) => { for (let i = 0; i < n; i++) process.nextTick(noop); process.nextTick(done); });
      await ticks(20000);
      await new Promise((r) => setTimeout(r, 5));
      globalThis.gc();
      globalThis.gc();
      await ticks(20000);
      let fresh;
      const hook = createHook({ init(_id, type, _t, resource) { if (type === 'TickObject') fresh ??= resource; } }).enable();
      process.nextTick(noop);
      hook.disable();
      process.stdout.write(JSON.stringify({ sameMap: %HaveSameMap(keptTickObject(), fresh) }));
    `);
    expect(seen.sameMap).toBe(true);
  });
});
