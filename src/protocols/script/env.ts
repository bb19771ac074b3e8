/**
 * porter's own secrets must never reach a delivery script: the script is often written by
 * someone else, logs its environment, or passes it on to tools that do. Removed by prefix, so
 * that any variant (`PORTER_RCON_PASSWORD_LOBBY`, `…_FILE`) goes too; and systemd's
 * CREDENTIALS_DIRECTORY, which points at the files holding porter's token and passwords.
 * A script still runs as porter's own user and could read those files: docs/games.md#a-delivery-script says so.
 */
const SECRET_ENV_PREFIXES: readonly string[] = ['PORTER_API_TOKEN', 'PORTER_RCON_PASSWORD', 'PORTER_WEBHOOK_SECRET'];
const SECRET_ENV_NAMES: readonly string[] = ['CREDENTIALS_DIRECTORY'];

function isSecret(name: string): boolean {
  return SECRET_ENV_NAMES.includes(name) || SECRET_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
}

export function scriptEnv(base: NodeJS.ProcessEnv, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) if (!isSecret(name)) env[name] = value;
  return { ...env, ...extra };
}
