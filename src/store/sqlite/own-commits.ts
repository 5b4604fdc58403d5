/**
 * @module This process's commits told from other processes', when two connections of this process
 * write: the event loop's and the writer thread's (writer.ts). SQLite's `data_version` moves for a
 * connection whenever any other connection commits, this process's own included, so it cannot
 * say whether another process (a second server, the CLI) changed what the read cache holds. The
 * WAL index header can: its `iChange` counts the transactions committed to the database, one each
 * (https://www.sqlite.org/walformat.html). This process counts its own commits in shared memory,
 * so every commit the header shows beyond that count is another process's.
 *
 * The count is one Int32 that both threads add to, twice per commit: once just before its COMMIT
 * (odd: a commit under way, which may or may not be in the header yet) and once after it (even:
 * done), or taken back if the COMMIT failed. Each commit of this process is made to change the
 * database (a row of `commit_counter` updated, migration 018): a transaction whose pages come out
 * the same writes no frame and would not move `iChange`.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/** Indexes into the shared Int32Array. */
export const STATE = 0;
/** Moved each time the baseline is taken again: a batch decided under an older one is not written. */
export const EPOCH = 1;
/** The header's iChange and this process's STATE when no other process's commit was outstanding. */
export const BASE_CHANGE = 2;
export const BASE_STATE = 3;
const SLOTS = 4;

/** Makes every commit of this process change the database: see the module comment. */
export const COUNT_COMMIT_SQL = 'UPDATE commit_counter SET n = n + 1 WHERE id = 1';

const HEADER_BYTES = 96;

// The two functions below name nothing outside themselves (indexes and offsets are written in):
// the writer thread runs their very source (writer-thread.ts), so both threads count alike.

/**
 * The WAL index header's iChange (offset 8 of each of its two 48-byte copies, which must agree), read
 * from the -shm file with `read` (fs.readSync), or undefined when the file is too short.
 */
export function readWalChange(
  read: (fd: number, buf: Buffer, offset: number, length: number, position: number) => number,
  fd: number,
  buf: Buffer,
  littleEndian: boolean,
): number | undefined {
  for (let tries = 0; tries < 100; tries++) {
    if (read(fd, buf, 0, 96, 0) < 96) return undefined;
    const first = littleEndian ? buf.readUInt32LE(8) : buf.readUInt32BE(8);
    const second = littleEndian ? buf.readUInt32LE(56) : buf.readUInt32BE(56);
    // A writer updates the second copy first: the two differ only while it writes them.
    if (first === second) return first;
  }
  return undefined;
}

/**
 * Whether every commit the header counts since the baseline (BASE_CHANGE, BASE_STATE: slots 2 and
 * 3) is this process's: `state` is the shared count (twice the commits, odd while one is under
 * way), `change` the header's iChange.
 */
export function onlyOwn(shared: Int32Array, change: number, state: number): boolean {
  const theirs = (change - Atomics.load(shared, 2)) >>> 0;
  const ours = (state - Atomics.load(shared, 3)) >>> 0;
  const done = ours >>> 1;
  return theirs === done || ((ours & 1) === 1 && theirs === done + 1);
}

export class OwnCommits {
  readonly shared = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
  private readonly fd: number;
  private readonly buf = Buffer.alloc(HEADER_BYTES);
  readonly littleEndian = endianness() === 'LE';

  constructor(shmPath: string) {
    this.fd = openSync(shmPath, 'r');
  }

  /** Around a commit of this thread: before its COMMIT, and after it (committed or not). */
  beforeCommit(): void {
    Atomics.add(this.shared, STATE, 1);
  }

  afterCommit(committed: boolean): void {
    if (committed) Atomics.add(this.shared, STATE, 1);
    else Atomics.sub(this.shared, STATE, 1);
    Atomics.notify(this.shared, STATE);
  }

  /** True when no other process committed since the baseline; false also when that cannot be told. */
  onlyOwnSinceBase(): boolean {
    for (let tries = 0; tries < 100; tries++) {
      const before = Atomics.load(this.shared, STATE);
      const change = readWalChange(readSync, this.fd, this.buf, this.littleEndian);
      if (change === undefined) return false;
      // The count moved while the header was read: read both again.
      if (Atomics.load(this.shared, STATE) === before) return onlyOwn(this.shared, change, before);
    }
    return false;
  }

  /**
   * Takes the baseline again (after the cache forgot everything another process may have changed),
   * at a moment no commit of this process is under way; a new epoch. False if none came soon.
   */
  rebase(): boolean {
    for (let tries = 0; tries < 100; tries++) {
      const state = Atomics.load(this.shared, STATE);
      // The writer thread's COMMIT under way: it wakes this wait once done (at most a millisecond or so).
      if ((state & 1) === 1) {
        Atomics.wait(this.shared, STATE, state, 5);
        continue;
      }
      const change = readWalChange(readSync, this.fd, this.buf, this.littleEndian);
      if (change === undefined) return false;
      if (Atomics.load(this.shared, STATE) !== state) continue;
      Atomics.store(this.shared, BASE_CHANGE, change | 0);
      Atomics.store(this.shared, BASE_STATE, state);
      Atomics.add(this.shared, EPOCH, 1);
      return true;
    }
    return false;
  }

  get epoch(): number {
    return Atomics.load(this.shared, EPOCH);
  }

  close(): void {
    closeSync(this.fd);
  }
}
