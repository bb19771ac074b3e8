import { appendLine, splitLines, type Edit } from '../text.js';

/**
 * Console variable files: Source's `cfg/server.cfg` (`rcon_password "secret"`, Valve's
 * "Counter-Strike 2 Dedicated Servers" and srcds documentation) and Rust's
 * `server/<identity>/cfg/server.cfg` (`rcon.password "secret"`, written by `server.writecfg`).
 * Each line holds statements split by `;`; `//` starts a comment; a statement is a name and its
 * value, the value either in double quotes (no escapes in Source's tokenizer) or the next bare
 * word. A later statement overrides an earlier one, as executing the file does.
 */
export interface Convar {
  /** Lower-cased: the engines look names up without case. */
  readonly name: string;
  readonly value: string;
  readonly quoted: boolean;
  /** The raw value in the file, quotes included, [start, end); empty at the name's end when absent. */
  readonly valueStart: number;
  readonly valueEnd: number;
}

export function parseConvars(text: string): Convar[] {
  const convars: Convar[] = [];
  for (const line of splitLines(text)) {
    let i = line.start;
    while (i < line.end) {
      const statement = readStatement(text, i, line.end);
      if (statement.convar) convars.push(statement.convar);
      if (statement.comment) break;
      i = statement.next;
    }
  }
  return convars;
}

interface Token {
  readonly text: string;
  readonly quoted: boolean;
  readonly start: number;
  readonly end: number;
}

function readStatement(text: string, from: number, end: number): { convar?: Convar; next: number; comment: boolean } {
  const tokens: Token[] = [];
  let i = from;
  for (;;) {
    while (i < end && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= end) break;
    if (text.startsWith('//', i)) return { ...toConvar(tokens), next: end, comment: true };
    if (text[i] === ';') {
      i++;
      break;
    }
    const token = readToken(text, i, end);
    tokens.push(token);
    i = token.end;
  }
  return { ...toConvar(tokens), next: i, comment: false };
}

function readToken(text: string, start: number, end: number): Token {
  if (text[start] === '"') {
    const close = text.indexOf('"', start + 1);
    const stop = close < 0 || close >= end ? end : close;
    return { text: text.slice(start + 1, stop), quoted: true, start, end: stop < end ? stop + 1 : end };
  }
  let i = start;
  while (i < end && !/[\s;"]/.test(text[i]!) && !text.startsWith('//', i)) i++;
  return { text: text.slice(start, i), quoted: false, start, end: i };
}

function toConvar(tokens: readonly Token[]): { convar?: Convar } {
  const [name, value] = tokens;
  if (!name || name.quoted) return {};
  if (!value) return { convar: { name: name.text.toLowerCase(), value: '', quoted: false, valueStart: name.end, valueEnd: name.end } };
  return {
    convar: { name: name.text.toLowerCase(), value: value.text, quoted: value.quoted, valueStart: value.start, valueEnd: value.end },
  };
}

export function lastConvar(convars: readonly Convar[], name: string): Convar | undefined {
  return convars.findLast((convar) => convar.name === name.toLowerCase());
}

/** An edit giving `name` the value `value`, quoted, in place or on a new last line. */
export function setConvar(text: string, convars: readonly Convar[], name: string, value: string): Edit {
  const convar = lastConvar(convars, name);
  if (!convar) return appendLine(text, `${name} "${value}"`);
  const separator = convar.valueStart === convar.valueEnd ? ' ' : '';
  return { start: convar.valueStart, end: convar.valueEnd, text: `${separator}"${value}"` };
}
