import { Buffer } from 'node:buffer';
import { int64Digits, type IdLiteral } from './int64-json.js';
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

export class PullBodyScanner {
  #bytes = 0;
  #object = false;
  #ended = false;
  /** 0 before the top-level value, 1 inside the top-level object, more inside a nested value. */
  #depth = 0;
  #inString = false;
  #escape = false;
  #phase: 'key' | 'colon' | 'value-start' | 'value' = 'key';
  #key: number[] = [];
  #keyTooLong = false;
  #member: 'id' | 'command' | undefined;
  #value: number[] = [];
  #valueBytes = 0;
  /** The first byte of the current member's value: a quote for a string. */
  #first: number | undefined;
  #id: IdLiteral | 'too-long' | undefined;
  #commandBytes: number | undefined;
  #commandIsString = false;

  write(chunk: Uint8Array): void {
    this.#bytes += chunk.length;
    for (const byte of chunk) {
      if (this.#ended) return;
      this.#byte(byte);
    }
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

  #byte(byte: number): void {
    if (this.#depth === 0) {
      if (isSpace(byte)) return;
      this.#object = byte === 0x7b; // {
      if (this.#object) this.#depth = 1;
      else this.#ended = true;
      return;
    }
    if (this.#inString) {
      if (this.#escape) this.#escape = false;
      else if (byte === BACKSLASH) this.#escape = true;
      else if (byte === QUOTE) this.#inString = false;
      if (this.#phase === 'key') {
        this.#keep(byte);
        if (!this.#inString) this.#phase = 'colon';
      } else this.#take(byte);
      return;
    }
    if (this.#depth > 1) {
      this.#take(byte);
      if (byte === QUOTE) this.#inString = true;
      else if (byte === 0x7b || byte === 0x5b) this.#depth++;
      else if (byte === 0x7d || byte === 0x5d) this.#depth--;
      return;
    }
    switch (this.#phase) {
      case 'key':
        if (byte === QUOTE) {
          this.#key = [byte];
          this.#keyTooLong = false;
          this.#inString = true;
        } else if (byte === 0x7d) this.#ended = true; // } closes the top-level object
        return;
      case 'colon':
        if (byte === 0x3a) this.#phase = 'value-start';
        return;
      case 'value-start':
        if (isSpace(byte)) return;
        this.#member = this.#keyName();
        this.#value = [];
        this.#valueBytes = 0;
        this.#first = byte;
        this.#phase = 'value';
        break;
      case 'value':
        break;
    }
    if (byte === 0x2c || byte === 0x7d) {
      // , or }: the member's value is complete.
      this.#endValue();
      this.#phase = 'key';
      if (byte === 0x7d) this.#ended = true;
      return;
    }
    if (isSpace(byte)) return;
    this.#take(byte);
    if (byte === QUOTE) this.#inString = true;
    else if (byte === 0x7b || byte === 0x5b) this.#depth++;
  }

  #keep(byte: number): void {
    if (this.#key.length < MAX_KEY_BYTES) this.#key.push(byte);
    else this.#keyTooLong = true;
  }

  /** A byte of the current member's value: kept for `id`, counted for `command`. */
  #take(byte: number): void {
    this.#valueBytes++;
    if (this.#member === 'id' && this.#value.length <= MAX_ID_BYTES) this.#value.push(byte);
  }

  #keyName(): 'id' | 'command' | undefined {
    if (this.#keyTooLong) return undefined;
    try {
      // Keys are compared after unescaping ("\u0069d" is id), as JSON.parse does.
      const key: unknown = JSON.parse(Buffer.from(this.#key).toString('utf8'));
      return key === 'id' || key === 'command' ? key : undefined;
    } catch {
      return undefined;
    }
  }

  #endValue(): void {
    if (this.#member === 'command') {
      this.#commandIsString = this.#valueBytes >= 2 && this.#first === QUOTE;
      this.#commandBytes = this.#commandIsString ? this.#valueBytes - 2 : this.#valueBytes;
    } else if (this.#member === 'id') {
      this.#id = this.#value.length > MAX_ID_BYTES ? 'too-long' : literal(Buffer.from(this.#value).toString('utf8'));
    }
    this.#member = undefined;
  }
}

/** The id's text as readTopLevelId would classify it. */
function literal(raw: string): IdLiteral {
  if (raw.startsWith('"')) {
    try {
      return { kind: 'string', value: JSON.parse(raw) as string };
    } catch {
      return { kind: 'other', text: raw };
    }
  }
  return /^-?\d/.test(raw) ? { kind: 'number', text: raw } : { kind: 'other', text: raw };
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
