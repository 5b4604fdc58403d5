/**
 * @module Preloaded (`--import`) into the second toolgate of the idle measurement (lib/idle.ts), never
 * into the one whose RSS is reported: on SIGUSR2 it prints what the process's memory is made of as
 * Node sees it, then writes a heap snapshot. Only the bench sends the signal.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v8 from 'node:v8';

process.on('SIGUSR2', () => {
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(
    v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.physical_space_size]),
  );
  const code = v8.getHeapCodeStatistics();
  process.stderr.write(`idle-probe usage ${JSON.stringify({ ...usage, spaces, code })}\n`);
  const file = v8.writeHeapSnapshot(join(tmpdir(), `toolgate-idle-${process.pid}.heapsnapshot`));
  process.stderr.write(`idle-probe snapshot ${file}\n`);
});
