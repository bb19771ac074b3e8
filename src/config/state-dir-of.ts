import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigInvalidError } from './errors.js';
import { configErrorMap, describeIssues } from './issues.js';
import { readConfigFile } from './read-file.js';
import { configSchema } from './schema.js';

/**
 * The state directory a config file names, the file checked like any config but its secrets left
 * unresolved: `porter history` only reads the history, and support runs it by hand where the
 * service's secrets (systemd credentials, a container's secrets) are not to be had. Relative to
 * the config file's folder, as `porter run` resolves it.
 */
export async function stateDirOf(path: string): Promise<string> {
  const file = resolve(path);
  const raw = await readConfigFile(file);
  const result = configSchema.safeParse(raw, { error: configErrorMap });
  if (!result.success) throw new ConfigInvalidError(file, describeIssues(result.error.issues, configSchema, raw));
  const { stateDir } = result.data;
  return isAbsolute(stateDir) ? stateDir : resolve(dirname(file), stateDir);
}
