import { GAME_NAMES } from '../games/registry.js';
import { z } from 'zod';
import { port, positiveMs, problemsOf } from '../protocols/transport-descriptor.js';
import { executorSchema, TRANSPORTS, type ResolvedExecutor } from '../protocols/transport-registry.js';
import { ruleProblem } from '../policy/rule-syntax.js';
import { baseUrlProblems } from './base-url.js';
import { LISTEN_FORM, parseListenAddress } from './listen-address.js';
import { messageOf } from '../errors.js';

/**
 * The configuration file's shape (docs/design.md#configuration). Every object is strict so a typo is an error that
 * names the key, never a silently ignored setting. Defaults live here and nowhere else, but for each
 * transport's `executor` section, which its descriptor holds (src/protocols/<name>/descriptor.ts).
 *
 * Everything `porter run` would refuse at start is refused here, with the same functions the
 * run-time parts use (regex rules, listen address, base URL, WebRCON host), so `porter check`
 * and `porter run` never disagree about a config.
 */

export const presetNames = GAME_NAMES;

/** "default minecraft for rcon, …": transports with a console first, a script's fallback last. */
const defaultPresets = [...TRANSPORTS]
  .sort((a, b) => Number('console' in b) - Number('console' in a))
  .map(
    (transport) => `${transport.defaultPreset} for ${transport.type}${'defaultPresetNote' in transport ? transport.defaultPresetNote : ''}`,
  )
  .join(', ');

/**
 * players.joinGraceMs's bound: far beyond any game's loading time (docs/games.md#join-grace), so a
 * larger value is a mistake, most likely seconds multiplied by 1000 twice.
 */
const MAX_JOIN_GRACE_MS = 600_000;

export const playersSchema = z
  .strictObject({
    preset: z.enum(presetNames).optional().describe(`Game preset; default ${defaultPresets}.`),
    command: z.string().min(1).optional().describe('custom preset: console command that lists players.'),
    pattern: z.string().min(1).optional().describe('custom preset: regular expression with a named group "id", applied to every line.'),
    exec: z.array(z.string().min(1)).min(1).optional().describe('Script that prints one identifier per line (overrides preset).'),
    refreshMs: positiveMs(2000).describe('How long a player list is reused before it is read again.'),
    joinGraceMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_JOIN_GRACE_MS, {
        message: `expected at most ${MAX_JOIN_GRACE_MS} (10 minutes): a longer grace keeps a buyer who just joined waiting that long for an online-only purchase; use 0 to turn the grace off`,
      })
      .default(0)
      .describe(
        'How long a newly seen player is left out of the online list sent with a pull, so online-only commands wait until they finished spawning. 0: off.',
      ),
  })
  .superRefine((value, ctx) => {
    if (value.preset === 'custom' && (!value.command || !value.pattern)) {
      ctx.addIssue({ code: 'custom', message: 'preset "custom" needs both "command" and "pattern"' });
    }
    if (value.pattern) {
      try {
        const re = new RegExp(value.pattern);
        if (!re.source.includes('(?<id>')) {
          ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'pattern needs a named group (?<id>...)' });
        }
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: `not a valid regular expression: ${messageOf(error)}` });
      }
    }
  });

const regexString = z
  .string()
  .min(1)
  .refine(
    (s) => {
      try {
        new RegExp(s);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'not a valid regular expression' },
  );

const failurePatternsSchema = z
  .union([z.array(regexString), z.strictObject({ mode: z.enum(['add', 'replace']).default('add'), patterns: z.array(regexString) })])
  .describe("Regular expressions (case-insensitive) that mark a game answer as failed. An array adds to the preset's.");

const policyRule = z
  .string()
  .min(1, { abort: true })
  .superRefine(
    problemsOf((rule: string) => {
      const problem = ruleProblem(rule);
      return problem === undefined ? [] : [problem];
    }),
  );

const commandPolicySchema = z.strictObject({
  allow: z
    .array(policyRule)
    .optional()
    .describe('When given, only commands matching one entry run. Entry: a root command ("give") or /regex/.'),
  deny: z.array(policyRule).optional().describe('Commands matching any entry are failed unsent. Deny wins over allow.'),
  defaultDeny: z.boolean().default(true).describe("Also apply the preset's default deny list."),
});

const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const serverSchema = z.strictObject({
  id: z.string().regex(uuid, 'expected the server UUID from the store dashboard (8-4-4-4-12 hex digits)'),
  name: z.string().min(1).optional().describe('Label for logs and metrics.'),
  store: z.string().min(1).optional().describe('A key of "stores": the store this server sells for. Default: the store of "api".'),
  executor: executorSchema,
  players: playersSchema.optional(),
  failurePatterns: failurePatternsSchema.optional(),
  commandPolicy: commandPolicySchema.optional(),
  notSentRetryMs: positiveMs(20000).describe('How long a command that never reached the game server is retried before it is failed.'),
});

const budgetSchema = z
  .strictObject({
    perWindow: z.number().int().positive().default(120),
    windowMs: positiveMs(60000),
    share: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe('Fraction of the per-window budget porter may spend; leave room for an official connector.'),
  })
  .superRefine(
    problemsOf(({ perWindow, share }: { perWindow: number; share: number }) =>
      Math.floor(perWindow * share) < 1
        ? [
            `perWindow (${perWindow}) × share (${share}) allows no call at all; raise share or perWindow so that their product is at least 1`,
          ]
        : [],
    ),
  );

const routeTemplate = z.string().startsWith('/', 'expected a path starting with "/"');
const pullTemplate = routeTemplate.superRefine(
  problemsOf((template: string) => (template.includes('{id}') ? ['the pull route has no command id yet: remove {id} from it'] : [])),
);

export const apiSchema = z.strictObject({
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as https://seller.example.com', abort: true })
    .superRefine(problemsOf(baseUrlProblems)),
  token: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
  webhookSecret: z
    .string()
    .min(1)
    .optional()
    .describe("The store's webhook signing secret (whsec_… or raw text). Prefer webhookSecretFile or PORTER_WEBHOOK_SECRET."),
  webhookSecretFile: z
    .string()
    .min(1)
    .optional()
    .describe('File whose content (trimmed) is the webhook secret; relative to the config file.'),
  timeoutMs: positiveMs(10000),
  budget: budgetSchema.default({ perWindow: 120, windowMs: 60000, share: 1 }),
  routes: z
    .strictObject({
      pull: pullTemplate.default('/v1/seller/servers/{serverId}/commands/pull'),
      done: routeTemplate.default('/v1/seller/servers/{serverId}/commands/{id}/done'),
      fail: routeTemplate.default('/v1/seller/servers/{serverId}/commands/{id}/fail'),
    })
    .default({
      pull: '/v1/seller/servers/{serverId}/commands/pull',
      done: '/v1/seller/servers/{serverId}/commands/{id}/done',
      fail: '/v1/seller/servers/{serverId}/commands/{id}/fail',
    }),
});

/** A store's name: a label in logs, /healthz, metrics and webhook paths, so plain and short. */
const STORE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** The name /healthz, metrics and logs give the store of `api`; no key of `stores` may take it. */
export const DEFAULT_STORE_LABEL = 'default';

/** One more store in the same process (docs/design.md#many-stores): what `api` says for the default store, plus its webhook secret. */
const storeSchema = z.strictObject({
  ...apiSchema.shape,
  webhookSecret: z.string().min(1).optional().describe("The store's webhook signing secret. Prefer webhookSecretFile."),
  webhookSecretFile: z.string().min(1).optional().describe('File whose content (trimmed) is the webhook signing secret.'),
});

const storeName = z.string().superRefine(
  problemsOf((name: string) => {
    if (!STORE_NAME.test(name)) {
      return ['a store name is 1 to 63 lowercase letters, digits and "-", starting with a letter or digit (such as "eu-network")'];
    }
    if (name === DEFAULT_STORE_LABEL) return [`"${DEFAULT_STORE_LABEL}" is the name porter gives the store of "api": choose another name`];
    return [];
  }),
);

const listenAddress = z
  .string()
  .regex(/^[^:[\]]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/, { error: `expected ${LISTEN_FORM}`, abort: true })
  .superRefine(problemsOf((listen: string) => (parseListenAddress(listen) ? [] : [`expected ${LISTEN_FORM}`])));

/** docs/design.md#webhook-wake-ups: the store's events wake the servers to pull now. */
const webhookSchema = z.strictObject({
  listen: listenAddress.describe(
    'Address of the webhook listener (POST /webhook, /webhook/<store>); usually 127.0.0.1:PORT behind a reverse proxy with TLS.',
  ),
  tls: z
    .strictObject({
      certFile: z.string().min(1).describe('PEM certificate chain; read again on SIGHUP.'),
      keyFile: z.string().min(1).describe('PEM private key; read again on SIGHUP.'),
    })
    .optional()
    .describe('Serve HTTPS itself instead of behind a reverse proxy.'),
  toleranceS: z
    .number()
    .int()
    .positive()
    .default(300)
    .describe("How far an event's timestamp may be from now, past or future, in seconds; also how long event ids are remembered."),
  maxBodyBytes: z.number().int().min(1024).default(65536).describe('Largest body accepted; a larger one is answered 413.'),
  scheme: z
    .union([
      z.literal('standard'),
      z.strictObject({
        header: z
          .string()
          .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'expected an HTTP header name')
          .describe('Header holding the signature.'),
        encoding: z.enum(['hex', 'base64']).describe('How the HMAC-SHA256 of the raw body is written.'),
        prefix: z.string().optional().describe('Text before the signature, such as "sha256=".'),
      }),
    ])
    .default('standard')
    .describe('"standard" (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature) or one header with an HMAC of the body.'),
});

/** The delivery history's file bound: 4 MiB is ~15,000 typical deliveries per file; a file must hold a few of the largest records (~10 KB). */
const HISTORY_DEFAULT_BYTES = 4 * 1024 * 1024;
const HISTORY_MIN_BYTES = 64 * 1024;

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    api: apiSchema,
    stores: z.record(storeName, storeSchema).optional().describe('More stores, by name; servers name theirs in servers[].store.'),
    // `when`: duplicates are reported even while another key of a server is wrong, so one run shows every problem
    // (except behind a fractional number, on which zod stops checking the list).
    servers: z
      .array(serverSchema)
      .min(1, 'expected at least one server')
      .superRefine(duplicateServerIds, { when: () => true }),
    poll: z
      .strictObject({
        idleMs: positiveMs(1000).describe(
          'The longest pause between idle pulls; porter may poll faster, down to idleMs/4, when the pull budget has room.',
        ),
      })
      .default({ idleMs: 1000 }),
    stateDir: z.string().min(1).default('./state'),
    log: z
      .strictObject({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        pretty: z.boolean().optional().describe('Human-readable logs; default: on when stdout is a TTY.'),
      })
      .default({ level: 'info' }),
    shutdown: z.strictObject({ drainMs: positiveMs(10000) }).default({ drainMs: 10000 }),
    agones: z
      .strictObject({
        sdkHttpPort: port.describe(
          "The Agones SDK's HTTP gateway port on localhost; Agones sets AGONES_SDK_HTTP_PORT in a GameServer's containers, which porter uses when this is not given.",
        ),
      })
      .optional()
      .describe('Inside an Agones GameServer: claim only while it is Ready, Reserved or Allocated, and drain on Shutdown.'),
    health: z
      .strictObject({
        listen: listenAddress.describe(
          'Address of the /healthz and /metrics endpoint; keep it on loopback unless a scraper elsewhere needs it.',
        ),
      })
      .optional(),
    webhook: webhookSchema.optional(),
    history: z
      .strictObject({
        maxBytes: z
          .number()
          .int()
          .min(HISTORY_MIN_BYTES)
          .default(HISTORY_DEFAULT_BYTES)
          .describe('Bound of history.jsonl in stateDir; it then moves to history.1.jsonl, so both together hold at most twice this.'),
      })
      .default({ maxBytes: HISTORY_DEFAULT_BYTES }),
  })
  .superRefine(unknownStores, { when: () => true });

/** A server naming a store that `stores` does not have would pull with no token at all. */
function unknownStores(config: { readonly stores?: unknown; readonly servers?: unknown } | null, ctx: z.RefinementCtx): void {
  if (!config || typeof config !== 'object' || !Array.isArray(config.servers)) return;
  const stores = config.stores && typeof config.stores === 'object' ? Object.keys(config.stores) : [];
  config.servers.forEach((server: unknown, index) => {
    const store = server && typeof server === 'object' ? (server as { store?: unknown }).store : undefined;
    if (typeof store !== 'string' || store === '' || stores.includes(store)) return;
    // A value that is no store name at all is not echoed: it may be a token pasted into the wrong key.
    const named = STORE_NAME.test(store) ? `no store "${store}"` : 'not a store name';
    ctx.addIssue({
      code: 'custom',
      path: ['servers', index, 'store'],
      message:
        stores.length === 0
          ? `${named}: the config has no "stores"; add the store under "stores" (with its baseUrl and tokenFile) or remove servers[${index}].store to use the store of "api"`
          : `${named} in "stores" (known: ${stores.map((name) => `"${name}"`).join(', ')}); fix the name or add the store`,
    });
  });
}

/** Two entries with one id would run two delivery loops that claim from the same queue and budget. */
function duplicateServerIds(servers: readonly unknown[], ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  servers.forEach((server, index) => {
    const id = server && typeof server === 'object' ? (server as { id?: unknown }).id : undefined;
    if (typeof id !== 'string') return;
    const first = seen.get(id.toLowerCase());
    if (first === undefined) seen.set(id.toLowerCase(), index);
    else
      ctx.addIssue({
        code: 'custom',
        path: [index, 'id'],
        message: `the same server id as servers[${first}].id; each server may appear only once`,
      });
  });
}

/** The file as written. */
/** Parsed with defaults; secrets not resolved yet. */
export type ParsedConfig = z.output<typeof configSchema>;
export type ServerConfig = z.output<typeof serverSchema>;
export type PlayersConfig = z.output<typeof playersSchema>;

/**
 * After loading: paths absolute, secrets resolved from file/env/credentials into plain fields.
 * `api.token` and every rcon/webrcon/telnet/tshock/battleye `password` are guaranteed present.
 */
/** A store's API settings with its token resolved: what `api` becomes after loading, for the default store and every other. */
export type StoreApi = Omit<ParsedConfig['api'], 'token' | 'tokenFile'> & {
  readonly token: string;
  /** The file or systemd credential the token was read from: read again when the API answers 401 (a rotated token). */
  readonly tokenPath?: string;
};

/** One entry of `stores` after loading: its token (and webhook secret, when set) resolved. */
export type ResolvedStore = StoreApi & { readonly webhookSecret?: string };

export type Config = Omit<ParsedConfig, 'api' | 'servers' | 'stores'> & {
  readonly configPath: string;
  /** Things that work but are probably not what the user meant (e.g. a token without `gci_`); the CLI logs them at warn. */
  readonly warnings?: readonly string[];
  readonly api: Omit<ParsedConfig['api'], 'token' | 'tokenFile' | 'webhookSecret' | 'webhookSecretFile'> & {
    readonly token: string;
    /** The file or systemd credential the token was read from: read again when the API answers 401 (a rotated token). */
    readonly tokenPath?: string;
    /** The default store's webhook signing secret, as written (whsec_… or raw text); present when `webhook` is set. */
    readonly webhookSecret?: string;
  };
  readonly servers: ResolvedServer[];
  /** The stores besides the default one, by name; absent or empty when the config names none. */
  readonly stores?: Readonly<Record<string, ResolvedStore>>;
  /** Set when porter runs one shard of the configuration (--shard): `servers` holds only that shard's. */
  readonly shard?: { readonly index: number; readonly count: number; readonly serversConfigured: number };
};

export type { ResolvedExecutor };

export type ResolvedServer = Omit<ServerConfig, 'executor' | 'players'> & {
  readonly executor: ResolvedExecutor;
  /** Preset resolved from the executor type when not given. */
  readonly players: Omit<PlayersConfig, 'preset'> & { preset: (typeof presetNames)[number] };
};
