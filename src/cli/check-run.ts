import { serverLabel } from '../config/server-label.js';
import { readJournal, type JournalEntry } from '../delivery/journal/journal.js';
import { prepareStateDir } from '../delivery/state/state-dir.js';
import { unreportable, type Unreportable } from '../daemon/leftovers.js';
import { createApiClient } from '../api/wire/client.js';
import { checkToken as proveToken } from '../api/answers/token-check.js';
import { systemClock } from '../clock.js';
import type { Config, ResolvedServer, StoreApi } from '../config/schema.js';
import { DEFAULT_STORE_LABEL } from '../config/schema.js';
import { createExecutor } from '../protocols/executor-registry.js';
import { exitCodeOf, messageOf } from '../errors.js';
import type { SecretBook } from '../secret-book.js';
import { playerReader, playerSourceLabel } from '../players/reader.js';
import { normalizeIdentifiers } from '../players/normalize.js';
import { onlineText } from '../players/online-text.js';
import { gameFor } from '../games/registry.js';
import { commandLogger, loadShardFor } from './common.js';
import { shardSummary, type Shard } from '../config/shard.js';
import { openFileLimit } from '../net/open-files.js';
import { openFilesWarning } from '../daemon/open-files-need.js';
import { webhookKey } from '../config/webhook-secret.js';

/** One line of the report: what was checked, and whether it passed. */
interface CheckLine {
  readonly ok: boolean;
  readonly text: string;
  /** 78 when the failure is a configuration or credentials error. */
  readonly exitCode?: number;
}

/** `porter check`: each line is printed as soon as it is known; the exit code sums them up. */
export async function runChecks(configOption: string | undefined, shard: Shard | undefined, secrets: SecretBook): Promise<number> {
  process.stdout.write(`porter on Node.js ${process.version} (${process.platform}/${process.arch})\n`);
  const lines: CheckLine[] = [];
  // Warnings too: what porter prints goes through the scrubber, whatever it is meant to hold.
  const say = (text: string) => process.stdout.write(`${secrets.scrub(text)}\n`);
  const print = (line: CheckLine) => {
    lines.push(line);
    say(`${line.ok ? '✔' : '✖'} ${line.text}`);
  };
  let config: Config;
  try {
    config = await loadShardFor(configOption, shard, secrets);
  } catch (error) {
    print({ ok: false, text: `config: ${messageOf(error)}`, exitCode: exitCodeOf(error) });
    return exitCodeOf(error);
  }
  const configured = config.shard?.serversConfigured ?? config.servers.length;
  print({ ok: true, text: `config: ${config.configPath} (${configured} server${configured === 1 ? '' : 's'})` });
  for (const warning of config.warnings ?? []) say(`! ${warning}`);
  const sharded = shardSummary(config);
  if (sharded !== undefined) print({ ok: true, text: sharded });
  const openFiles = openFilesWarning(config, openFileLimit());
  if (openFiles) say(`! ${openFiles}`);
  const stateDir = checkStateDir(config.stateDir);
  print(stateDir);
  const backlog = stateDir.ok ? journalBacklog(config.stateDir) : [];
  if (!Array.isArray(backlog)) print(backlog);
  else if (backlog.length > 0) {
    const n = backlog.length;
    say(
      `! the journal holds ${n} command${n === 1 ? '' : 's'} still owed a report: porter reports ${n === 1 ? 'it' : 'them'} first when it starts`,
    );
    const stuck = unreportable(backlog, config, new Set(config.servers.map((server) => server.id.toLowerCase())));
    if (stuck.length > 0) say(`! ${unreportableText(stuck)}`);
  }
  for (const server of config.servers) {
    for (const line of await checkServer(server, config, secrets)) print(line);
  }
  for (const line of await checkTokens(config, secrets)) print(line);
  if (config.webhook) for (const line of await checkWebhook(config, secrets)) print(line);
  const failed = lines.filter((line) => !line.ok);
  if (failed.length === 0) return 0;
  return failed.some((line) => line.exitCode === 78) ? 78 : 1;
}

/** What no configured store can report, and what to do about it. */
function unreportableText(stuck: readonly Unreportable[]): string {
  const stores = [...new Set(stuck.map((c) => (c.store === undefined ? 'not recorded' : `"${c.store}"`)))];
  const commands = stuck.map((c) => `${c.serverId}/${c.id}`).join(', ');
  return `${stuck.length} of them ${stuck.length === 1 ? 'was' : 'were'} claimed for a store no longer configured (${stores.join(', ')}): ${commands}. They stay PROCESSING on the platform: add the store back to stores (its servers need not be) and porter reports them, or settle them in the store dashboard`;
}

/** Unreported entries left by a previous run; read-only, so a running daemon is not disturbed. */
function journalBacklog(stateDir: string): JournalEntry[] | CheckLine {
  try {
    return readJournal(stateDir);
  } catch (error) {
    return { ok: false, text: `journal: ${messageOf(error)}` };
  }
}

/** The same check `porter run` makes before it opens the journal, so both agree. */
function checkStateDir(stateDir: string): CheckLine {
  try {
    prepareStateDir(stateDir);
    return { ok: true, text: `state directory writable: ${stateDir}` };
  } catch (error) {
    return { ok: false, text: messageOf(error), exitCode: exitCodeOf(error) };
  }
}

/** `porter check`'s word on players.joinGraceMs, when set: why a buyer who just joined may wait. */
function graceText(graceMs: number): string {
  return graceMs > 0 ? `; join grace ${graceMs} ms (a player is sent with pulls once listed that long)` : '';
}

async function checkServer(server: ResolvedServer, config: Config, secrets: SecretBook): Promise<CheckLine[]> {
  const label = `server ${serverLabel(server)}`;
  const lines: CheckLine[] = [];
  const logger = await commandLogger(config, secrets, { warnings: false });
  const preset = gameFor(server.players);
  const executor = await createExecutor(server.executor, { logger, clock: systemClock, passwordHint: preset.rconPassword });
  try {
    await executor.connect(AbortSignal.timeout(15_000));
    lines.push({ ok: true, text: `${label}: ${executor.connectedText}` });
  } catch (error) {
    lines.push({ ok: false, text: `${label}: ${messageOf(error)}`, exitCode: exitCodeOf(error) });
    await executor.close();
    return lines;
  }
  try {
    const raw = await playerReader(server.players, preset, executor, logger)(AbortSignal.timeout(15_000));
    const { ids } = normalizeIdentifiers(raw);
    const source = playerSourceLabel(server.players);
    lines.push({
      ok: true,
      text: `${label}: players read (${source}, identifier: ${preset.identifier}): ${onlineText(raw, ids, server.players.exec !== undefined)}${graceText(server.players.joinGraceMs)}`,
    });
  } catch (error) {
    lines.push({ ok: false, text: `${label}: could not read the player list: ${messageOf(error)}` });
  } finally {
    await executor.close();
  }
  return lines;
}

/**
 * One line per distinct token (and API address): stores that share a token are proven by one
 * call, named together. With `stores` configured, every line names its stores.
 */
async function checkTokens(config: Config, secrets: SecretBook): Promise<CheckLine[]> {
  const named = Object.keys(config.stores ?? {}).length > 0;
  const groups = new Map<string, { api: StoreApi; stores: (string | undefined)[] }>();
  for (const [store, api] of [[undefined, config.api] as const, ...Object.entries(config.stores ?? {})]) {
    const key = JSON.stringify([api.baseUrl, api.token]);
    const group = groups.get(key);
    if (group) group.stores.push(store);
    else groups.set(key, { api, stores: [store] });
  }
  const lines: CheckLine[] = [];
  for (const { api, stores } of groups.values()) {
    const servers = config.servers.filter((server) => stores.includes(server.store));
    const label = named
      ? `${stores.length === 1 ? 'store' : 'stores'} ${stores.map((store) => `"${store ?? DEFAULT_STORE_LABEL}"`).join(', ')}: `
      : '';
    lines.push(await checkToken(config, api, servers, label, secrets));
  }
  return lines;
}

async function checkToken(
  config: Config,
  api: StoreApi,
  servers: readonly ResolvedServer[],
  label: string,
  secrets: SecretBook,
): Promise<CheckLine> {
  const client = createApiClient(api, { logger: await commandLogger(config, secrets, { warnings: false }), secrets });
  try {
    const result = await proveToken(client, AbortSignal.timeout(api.timeoutMs + 1000));
    const where = api.baseUrl;
    switch (result.kind) {
      case 'valid': {
        const listed = result.servers?.map((s) => s.id);
        const missing = listed ? servers.filter((s) => !listed.includes(s.id)).map((s) => s.id) : [];
        if (missing.length > 0) {
          return {
            ok: false,
            text: `${label}API token accepted by ${where}, but the store has no server ${missing.join(', ')}: copy the server id from the dashboard`,
            exitCode: 78,
          };
        }
        return {
          ok: true,
          text: `${label}API token accepted by ${where}${listed ? ` (${listed.length} server${listed.length === 1 ? '' : 's'} in the store)` : ''}`,
        };
      }
      case 'valid-scope-unchecked':
        return {
          ok: true,
          text: `${label}API token accepted by ${where} (it lacks servers:read, which porter does not need; commands:execute is proven by the first pull)`,
        };
      case 'invalid-token':
      case 'plan-required':
      case 'error':
        return { ok: false, text: `${label}API: ${result.error.message}`, exitCode: exitCodeOf(result.error) };
    }
  } catch (error) {
    return { ok: false, text: `${label}API: ${messageOf(error)}`, exitCode: exitCodeOf(error) };
  } finally {
    await client.close();
  }
}

/** The listener's address can be bound (and its TLS files read), and the secret was read; nothing is left listening. */
async function checkWebhook(config: Config, secrets: SecretBook): Promise<CheckLine[]> {
  const webhook = config.webhook!;
  const lines: CheckLine[] = [];
  const describe = (secret: string) => `${secret.startsWith('whsec_') ? 'a whsec_ key' : 'raw text'} of ${webhookKey(secret).length} bytes`;
  const named = Object.entries(config.stores ?? {}).flatMap(([name, store]) =>
    store.webhookSecret === undefined ? [] : [{ name, secret: store.webhookSecret }],
  );
  const secret = config.api.webhookSecret;
  if (secret === undefined && named.length === 0) {
    lines.push({
      ok: false,
      text: 'webhook secret: not set (api.webhookSecret, api.webhookSecretFile or PORTER_WEBHOOK_SECRET)',
      exitCode: 78,
    });
  }
  if (secret !== undefined) lines.push({ ok: true, text: `webhook secret read (${describe(secret)})` });
  for (const store of named) {
    lines.push({ ok: true, text: `webhook secret of store "${store.name}" read (${describe(store.secret)}): POST /webhook/${store.name}` });
  }
  const { startWebhookServer } = await import('../webhook/server.js');
  try {
    const server = await startWebhookServer({
      ...webhook,
      secretsFor: () => undefined,
      wake: () => undefined,
      logger: await commandLogger(config, secrets, { warnings: false }),
      clock: systemClock,
    });
    await server.close();
    lines.push({
      ok: true,
      text: `webhook listener: ${webhook.listen} can be bound (${webhook.tls ? 'HTTPS, certificate and key read' : 'plain HTTP: put TLS in front of it'})`,
    });
  } catch (error) {
    lines.push({ ok: false, text: messageOf(error), exitCode: exitCodeOf(error) });
  }
  return lines;
}
