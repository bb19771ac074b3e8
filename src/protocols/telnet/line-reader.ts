/**
 * Turns the console's byte stream into text lines. 7 Days to Die speaks no telnet negotiation,
 * but a proxy or a different server on the port might: IAC sequences (IAC + command, IAC +
 * WILL/WONT/DO/DONT + option, IAC SB … IAC SE) are dropped, never answered, and never taken for
 * text (0xFF is not valid UTF-8, so no text byte is lost with them). NUL bytes are dropped: the
 * console writes one for every log line it may not show a session that has not logged in yet.
 * Lines end at LF; the CR before it is removed. Text is UTF-8, decoded per whole line so a
 * character split across reads survives.
 */

const IAC = 0xff;
const SB = 250;
const SE = 240;
const WILL = 251;
const DONT = 254;
const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;

type IacState = 'data' | 'command' | 'option' | 'subnegotiation' | 'subnegotiation-iac';

interface LineBatch {
  /** Every line the chunk completed, in order (also those before an overflow). */
  readonly lines: string[];
  /** A line grew over the cap without ending: the stream is not a console's, and the reader stays failed. */
  readonly overflow: boolean;
}

export class TelnetLineReader {
  readonly #maxLineBytes: number;
  #parts: Buffer[] = [];
  #partBytes = 0;
  #state: IacState = 'data';
  #failed = false;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** Feeds a chunk. Never throws. */
  push(chunk: Buffer): LineBatch {
    if (this.#failed) return { lines: [], overflow: true };
    const text = this.#clean(chunk);
    const lines: string[] = [];
    let start = 0;
    for (let end = text.indexOf(LF); end !== -1; end = text.indexOf(LF, start)) {
      if (!this.#append(text.subarray(start, end))) return { lines, overflow: true };
      lines.push(this.#takeLine());
      start = end + 1;
    }
    if (!this.#append(text.subarray(start))) return { lines, overflow: true };
    return { lines, overflow: false };
  }

  #append(bytes: Buffer): boolean {
    if (bytes.length === 0) return true;
    this.#partBytes += bytes.length;
    if (this.#partBytes > this.#maxLineBytes) {
      this.#failed = true;
      this.#parts = [];
      return false;
    }
    // Copied: the chunk it came from is not pinned by a line still being read.
    this.#parts.push(Buffer.from(bytes));
    return true;
  }

  #takeLine(): string {
    let line = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts);
    this.#parts = [];
    this.#partBytes = 0;
    let end = line.length;
    while (end > 0 && line[end - 1] === CR) end -= 1;
    line = line.subarray(0, end);
    return line.toString('utf8');
  }

  /** The chunk without NULs and telnet commands; the chunk itself when it has neither. */
  #clean(chunk: Buffer): Buffer {
    if (this.#state === 'data' && !chunk.includes(IAC) && !chunk.includes(NUL)) return chunk;
    const out = Buffer.allocUnsafe(chunk.length);
    let length = 0;
    for (const byte of chunk) {
      switch (this.#state) {
        case 'data':
          if (byte === IAC) this.#state = 'command';
          else if (byte !== NUL) out[length++] = byte;
          break;
        case 'command':
          if (byte >= WILL && byte <= DONT) this.#state = 'option';
          else if (byte === SB) this.#state = 'subnegotiation';
          else this.#state = 'data';
          break;
        case 'option':
          this.#state = 'data';
          break;
        case 'subnegotiation':
          if (byte === IAC) this.#state = 'subnegotiation-iac';
          break;
        case 'subnegotiation-iac':
          this.#state = byte === SE ? 'data' : 'subnegotiation';
          break;
      }
    }
    return out.subarray(0, length);
  }
}
