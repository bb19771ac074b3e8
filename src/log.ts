import { isatty } from 'node:tty';
import { pino } from 'pino';
import type { DestinationStream, LevelWithSilentOrString, Logger } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import { REDACTED, scrubbedOrWithheld, WITHHELD } from './scrub.js';
import type { SecretBook } from './secret-book.js';

export { MIN_SCRUB_LENGTH, REDACTED, scrubSecrets } from './scrub.js';

/**
 * Secrets are kept out of the output twice over: pino `redact` censors the keys that hold them
 * (cheap, structural), and every serialized line is scrubbed of each registered secret value
 * before it is written, which catches a secret inside an error message, a cause, a stack or any
 * nested object whatever its key. The scrub runs before pretty-printing, so both formats are clean.
 */

const REDACT_PATHS = [
  'token',
  'apiToken',
  'password',
  'authorization',
  'Authorization',
  '*.token',
  '*.apiToken',
  '*.password',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'req.headers.authorization',
  'config.api.token',
  'api.token',
  'executor.password',
  '*.executor.password',
];

interface LoggerOptions {
  readonly level: LevelWithSilentOrString;
  /** Human-readable output; when undefined, on when the destination is a TTY. */
  readonly pretty?: boolean;
  /** The secrets to scrub from every line; read at every line, so secrets the book learns later are covered. */
  readonly secrets?: SecretBook;
  /** A file descriptor (default 1, stdout) or anything with write(line), e.g. a stream that captures output in tests. */
  readonly destination?: Sink | number;
  /** Where `NO_COLOR` is read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

interface Sink {
  write(line: string): unknown;
  flush?(cb: (error?: Error) => void): void;
}

function isTty(destination: Sink | number): boolean {
  return typeof destination === 'number' ? isatty(destination) : (destination as { isTTY?: boolean }).isTTY === true;
}

/**
 * Colour only on a TTY, and not when `NO_COLOR` is present and not empty (https://no-color.org),
 * whatever the terminal: pino-pretty is told outright, so its own reading of the environment never runs.
 */
function colourFor(destination: Sink | number, env: Readonly<Record<string, string | undefined>>): boolean {
  return isTty(destination) && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

function openSink(destination: Sink | number): Sink {
  if (typeof destination !== 'number') return destination;
  // Synchronous writes: a line is out before the call returns, so nothing is lost on exit or crash,
  // and at porter's log volume the cost is nil.
  const boom = pino.destination({ dest: destination, sync: true });
  // A closed stdout (EPIPE) must not crash a daemon that is in the middle of a delivery.
  boom.on('error', () => {});
  return boom;
}

/** The fields a pretty line says in words rather than as JSON: who, what, which, how it ended, how long, why. */
const FOLDED = ['server', 'command', 'id', 'outcome', 'ms', 'reason'] as const;

/**
 * "itest: delivered "give Steve diamond 1" (id 42, done, 12 ms)": the delivery loop's one line per
 * command as a person reads it on a terminal. The command (buyer text) is always JSON-quoted, and
 * any text with a control character too, so nothing can move the cursor or paint the screen.
 */
function foldedMessage(log: Record<string, unknown>, messageKey: string): string {
  // A string with a control character is shown JSON-quoted, escapes visible, like any field.
  const text = (value: unknown) =>
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    typeof value === 'string' && !/[\u0000-\u001f\u007f-\u009f]/.test(value) ? value : JSON.stringify(value);
  const { server, command, id, outcome, ms, reason } = log;
  const details = [
    id === undefined ? undefined : `id ${text(id)}`,
    outcome === undefined ? undefined : text(outcome),
    typeof ms === 'number' ? `${ms} ms` : ms === undefined ? undefined : `${text(ms)} ms`,
  ].filter((part) => part !== undefined);
  return [
    server === undefined ? '' : `${text(server)}: `,
    text(log[messageKey] ?? ''),
    command === undefined ? '' : ` ${JSON.stringify(command)}`,
    details.length > 0 ? ` (${details.join(', ')})` : '',
    reason === undefined ? '' : `: ${text(reason)}`,
  ].join('');
}

/** pino-pretty's formatter called inline: no transport, no worker thread, no reordering. */
async function prettySink(sink: Sink, colorize: boolean): Promise<Sink> {
  // Imported only for a TTY: a daemon under systemd or in a container never loads it (the bundle
  // keeps it a chunk of its own; a single executable carries it inside).
  // A CommonJS module: its exports object is the default export in Node and in the bundle alike.
  const { prettyFactory } = (await import('pino-pretty')).default as unknown as {
    prettyFactory: (options: PrettyOptions) => (line: string) => string;
  };
  const format = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    // The event name is for machines (docs/operations.md#log-events); a person reads the message.
    ignore: `pid,hostname,event,${FOLDED.join(',')}`,
    errorLikeObjectKeys: ['err', 'error'],
    // One line per event, so a delivery reads as one line; other fields follow it as JSON.
    singleLine: true,
    messageFormat: foldedMessage,
  });
  return {
    write: (line: string) => sink.write(format(line)),
    flush: (cb) => (sink.flush ? sink.flush(cb) : cb()),
  };
}

/**
 * A serialized line scrubbed of every secret; should the scrubber throw, a line that says one was
 * withheld, valid JSON like every line, without a word of the original or of the error.
 */
function scrubbedLine(scrub: (text: string) => string, line: string): string {
  const scrubbed = scrubbedOrWithheld(scrub, line);
  if (scrubbed !== WITHHELD) return scrubbed;
  return `${JSON.stringify({ level: 'error', time: new Date().toISOString(), event: 'log.withheld', msg: `a log line was withheld: ${WITHHELD}` })}\n`;
}

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const destination = options.destination ?? 1;
  const pretty = options.pretty ?? isTty(destination);
  const base = openSink(destination);
  const sink = pretty ? await prettySink(base, colourFor(destination, options.env ?? process.env)) : base;
  const secrets = options.secrets;
  const scrub = secrets === undefined ? (line: string) => line : (line: string) => scrubbedLine(secrets.scrub, line);

  return pino(
    {
      level: options.level,
      // systemd's journal and container runtimes already record pid and host.
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err, cause: pino.stdSerializers.err },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      hooks: { streamWrite: scrub },
    },
    sink as DestinationStream,
  );
}

/** Resolves once everything logged so far is written; never rejects, since it runs on the way out. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}
