import { appendFileSync } from 'node:fs';
import { nodeHistoryWriteFs, type HistoryAppendFile, type HistoryWriteFs } from '../../src/delivery/history/history-file.js';

/**
 * The real file operations of the delivery history, with the faults a disk and a process can
 * have, placed at any numbered operation: the disk refusing it (ENOSPC, EIO, EROFS; an append
 * that fails there first writes part of its bytes, as a disk filling up mid-write does), or
 * refusing everything while `refuseWith` is set, the process
 * dying at it (an append that dies leaves a prefix of its bytes; every later operation never
 * completes, as in a process that is gone), and a disk that stalls until released.
 */
export class FaultyHistoryFs {
  /** Operations started so far (the next one has this number). */
  ops = 0;
  dead = false;
  /** While set, every operation fails with this code (a disk that is full until something frees it). */
  refuseWith: string | undefined;
  readonly #failAt: ReadonlyMap<number, string>;
  readonly #dieAt: number | undefined;
  readonly #tornFraction: number;
  #stall: Promise<void> | undefined;
  #release: () => void = () => {};
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Files the process holds open: the kernel closes them when it dies. */
  readonly #open = new Set<HistoryAppendFile>();

  constructor(options: { failAt?: ReadonlyMap<number, string>; dieAt?: number; tornFraction?: number } = {}) {
    this.#failAt = options.failAt ?? new Map();
    this.#dieAt = options.dieAt;
    this.#tornFraction = options.tornFraction ?? 0.5;
  }

  /** From now on every operation waits until `release()`: a disk that hangs. */
  stall(): void {
    this.#stall ??= new Promise<void>((resolve) => (this.#release = resolve));
  }

  release(): void {
    this.#release();
    this.#stall = undefined;
  }

  /**
   * The process exits: what it had already handed to the kernel completes, nothing more ever
   * does. Resolves once the operations in flight have, so the next process starts after them.
   */
  async kill(): Promise<void> {
    this.dead = true;
    await Promise.allSettled([...this.#inFlight]);
    await Promise.allSettled([...this.#open].map((file) => file.close()));
    this.#open.clear();
  }

  /** Files opened and not yet closed. */
  get openFiles(): number {
    return this.#open.size;
  }

  files(): HistoryWriteFs {
    return {
      inspect: (path) => this.#run('inspect', () => nodeHistoryWriteFs.inspect(path)),
      open: (path) => this.#run('open', () => this.#openFile(path)),
      identify: (path) => this.#run('identify', () => nodeHistoryWriteFs.identify(path)),
      rename: (from, to) => this.#run('rename', () => nodeHistoryWriteFs.rename(from, to)),
    };
  }

  async #openFile(path: string): Promise<HistoryAppendFile> {
    const real = await nodeHistoryWriteFs.open(path);
    this.#open.add(real);
    return {
      dev: real.dev,
      ino: real.ino,
      append: (text) =>
        this.#run(
          'append',
          () => real.append(text),
          () => this.#tear(path, text),
        ),
      // Not a numbered operation: a close loses nothing, and the writer never waits on one to go on.
      close: async () => {
        if (this.dead || !this.#open.delete(real)) return;
        await real.close();
      },
    };
  }

  async #run<T>(name: string, real: () => Promise<T>, tear?: () => void): Promise<T> {
    if (this.dead) return never();
    const index = this.ops++;
    if (index === this.#dieAt) {
      this.dead = true;
      tear?.();
      return never();
    }
    await this.#stall;
    if (this.refuseWith !== undefined) throw failure(this.refuseWith, name);
    const code = this.#failAt.get(index);
    if (code !== undefined) {
      tear?.();
      throw failure(code, name);
    }
    const running = real();
    this.#inFlight.add(running);
    try {
      return await running;
    } finally {
      this.#inFlight.delete(running);
    }
  }

  #tear(path: string, text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    const keep = Math.floor(bytes.length * this.#tornFraction);
    if (keep > 0) appendFileSync(path, bytes.subarray(0, keep));
  }
}

function failure(code: string, operation: string): Error {
  return Object.assign(new Error(`${code}: simulated failure of ${operation}`), { code });
}

/** What a dead process's operations do: nothing, ever. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}
