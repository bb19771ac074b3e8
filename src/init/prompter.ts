import { ConfigError, PorterError } from '../errors.js';

/**
 * How `porter init` asks: on a terminal a person answers; without one every answer must come
 * from a flag or an environment variable, and a missing one ends init with exit 78 naming both.
 */
export interface Question {
  readonly message: string;
  /** The flag that answers it without a terminal, e.g. "--server-id". */
  readonly flag: string;
  /** Its environment variable, e.g. "PORTER_SERVER_ID". */
  readonly env?: string;
}

export interface Choice<T> {
  readonly value: T;
  readonly label: string;
  readonly hint?: string;
}

export interface Prompter {
  readonly interactive: boolean;
  text(question: Question & { readonly initial?: string; readonly validate?: (value: string) => string | undefined }): Promise<string>;
  /** Typed without echo. */
  secret(question: Question): Promise<string>;
  select<T>(question: Question & { readonly choices: readonly Choice<T>[] }): Promise<T>;
  /** Without a terminal: `answer` (what the flags said). */
  confirm(question: { readonly message: string; readonly answer: boolean }): Promise<boolean>;
  /** A line of progress: `ok` ✔, `warn` ▲, `error` ✖, `info` plain. */
  say(kind: 'ok' | 'warn' | 'error' | 'info', text: string): void;
}

export class MissingAnswerError extends ConfigError {
  override readonly code = 'E_INIT_MISSING_ANSWER';
  constructor(question: Question) {
    const env = question.env ? ` (or set ${question.env})` : '';
    super(`porter init has no terminal to ask "${question.message}" on: pass ${question.flag}${env}`);
  }
}

/**
 * Ctrl-C or Escape: init stops, exit 130 as for any program a SIGINT ends. Its configuration is
 * never half written (that happens last, at once); `changed` says what init already did to the
 * game's own files, and where their backups are.
 */
export class InitCancelledError extends PorterError {
  override readonly code = 'E_INIT_CANCELLED';
  override readonly exitCode = 130;
  constructor(changed?: string) {
    super(
      changed === undefined
        ? 'porter init cancelled: nothing was written'
        : `porter init cancelled: no porter configuration was written, but ${changed}`,
    );
  }
}

const MARKS = { ok: '✔', warn: '▲', error: '✖', info: ' ' } as const;

/** Removes every secret init holds from a line before it is shown. */
type Scrub = (text: string) => string;

/** For scripts and CI: no question is asked, every line goes to `out`. */
export function flagsOnlyPrompter(out: NodeJS.WritableStream, scrub: Scrub): Prompter {
  const missing = (question: Question) => Promise.reject(new MissingAnswerError(question));
  return {
    interactive: false,
    text: missing,
    secret: missing,
    select: missing,
    confirm: ({ answer }) => Promise.resolve(answer),
    say: (kind, text) => void out.write(`${MARKS[kind]} ${scrub(text)}\n`),
  };
}

/** A person at a terminal, asked with @clack/prompts. */
export async function terminalPrompter(scrub: Scrub): Promise<Prompter> {
  const clack = await import('@clack/prompts');
  function answered<T>(value: T | symbol): Exclude<T, symbol> {
    if (clack.isCancel(value) || typeof value === 'symbol') throw new InitCancelledError();
    return value as Exclude<T, symbol>;
  }
  return {
    interactive: true,
    text: async ({ message, initial, validate }) =>
      answered(
        await clack.text({
          message,
          ...(initial !== undefined && { initialValue: initial }),
          ...(validate && { validate: (value: string | undefined) => validate(value ?? '') }),
        }),
      ).trim(),
    secret: async ({ message }) =>
      answered(await clack.password({ message, validate: (value) => (value?.trim() ? undefined : 'type or paste it, then Enter') })).trim(),
    select: async <T>({ message, choices }: Question & { readonly choices: readonly Choice<T>[] }): Promise<T> => {
      // clack's options are typed per kind of value; an index works for any T.
      const index = answered(
        await clack.select<number>({
          message,
          options: choices.map((choice, i) => ({ value: i, label: choice.label, ...(choice.hint && { hint: choice.hint }) })),
        }),
      );
      return choices[index]!.value;
    },
    confirm: async ({ message, answer }) => answered(await clack.confirm({ message, initialValue: answer })),
    say: (kind, raw) => {
      const text = scrub(raw);
      if (kind === 'ok') clack.log.success(text);
      else if (kind === 'warn') clack.log.warn(text);
      else if (kind === 'error') clack.log.error(text);
      else clack.log.info(text);
    },
  };
}
