import * as fs from 'node:fs';
import type { JournalFs } from '../../src/delivery/journal/journal-fs.js';

/** Thrown by every operation of a FaultyFs once its process has "died". */
export class ProcessDied extends Error {
  constructor() {
    super('the process died here (simulated kill -9)');
  }
}

/** Operations that change the disk; reads never fail in this model. */
const WRITES = new Set(['openSync', 'writeSync', 'fsyncSync', 'fdatasyncSync', 'ftruncateSync', 'renameSync', 'unlinkSync', 'mkdirSync']);

/** Opening a file only to read it is a read (the journal opens its files that way since it refuses FIFOs). */
function isReadOnlyOpen(name: string, args: unknown[]): boolean {
  const flags = args[1];
  const { O_WRONLY, O_RDWR, O_CREAT } = fs.constants;
  return name === 'openSync' && typeof flags === 'number' && (flags & (O_WRONLY | O_RDWR | O_CREAT)) === 0;
}

/**
 * The real node:fs, with two kinds of fault a test can place at any numbered write operation:
 * the disk refusing it (ENOSPC, EIO, EROFS) and the process dying at it (a `writeSync` that dies
 * leaves a prefix of its bytes on disk first, as a kill -9 mid-write can). After a death every
 * operation throws ProcessDied, so a "dead" journal can never touch the disk again.
 */
export class FaultyFs {
  /** Write operations performed so far (the next one has this number). */
  writes = 0;
  dead = false;
  readonly #failAt: ReadonlyMap<number, string>;
  readonly #dieAt: number | undefined;
  readonly #tornFraction: number;
  /** While set, every write fails with this code (a disk that is full until something frees it). */
  refuseWith: string | undefined;

  readonly #fullFrom: number | undefined;

  /** `fullFrom`: from this write on, every write fails with ENOSPC until `refuseWith` is cleared. */
  constructor(options: { failAt?: ReadonlyMap<number, string>; dieAt?: number; tornFraction?: number; fullFrom?: number } = {}) {
    this.#failAt = options.failAt ?? new Map();
    this.#fullFrom = options.fullFrom;
    this.#dieAt = options.dieAt;
    this.#tornFraction = options.tornFraction ?? 0.5;
  }

  /** The JournalFs to hand to a Journal. */
  files(): JournalFs {
    const wrap =
      <K extends keyof JournalFs>(name: K) =>
      (...args: unknown[]): unknown => {
        if (this.dead) throw new ProcessDied();
        const real = fs[name] as (...a: unknown[]) => unknown;
        if (!WRITES.has(name) || isReadOnlyOpen(name, args)) return real(...args);
        const index = this.writes++;
        if (index === this.#fullFrom) this.refuseWith = 'ENOSPC';
        if (index === this.#dieAt) {
          this.dead = true;
          if (name === 'writeSync') this.#tearWrite(args);
          throw new ProcessDied();
        }
        const code = this.refuseWith ?? this.#failAt.get(index);
        if (code !== undefined) throw Object.assign(new Error(`${code}: simulated failure of ${name}`), { code });
        return real(...args);
      };
    return {
      openSync: wrap('openSync'),
      closeSync: wrap('closeSync'),
      writeSync: wrap('writeSync'),
      fsyncSync: wrap('fsyncSync'),
      fdatasyncSync: wrap('fdatasyncSync'),
      ftruncateSync: wrap('ftruncateSync'),
      fstatSync: wrap('fstatSync'),
      renameSync: wrap('renameSync'),
      unlinkSync: wrap('unlinkSync'),
      readFileSync: wrap('readFileSync'),
      readdirSync: wrap('readdirSync'),
      mkdirSync: wrap('mkdirSync'),
    } as JournalFs;
  }

  #tearWrite(args: unknown[]): void {
    const [fd, buffer, offset = 0, length] = args as [number, Uint8Array, number | undefined, number | undefined];
    const total = length ?? buffer.length - offset;
    const keep = Math.floor(total * this.#tornFraction);
    if (keep > 0) fs.writeSync(fd, buffer, offset, keep);
  }
}
