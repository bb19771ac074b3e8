/** What adding one part did to an answer. */
type PartOutcome =
  /** Stored; more parts are due. */
  | 'partial'
  /** Stored, and every part is here: `text()` is the answer. */
  | 'complete'
  /** Not stored: an index seen already (UDP may duplicate a datagram) or a total unlike the first part's. */
  | 'rejected'
  /** The parts together outgrew the cap: the answer cannot be used. */
  | 'too-large';

/**
 * The parts of one command's answer as they arrive, in any order. The first part fixes the total;
 * a part that disagrees with what is held is rejected rather than trusted, so a stray or forged
 * datagram can delay an answer (until its deadline, then the outcome is unknown) but never change
 * it. Parts are joined as bytes before decoding: a split may fall inside a UTF-8 sequence.
 */
export class AnswerParts {
  readonly #maxBytes: number;
  readonly #parts = new Map<number, Buffer>();
  #total: number | undefined;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Parts held so far: a connection that ends after the first one ended mid-answer. */
  get received(): number {
    return this.#parts.size;
  }

  add(total: number, index: number, body: Buffer): PartOutcome {
    if (this.#total !== undefined && total !== this.#total) return 'rejected';
    if (index >= total || this.#parts.has(index)) return 'rejected';
    this.#bytes += body.length;
    if (this.#bytes > this.#maxBytes) return 'too-large';
    this.#total = total;
    this.#parts.set(index, body);
    return this.#parts.size === total ? 'complete' : 'partial';
  }

  /** The whole answer; only meaningful once `add` said complete. */
  text(): string {
    const ordered: Buffer[] = [];
    for (let index = 0; index < (this.#total ?? 0); index += 1) ordered.push(this.#parts.get(index) ?? Buffer.alloc(0));
    return Buffer.concat(ordered).toString('utf8');
  }
}
