/**
 * @module Keeps one of Node's `process.nextTick` entries alive for the life of the process, so that
 * every later `nextTick` stays on V8's fast path. Imported first by the entry points (main.ts,
 * cli/main.ts) and by server.ts, before anything big is loaded.
 *
 * Why: Node builds each nextTick entry as an object literal whose first two keys are computed
 * (`{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`). V8 defines such keys
 * through feedback that stays monomorphic only while the hidden classes it recorded are alive, and
 * turns megamorphic for good once a full garbage collection frees them. A full collection at a
 * moment when no tick is queued frees them: the one `npm start`'s `--heap-growing-percent` brings
 * into start-up, or the idle-time ones of V8's memory reducer in any server that waits a few
 * seconds for traffic. From then on each nextTick (five or six per request, from Node's streams and
 * HTTP) makes two calls into V8's runtime, a visible share of a get_account server's CPU in a
 * profile. One entry kept alive keeps its hidden classes alive, and with them the feedback (see
 * docs/performance.md).
 *
 * The entry is captured with an async hook that is enabled for one `nextTick` and disabled at
 * once (no hook is left behind). Where async hooks are missing, nothing is kept and nothing fails.
 */
import * as asyncHooks from 'node:async_hooks';

let kept: object | undefined;

/** The nextTick entry kept alive (undefined if it could not be captured); for the tests. */
export function keptTickObject(): object | undefined {
  return kept;
}

function keepOne(): void {
  if (typeof asyncHooks.createHook !== 'function') return;
  const hook = asyncHooks.createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
}

function noop(): void {}

keepOne();
