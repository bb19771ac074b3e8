import { Buffer } from 'node:buffer';
import { idLiteral, int64Digits, type IdLiteral } from './int64-json.js';
import {
  ARRAY_END,
  ARRAY_START,
  COLON,
  COMMA,
  JsonTokenizer,
  OBJECT_END,
  OBJECT_START,
  STRING,
  type JsonTokenKind,
} from '../../json-tokens.js';
import type { PullResult } from '../types.js';

/**
 * A pull answer too big to keep (the client's answer cap) still names a claim: the platform marked
 * that command PROCESSING and answers 204 to every pull until it is reported. This scanner reads
 * such a body as it streams past and keeps only what a report needs, whatever the key order: the
 * raw text of the top-level `id` (a few bytes) and the size of `command`. Everything else is
 * counted and dropped, so memory stays bounded however large the body is.
 */

/** What the scan of an oversized pull answer kept. */
export interface OversizedPull {
  /** Bytes of the whole answer read. */
  readonly bytes: number;
  /** The cap it exceeded. */
  readonly limitBytes: number;
  /** The top-level value is an object. */
  readonly object: boolean;
  /** The last top-level `id` (as JSON.parse would keep), 'too-long' when its text alone was longer than any int64. */
  readonly id: IdLiteral | 'too-long' | undefined;
  /** Bytes of the top-level `command` value's text (a string's without its quotes); undefined without one. */
  readonly commandBytes: number | undefined;
  readonly commandIsString: boolean;
}

/** Longer than any key porter looks for, escapes included. */
const MAX_KEY_BYTES = 64;
/** Longer than any int64 in any JSON spelling ("-9223372036854775808" with quotes and escapes). */
const MAX_ID_BYTES = 160;
/** The bytes of earlier chunks kept: enough for a key or an id that began in one of them. */
const RECENT_BYTES = 256;

const NO_BYTES = new Uint8Array(0);
const utf8 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/**
 * Reads the stream with the shared tokenizer (src/json-tokens.ts), which keeps no token's text: the
 * few bytes of a key or an id are taken from the chunk at hand and the end of the ones before it.
 * Lenient: a fault in the text is read past, never thrown.
 */
export class PullBodyScanner {
  readonly #tokens = new JsonTokenizer((kind, start, end) => this.#token(kind, start, end));
  #bytes = 0;
  #object = false;
  #ended = false;
  /** 0 before the top-level value, 1 inside the top-level object, more inside a nested value. */
  #depth = 0;
  #phase: 'key' | 'colon' | 'value-start' | 'value' = 'key';
  #member: 'id' | 'command' | undefined;
  #valueStart = 0;
  #valueIsString = false;
  /** What the member's value came to so far; kept once a ',' or '}' ends it. */
  #value: IdLiteral | 'too-long' | number | undefined;
  #id: IdLiteral | 'too-long' | undefined;
  #commandBytes: number | undefined;
  #commandIsString = false;
  #chunk: Uint8Array = NO_BYTES;
  #chunkAt = 0;
  #recent: Uint8Array = NO_BYTES;

  write(chunk: Uint8Array): void {
    this.#chunk = chunk;
    this.#chunkAt = this.#bytes;
    this.#bytes += chunk.length;
    if (!this.#ended) this.#tokens.write(chunk);
    const kept = Math.min(RECENT_BYTES, this.#recent.length + chunk.length);
    const recent = new Uint8Array(kept);
    const fromChunk = Math.min(kept, chunk.length);
    recent.set(this.#recent.subarray(this.#recent.length - (kept - fromChunk)), 0);
    recent.set(chunk.subarray(chunk.length - fromChunk), kept - fromChunk);
    this.#recent = recent;
  }

  result(limitBytes: number): OversizedPull {
    return {
      bytes: this.#bytes,
      limitBytes,
      object: this.#object,
      id: this.#id,
      commandBytes: this.#commandBytes,
      commandIsString: this.#commandIsString,
    };
  }

  /** The text of bytes `start` to `end` of the stream, which end in the chunk at hand and began at most RECENT_BYTES before it. */
  #text(start: number, end: number): string {
    const inChunk = this.#chunk.subarray(Math.max(0, start - this.#chunkAt), end - this.#chunkAt);
    if (start >= this.#chunkAt) return utf8(inChunk);
    const before = this.#recent.subarray(this.#recent.length - (this.#chunkAt - start));
    return utf8(Buffer.concat([before, inChunk]));
  }

  #token(kind: JsonTokenKind, start: number, end: number): void {
    if (this.#ended) return;
    if (this.#depth === 0) {
      this.#object = kind === OBJECT_START;
      if (this.#object) this.#depth = 1;
      else this.#ended = true;
      return;
    }
    if (this.#depth > 1) {
      if (kind === OBJECT_START || kind === ARRAY_START) this.#depth++;
      else if (kind === OBJECT_END || kind === ARRAY_END) {
        if (--this.#depth === 1) this.#valueEnds(end);
      }
      return;
    }
    switch (this.#phase) {
      case 'key':
        if (kind === STRING) {
          this.#member = end - start > MAX_KEY_BYTES ? undefined : memberOf(this.#text(start, end));
          this.#phase = 'colon';
        } else if (kind === OBJECT_END) this.#ended = true;
        return;
      case 'colon':
        if (kind === COLON) this.#phase = 'value-start';
        return;
      case 'value-start':
        this.#valueStart = start;
        this.#valueIsString = kind === STRING;
        this.#phase = 'value';
        break;
      case 'value':
        break;
    }
    if (kind === COMMA || kind === OBJECT_END) {
      // , or }: the member's value is complete.
      if (this.#valueStart === start) this.#valueEnds(start);
      this.#keep();
      this.#member = undefined;
      this.#phase = 'key';
      if (kind === OBJECT_END) this.#ended = true;
      return;
    }
    if (kind === OBJECT_START || kind === ARRAY_START) this.#depth++;
    else this.#valueEnds(end);
  }

  /**
   * The current member's value ends at `end` (so far: a faulty text may add to it): what a report
   * needs of it, taken while its bytes are at hand.
   */
  #valueEnds(end: number): void {
    const bytes = end - this.#valueStart;
    if (this.#member === 'command') this.#value = bytes;
    else if (this.#member === 'id') this.#value = bytes > MAX_ID_BYTES ? 'too-long' : literal(this.#text(this.#valueStart, end));
  }

  /** A ',' or '}' ended the member: what its value came to is the last of its key (as JSON.parse keeps). */
  #keep(): void {
    const value = this.#value;
    this.#value = undefined;
    if (this.#member === 'command' && typeof value === 'number') {
      this.#commandIsString = value >= 2 && this.#valueIsString;
      this.#commandBytes = this.#commandIsString ? value - 2 : value;
    } else if (this.#member === 'id' && value !== undefined && typeof value !== 'number') this.#id = value;
  }
}

/** Keys are compared after unescaping ("\u0069d" is id), as JSON.parse does. */
function memberOf(keyText: string): 'id' | 'command' | undefined {
  try {
    const key: unknown = JSON.parse(keyText);
    return key === 'id' || key === 'command' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The id's text as readTopLevelId would classify it; a string JSON cannot read is `other`. */
function literal(raw: string): IdLiteral {
  try {
    return idLiteral(raw);
  } catch {
    return { kind: 'other', text: raw };
  }
}

const SHORTEN = 'nothing was run — shorten the command in the store (or split it into several), then retry it from the dashboard';

/**
 * A 2xx pull answer over the size cap, from what the scan kept: a claim to report failed with its
 * size when its id can be read, else `unusable` like any answer without a usable id.
 */
export function oversizedPullResult(scan: OversizedPull): PullResult {
  const size = `the pull answer of ${scan.bytes} bytes exceeds porter's limit of ${scan.limitBytes} bytes`;
  if (!scan.object) return { kind: 'unusable', reason: `${size} and is not a JSON object` };
  if (scan.id === undefined) return { kind: 'unusable', reason: `${size} and has no id porter could read` };
  if (scan.id === 'too-long') return { kind: 'unusable', reason: `${size} and its id is longer than any int64` };
  const digits = int64Digits(scan.id);
  if (!digits.ok) return { kind: 'unusable', reason: `${size} and ${digits.reason}` };
  const reason =
    scan.commandBytes !== undefined && scan.commandIsString
      ? `command of ${scan.commandBytes} bytes exceeds porter's limit of ${scan.limitBytes} bytes for a pull answer; ${SHORTEN}`
      : `${size}; ${SHORTEN}`;
  return { kind: 'oversized', id: digits.digits, reason };
}
