/**
 * Keeps only the last `limit` bytes of a stream, so a script that writes megabytes costs a
 * bounded amount of memory no matter how long it runs.
 */
export class TailBuffer {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #held = 0;
  #droppedBytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    if (chunk.length >= this.#limit) {
      this.#droppedBytes += this.#held + chunk.length - this.#limit;
      this.#chunks = [chunk.subarray(chunk.length - this.#limit)];
      this.#held = this.#limit;
      return;
    }
    this.#chunks.push(chunk);
    this.#held += chunk.length;
    while (this.#held > this.#limit) {
      const first = this.#chunks[0]!;
      const excess = this.#held - this.#limit;
      if (first.length <= excess) {
        this.#chunks.shift();
        this.#held -= first.length;
        this.#droppedBytes += first.length;
      } else {
        this.#chunks[0] = first.subarray(excess);
        this.#held -= excess;
        this.#droppedBytes += excess;
      }
    }
  }

  /** Bytes that were cut from the front. */
  get dropped(): number {
    return this.#droppedBytes;
  }

  /** Bytes held now (never more than the limit). */
  get size(): number {
    return this.#held;
  }

  /** The kept tail as UTF-8; a character cut in half at the front is skipped, not garbled. */
  text(): string {
    let bytes = Buffer.concat(this.#chunks, this.#held);
    if (this.#droppedBytes > 0) {
      let start = 0;
      // UTF-8 continuation bytes are 0b10xxxxxx; at most 3 can precede the next lead byte.
      while (start < bytes.length && start < 3 && (bytes[start]! & 0xc0) === 0x80) start += 1;
      bytes = bytes.subarray(start);
    }
    return bytes.toString('utf8');
  }
}

/** The last `maxLines` lines of `text`, at most `maxChars` characters, for error messages. */
export function lastLines(text: string, maxLines: number, maxChars: number): string {
  const lines = text.replace(/\s+$/, '').split(/\r?\n/);
  let tail = lines.slice(-maxLines).join('\n');
  if (tail.length > maxChars) tail = `…${tail.slice(tail.length - maxChars + 1)}`;
  return tail;
}
