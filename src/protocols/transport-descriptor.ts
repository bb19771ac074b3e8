import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { GameName } from '../games/registry.js';
import { urlHost } from '../url-host.js';

/**
 * What porter needs to know of one transport to read a config, written once in the transport's
 * own folder (`src/protocols/<name>/descriptor.ts`) and listed in `transport-registry.ts`: its
 * executor's schema, defaults, where its secret comes from, what its console is called, and how
 * the parsed section becomes what the executor takes. The config union, the transport names, the
 * console names and init's executor kinds are derived from that list. The executor itself is not
 * here: `executor-registry.ts` imports it when a server of the type is built.
 */
export interface TransportDescriptor {
  /** The config's `executor.type`. */
  readonly type: string;
  /** The `executor` section of a server: a strict object with `type` as its literal. */
  readonly schema: z.ZodObject;
  /** The game a server most likely runs when `players.preset` is not given: what the transport is mostly used for. */
  readonly defaultPreset: GameName;
  /** Said after "<preset> for <type>" in the preset's description, when the default holds only in part. */
  readonly defaultPresetNote?: string;
  /** Where the password comes from besides the config file; absent for a transport with no secret. */
  readonly secret?: SecretLookup;
  /** The game server's remote console, for messages, `porter init` and `porter rcon`; absent when there is none (a script). */
  readonly console?: ConsoleDescriptor;
  /** Descriptors one server's executor holds open while it runs. */
  readonly openFiles: number;
  /** The parsed section, paths resolved and the secret filled in: what the executor is built from. */
  resolve(parsed: never, context: ResolveContext): { readonly type: string };
}

/** What a transport's executor is built from: its section as `resolve` returns it. */
export type ResolvedOf<D extends TransportDescriptor> = ReturnType<D['resolve']>;

/** Keeps the literal types of a descriptor (its `type`, its schema's shape) for what is derived from it. */
export function defineTransport<const D extends TransportDescriptor>(descriptor: D): D {
  return descriptor;
}

/**
 * A console that logs in with the game server's password and holds one connection: everything but
 * its type, schema, usual game and console name is the same for all of them (BattlEye, telnet,
 * TShock, WebRCON), and its resolved section is the parsed one with the password filled in.
 */
export function passwordTransport<const T extends string, const S extends z.ZodObject<PasswordShape>>(
  type: T,
  schema: S,
  defaultPreset: GameName,
  console: ConsoleDescriptor,
) {
  return defineTransport({
    type,
    schema,
    defaultPreset,
    secret: GAME_PASSWORD,
    console,
    openFiles: 1,
    resolve: (parsed: z.output<S>, { password }: ResolveContext) => withPassword(parsed, password),
  });
}

/** What a password console's section has besides its own fields. */
type PasswordShape = { type: z.ZodLiteral<string> } & typeof secretSources;

interface SecretLookup {
  /** The environment variable that overrides the config file's value. */
  readonly envName: string;
  /** The systemd credential read when the config file names none. */
  readonly credentialName: string;
}

interface ConsoleDescriptor {
  /** What the console is called in messages: "the game server does not open RCON". */
  readonly name: string;
  /** What `porter init` asks for when it has to ask for the secret. */
  readonly secretLabel: string;
}

export interface ResolveContext {
  /** The server's `players.preset`, given or defaulted. */
  readonly preset: GameName;
  /** The config file's folder, against which relative paths resolve. */
  readonly baseDir: string;
  /** The resolved secret; undefined for a transport without one. */
  readonly password: string | undefined;
}

/** Every console's password is one secret to the operator: one variable, one credential. */
export const GAME_PASSWORD: SecretLookup = { envName: 'PORTER_RCON_PASSWORD', credentialName: 'porter-rcon-password' };

export const port = z.number().int().min(1).max(65535);

/** The game server's address, for a console reached by its host name or IP address. */
export const gameHost = z.string().min(1).default('127.0.0.1').describe('Address of the game server.');

export const positiveMs = (fallback: number) => z.number().int().positive().default(fallback);

export const secretSources = {
  password: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Password of the game server's console. Prefer passwordFile, PORTER_RCON_PASSWORD or the systemd credential porter-rcon-password.",
    ),
  passwordFile: z.string().min(1).optional().describe('File whose content (trimmed) is the password; relative to the config file.'),
};

/** Adds the problems `describe` finds as issues at the value's own key path. */
export function problemsOf<T>(describe: (value: T) => readonly string[]) {
  return (value: T, ctx: z.RefinementCtx) => {
    for (const message of describe(value)) ctx.addIssue({ code: 'custom', message });
  };
}

/** A host an executor puts in a URL (ws://, http://): refused here when the URL could not be built. */
export const urlGameHost = z
  .string()
  .min(1, { abort: true })
  .superRefine(
    problemsOf((host: string) => {
      try {
        // The host as the executor puts it in its URL.
        new URL(`ws://${urlHost(host)}:1/`);
        return [];
      } catch {
        return ['not a valid host name or IP address'];
      }
    }),
  )
  .default('127.0.0.1')
  .describe('Address of the game server.');

/** The section without the config file's secret keys, with the resolved password in their place. */
export function withPassword<T extends { readonly password?: string | undefined; readonly passwordFile?: string | undefined }>(
  parsed: T,
  password: string | undefined,
): Omit<T, 'password' | 'passwordFile'> & { password: string } {
  const { password: _inline, passwordFile: _file, ...rest } = parsed;
  return { ...rest, password: password ?? '' };
}

/**
 * `exec[0]` with a slash is a path and is resolved against the config file's folder; a bare name
 * is left for the PATH lookup, as a shell would do.
 */
export function resolveExecutable(exec: readonly string[], baseDir: string): string[] {
  const [program, ...args] = exec;
  if (program === undefined) return [];
  const resolved = program.includes('/') && !isAbsolute(program) ? resolve(baseDir, program) : program;
  return [resolved, ...args];
}
