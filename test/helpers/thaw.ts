import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

/**
 * "Frozen and thawed" without freezing a process: this thread blocks synchronously (no turn of
 * its event loop) while a peer in a worker thread, which keeps running, writes its answer. When
 * the block ends, an expired deadline and an answer waiting in the socket are ready at the same
 * moment, as after a paused VM, SIGSTOP/SIGCONT or a long GC pause (docs/design.md#frozen-and-thawed).
 */

export type ThawPeerKind = 'raw' | 'http' | 'rcon' | 'webrcon';

export interface ThawPeerData {
  readonly kind: ThawPeerKind;
  /** Int32 slots: RECEIVED, ANSWERED, ANSWER_DELAY. */
  readonly counters: SharedArrayBuffer;
}

/** Requests the peer has read (for webrcon: messages). */
export const RECEIVED = 0;
/** Answers the peer has handed to its socket. */
export const ANSWERED = 1;
/** How long the peer waits after a request before it answers, in ms. */
export const ANSWER_DELAY = 2;

export interface ThawPeer {
  readonly port: number;
  received(): number;
  answered(): number;
  /** How long the peer waits after each request before it answers from now on. */
  answerAfter(ms: number): void;
  /** True once the peer has read `n` requests in all; false when `gaveUp` settles first. */
  waitReceived(n: number, gaveUp: Promise<unknown>): Promise<boolean>;
  close(): Promise<void>;
}

export async function startThawPeer(kind: ThawPeerKind, answerDelayMs = 0): Promise<ThawPeer> {
  const counters = new Int32Array(new SharedArrayBuffer(12));
  Atomics.store(counters, ANSWER_DELAY, answerDelayMs);
  const data: ThawPeerData = { kind, counters: counters.buffer };
  const worker = new Worker(new URL('./thaw-peer.js', import.meta.url), { workerData: data });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (message: number) => resolve(message));
    worker.once('error', reject);
  });
  // A client that drops its connection must not crash the test through the worker.
  worker.on('error', () => undefined);
  return {
    port,
    received: () => Atomics.load(counters, RECEIVED),
    answered: () => Atomics.load(counters, ANSWERED),
    answerAfter: (ms) => Atomics.store(counters, ANSWER_DELAY, ms),
    async waitReceived(n, gaveUp) {
      let settled = false;
      void gaveUp.finally(() => (settled = true));
      const bound = performance.now() + 30_000;
      while (Atomics.load(counters, RECEIVED) < n) {
        if (settled) return false;
        if (performance.now() > bound) throw new Error(`the peer did not receive request ${n} within 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return true;
    },
    close: async () => {
      await worker.terminate();
    },
  };
}

/**
 * Blocks this thread until `peer` has answered `n` requests and `since` is at least `atLeastMs`
 * ago, then 30 ms more for the loopback to deliver. Atomics.wait, not a sleep: nothing of this
 * thread runs meanwhile, timers included. Called from a setImmediate callback (the check phase),
 * so that once it returns Node runs the expired timers before it next reads a socket, which is
 * exactly the order after a thaw.
 */
export function freezeUntilAnswered(peer: ThawPeer, n: number, since: number, atLeastMs: number): void {
  const counters = new Int32Array(new SharedArrayBuffer(4));
  const bound = performance.now() + 30_000;
  while (peer.answered() < n && performance.now() < bound) Atomics.wait(counters, 0, 0, 5);
  const left = since + atLeastMs - performance.now();
  if (left > 0) Atomics.wait(counters, 0, 0, left);
  Atomics.wait(counters, 0, 0, 30);
}

/** Resolves in the check phase of the next turn of the event loop. */
export const nextCheckPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
