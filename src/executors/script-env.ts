/**
 * porter's own secrets must never reach a delivery script: the script is often written by
 * someone else, logs its environment, or passes it on to tools that do.
 */
export const SECRET_ENV_NAMES: readonly string[] = ['PORTER_API_TOKEN', 'PORTER_RCON_PASSWORD'];

export function scriptEnv(base: NodeJS.ProcessEnv, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of SECRET_ENV_NAMES) delete env[name];
  return { ...env, ...extra };
}
