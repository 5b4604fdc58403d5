/**
 * @module The source of the SQLite writer thread (writer.ts starts it): a connection of its own
 * that writes the batches of consumptions the event loop decided, each drain of its queue in one
 * transaction, and answers each once an fdatasync of the WAL that started after its COMMIT is
 * done (the next drains are written meanwhile). Before writing it
 * checks, under the write lock, that no other process committed since the event loop's baseline
 * (own-commits.ts) and that each batch was decided under the current one: otherwise the batches are
 * answered `conflict` and the event loop decides them again under the lock itself. A CommonJS
 * script run with eval, built from the very functions the event loop runs (so it needs no file of
 * its own beside the compiled code, and the tests run it from the sources too).
 */
import { prepareConsumptionWrites, runConsumptionWrites } from './consumption-writes.js';
import { onlyOwn, readWalChange } from './own-commits.js';

/** A drain's answer to one batch. */
export type WriterReply =
  | { id: number; kind: 'committed' }
  /** Not written: another process committed, or the batch was decided under an older baseline. */
  | { id: number; kind: 'conflict' }
  /** Not written: the database refused (its message); the batch may be tried again later. */
  | { id: number; kind: 'failed'; message: string; code: string | undefined }
  /** Committed, but the fdatasync failed: nothing can be known durable any more. */
  | { id: number; kind: 'fatal'; message: string };

export interface WriterBatch {
  id: number;
  epoch: number;
  ops: unknown[];
}

export const WRITER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.driver);
const prepareConsumptionWrites = ${prepareConsumptionWrites.toString()};
const runConsumptionWrites = ${runConsumptionWrites.toString()};
const readWalChange = ${readWalChange.toString()};
const onlyOwn = ${onlyOwn.toString()};
const shared = new Int32Array(workerData.shared);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyMs);
db.pragma('synchronous = NORMAL');
// Every account a batch names was found before it was decided, and accounts are never deleted: the
// foreign keys' lookups (one per row written) would only ever find them.
db.pragma('foreign_keys = OFF');
db.pragma('wal_autocheckpoint = ' + workerData.autocheckpoint);
db.pragma('cache_size = -' + workerData.cacheKib);
const statements = prepareConsumptionWrites(db, workerData.sql);
const countCommit = db.prepare(workerData.countSql);
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const rollback = db.prepare('ROLLBACK');
const wal = fs.openSync(workerData.path + '-wal', 'r');
const shm = fs.openSync(workerData.path + '-shm', 'r');
const header = Buffer.alloc(96);
let queue = [];
let scheduled = false;
let closing = false;

const failure = (err) => ({ message: String((err && err.message) || err), code: err && err.code });
const answer = (batches, kind, extra) => batches.map((b) => Object.assign({ id: b.id, kind }, extra));

function write(batches) {
  try {
    begin.run();
  } catch (err) {
    return answer(batches, 'failed', failure(err));
  }
  // Under the write lock: nobody else commits until this COMMIT.
  const change = readWalChange(fs.readSync, shm, header, workerData.littleEndian);
  const state = Atomics.load(shared, 0);
  const fresh = change !== undefined && onlyOwn(shared, change, state);
  const epoch = Atomics.load(shared, 1);
  const taken = fresh ? batches.filter((b) => b.epoch === epoch) : [];
  const stale = fresh ? batches.filter((b) => b.epoch !== epoch) : batches;
  if (taken.length === 0) {
    rollback.run();
    // Batches already queued were decided on what may have changed: a new epoch turns them away too.
    if (!fresh) Atomics.add(shared, 1, 1);
    return answer(stale, 'conflict');
  }
  try {
    for (const b of taken) runConsumptionWrites(statements, b.ops);
    countCommit.run();
  } catch (err) {
    rollback.run();
    // Whatever was decided after these batches was decided on them: a new epoch turns it away.
    Atomics.add(shared, 1, 1);
    // A balance that is not the one decided: decided on a balance this process changed meanwhile.
    if (err && err.stale) return answer(batches, 'conflict');
    return answer(taken, 'failed', failure(err)).concat(answer(stale, 'conflict'));
  }
  Atomics.add(shared, 0, 1);
  try {
    commit.run();
  } catch (err) {
    Atomics.sub(shared, 0, 1);
    Atomics.notify(shared, 0);
    if (db.inTransaction) rollback.run();
    Atomics.add(shared, 1, 1);
    return answer(taken, 'failed', failure(err)).concat(answer(stale, 'conflict'));
  }
  Atomics.add(shared, 0, 1);
  Atomics.notify(shared, 0);
  undurable.push(...taken);
  return answer(stale, 'conflict');
}

// Committed batches wait for an fdatasync that started after their COMMIT. Each drain's starts at
// once, beside those still running (the disk takes several flushes at a time), up to SYNCS; those
// committed while that many run share the next one to start.
const SYNCS = 3;
let undurable = [];
let syncing = 0;
let broken;

function sync() {
  if (undurable.length === 0) return finishIfClosing();
  if (broken) {
    parentPort.postMessage(answer(undurable.splice(0), 'fatal', { message: broken }));
    return finishIfClosing();
  }
  if (syncing >= SYNCS) return;
  const batches = undurable;
  undurable = [];
  syncing++;
  fs.fdatasync(wal, (err) => {
    syncing--;
    // A failed fdatasync leaves the file's state unknown: every later commit is answered so too.
    if (err) broken = failure(err).message;
    parentPort.postMessage(broken ? answer(batches, 'fatal', { message: broken }) : answer(batches, 'committed'));
    sync();
  });
}

function finishIfClosing() {
  if (!closing || scheduled || syncing > 0 || queue.length > 0 || undurable.length > 0) return;
  db.close();
  parentPort.close();
}

function drain() {
  scheduled = false;
  const batches = queue;
  queue = [];
  if (batches.length > 0) {
    const replies = write(batches);
    if (replies.length > 0) parentPort.postMessage(replies);
  }
  sync();
}

parentPort.on('message', (message) => {
  if (message === 'close') closing = true;
  else queue.push(message);
  // Whatever else arrived by the end of this turn goes in the same transaction.
  if (!scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
});
parentPort.postMessage('ready');
`;
