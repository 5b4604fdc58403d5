/**
 * @module Everything the bench must undo (child processes, temp dirs), undone once: on a normal end,
 * on an error, on SIGINT/SIGTERM, and as a last resort synchronously on process exit.
 */

interface Action {
  /** Registration order, for cleanupSince. */
  seq?: number;
  name: string;
  /** The orderly way (may wait, e.g. for a child to exit). */
  run: () => Promise<void>;
  /** The last-resort way, synchronous, for the 'exit' event. */
  runSync: () => void;
}

const actions: Action[] = [];
let running: Promise<void> | undefined;
let registered = 0;
let signalled = false;

/** True once SIGINT/SIGTERM arrived: failures after that are the interruption, not news. */
export function interrupted(): boolean {
  return signalled;
}

/** Registers an undo action; returns a function that drops it once it is no longer needed. */
export function onCleanup(action: Action): () => void {
  action.seq = ++registered;
  actions.push(action);
  return () => {
    const i = actions.indexOf(action);
    if (i >= 0) actions.splice(i, 1);
  };
}

/** A mark for cleanupSince: what has been registered so far. */
export function cleanupMark(): number {
  return registered;
}

/**
 * Runs, most recent first, the actions registered after `mark` (one part of the run that is over,
 * such as the scale comparison of one backend, frees its processes, files and schemas at once).
 */
export async function cleanupSince(mark: number): Promise<void> {
  for (;;) {
    const action = actions.findLast((a) => (a.seq ?? 0) > mark);
    if (!action) return;
    actions.splice(actions.indexOf(action), 1);
    try {
      await action.run();
    } catch (err) {
      process.stderr.write(`bench: cleanup of ${action.name} failed: ${String(err)}
`);
    }
  }
}

/** Runs every registered action once, most recent first; failures are reported, not thrown. */
export function cleanupAll(): Promise<void> {
  running ??= (async () => {
    while (actions.length > 0) {
      const action = actions.pop()!;
      try {
        await action.run();
      } catch (err) {
        process.stderr.write(`bench: cleanup of ${action.name} failed: ${String(err)}\n`);
      }
    }
  })();
  return running;
}

/** SIGINT/SIGTERM: clean up, then exit 130/143. On exit: whatever is left, synchronously. */
export function installCleanupHandlers(onSignal?: () => void): void {
  const handle = (signal: NodeJS.Signals, code: number) => {
    process.once(signal, () => {
      signalled = true;
      process.stderr.write(`\nbench: ${signal}, cleaning up...\n`);
      onSignal?.();
      const force = setTimeout(() => process.exit(code), 10_000);
      force.unref();
      void cleanupAll().finally(() => process.exit(code));
    });
  };
  handle('SIGINT', 130);
  handle('SIGTERM', 143);
  process.once('exit', () => {
    for (const action of actions.splice(0).reverse()) {
      try {
        action.runSync();
      } catch {
        // Nothing more can be done while exiting.
      }
    }
  });
}
