import { isLoopbackHost } from './loopback.js';
import { parseListenAddress } from './listen-address.js';
import type { ParsedConfig } from './schema.js';

/**
 * Warnings about settings that work but expose something: a secret in a file other users can
 * read, or the health endpoint on the network. One line each, naming the file and the fix.
 */

/** True when users other than the file's owner may read it (any group or other permission bit). */
function readableByOthers(mode: number): boolean {
  return (mode & 0o077) !== 0;
}

function formatMode(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** The keys of a parsed config that hold a secret inline. */
function inlineSecretKeys(parsed: ParsedConfig): string[] {
  const keys = parsed.api.token !== undefined ? ['api.token'] : [];
  for (const [name, store] of Object.entries(parsed.stores ?? {})) {
    if (store.token !== undefined) keys.push(`stores.${name}.token`);
    if (store.webhookSecret !== undefined) keys.push(`stores.${name}.webhookSecret`);
  }
  if (parsed.api.webhookSecret !== undefined) keys.push('api.webhookSecret');
  parsed.servers.forEach((server, index) => {
    if ('password' in server.executor && server.executor.password !== undefined) keys.push(`servers[${index}].executor.password`);
  });
  return keys;
}

/** The config file itself holds a secret and other users can read it. */
export function configFileWarning(parsed: ParsedConfig, configPath: string, mode: number | undefined): string | undefined {
  const keys = inlineSecretKeys(parsed);
  if (mode === undefined || !readableByOthers(mode) || keys.length === 0) return undefined;
  return (
    `${configPath} holds ${keys.join(' and ')} and other users can read it (mode ${formatMode(mode)}): ` +
    `chmod 600 ${configPath} (owned by the user porter runs as), or move the secret into api.tokenFile / passwordFile, ` +
    'PORTER_API_TOKEN / PORTER_RCON_PASSWORD or a systemd credential'
  );
}

/** A secret file (tokenFile, passwordFile) other users can read. */
export function secretFileWarning(fileKey: string, path: string, mode: number): string | undefined {
  if (!readableByOthers(mode)) return undefined;
  return `${fileKey}: ${path} can be read by other users (mode ${formatMode(mode)}): chmod 600 ${path} (owned by the user porter runs as)`;
}

/** health.listen off loopback serves /healthz and /metrics, which have no authentication, to the network. */
export function listenWarning(parsed: ParsedConfig, configPath: string): string | undefined {
  const listen = parsed.health?.listen;
  const address = listen === undefined ? undefined : parseListenAddress(listen);
  if (!address || isLoopbackHost(address.host)) return undefined;
  return (
    `health.listen ${listen} in ${configPath} is not a loopback address: /healthz and /metrics (no authentication) are reachable from the network; ` +
    `use 127.0.0.1:${address.port} unless a scraper on another host needs it, and then firewall the port`
  );
}
