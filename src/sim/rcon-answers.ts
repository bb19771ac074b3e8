/** What a simulated game server does with one console command. */
export interface SimAnswer {
  readonly text: string;
  /** Answer only after this long (a slow command), so tests can watch requests overlap or not. */
  readonly delayMs?: number;
}

const ECHO_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Three UTF-8 bytes each: a 4,096-character Minecraft fragment of these is 12,288 bytes. */
const WIDE_ALPHABET = '€₿ℤ★☃♞';
const MAX_SIM_ANSWER = 1_000_000;

/** The exact text `porter-sim echo <n>` answers with: no repeats at any 4,096 boundary go unnoticed. */
export function simEchoText(length: number, alphabet: string = ECHO_ALPHABET): string {
  let text = '';
  for (let i = 0; i < length; i += 1) text += alphabet[(i * 7 + Math.floor(i / alphabet.length)) % alphabet.length];
  return text;
}

/** `porter-sim unicode <n>`: n characters of three UTF-8 bytes each. */
export function simWideText(length: number): string {
  return simEchoText(length, WIDE_ALPHABET);
}

/**
 * Debug commands every flavour understands, to exercise the transport:
 * `porter-sim echo <n>` (n characters), `porter-sim unicode <n>` (n three-byte characters),
 * `porter-sim delay <ms> [text]` (answers after ms). Returns undefined for anything else.
 */
export function runSimCommand(command: string): SimAnswer | undefined {
  const words = command.trim().split(/\s+/);
  if (words[0]?.toLowerCase() !== 'porter-sim') return undefined;
  const [, action, arg, ...rest] = words;
  const n = Number(arg);
  const valid = Number.isInteger(n) && n >= 0 && n <= MAX_SIM_ANSWER;
  if (action === 'echo' && valid) return { text: simEchoText(n) };
  if (action === 'unicode' && valid) return { text: simWideText(n) };
  if (action === 'delay' && valid) return { text: rest.join(' '), delayMs: n };
  return { text: 'porter-sim: usage: porter-sim echo <n> | unicode <n> | delay <ms> [text]' };
}

/**
 * Console commands that only read (player lists) on more than one simulator: flagged in `executed`
 * so exactly-once checks can skip them. A game's own go with its console (rcon-consoles.ts).
 */
export function isQueryCommand(command: string): boolean {
  const root =
    command
      .trim()
      .replace(/^\//, '')
      .split(/\s+/)[0]
      ?.toLowerCase()
      .replace(/^minecraft:/, '') ?? '';
  return ['list', 'status', 'listplayers', 'players', 'playerlist', 'info'].includes(root);
}
