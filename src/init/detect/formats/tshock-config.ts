import type { Edit } from '../text.js';

/**
 * TShock's `tshock/config.json`: TShock 5 nests the settings under `"Settings"`, TShock 4 keeps
 * them at the top. `RestApiEnabled` (default false), `RestApiPort` (default 7878) and
 * `ApplicationRestTokens`, an object whose keys are the tokens:
 * `{ "<token>": { "Username": "…", "UserGroupName": "superadmin" } }` (TShock's REST API
 * documentation, "Application REST Tokens").
 */
export interface TshockToken {
  readonly token: string;
  readonly username: string | undefined;
  readonly group: string | undefined;
}

interface TshockConfig {
  readonly restApiEnabled: boolean | undefined;
  readonly restApiPort: number | undefined;
  readonly tokens: readonly TshockToken[];
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The REST settings, or undefined when the text is not a JSON object. */
export function parseTshockConfig(json: string): TshockConfig | undefined {
  let root: unknown;
  try {
    root = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!isObject(root)) return undefined;
  const settings = isObject(root.Settings) ? root.Settings : root;
  const tokens = isObject(settings.ApplicationRestTokens) ? settings.ApplicationRestTokens : {};
  return {
    restApiEnabled: typeof settings.RestApiEnabled === 'boolean' ? settings.RestApiEnabled : undefined,
    restApiPort: typeof settings.RestApiPort === 'number' ? settings.RestApiPort : undefined,
    tokens: Object.entries(tokens).map(([token, owner]) => ({
      token,
      username: isObject(owner) && typeof owner.Username === 'string' ? owner.Username : undefined,
      group: isObject(owner) && typeof owner.UserGroupName === 'string' ? owner.UserGroupName : undefined,
    })),
  };
}

/** The one place `pattern` matches, as an edit replacing the match's first group; undefined unless exactly one. */
function onlyMatch(text: string, pattern: RegExp, replacement: string): Edit | undefined {
  const matches = [...text.matchAll(pattern)];
  if (matches.length !== 1) return undefined;
  const match = matches[0]!;
  const start = match.index + match[0].indexOf(match[1]!);
  return { start, end: start + match[1]!.length, text: replacement };
}

export function enableRestApi(text: string): Edit | undefined {
  return onlyMatch(text, /"RestApiEnabled"\s*:\s*(false)/g, 'true');
}

/** Adds an application token to an empty `ApplicationRestTokens` object. */
export function addRestToken(text: string, token: string, username: string): Edit | undefined {
  return onlyMatch(
    text,
    /"ApplicationRestTokens"\s*:\s*(\{\s*\})/g,
    `{ "${token}": { "Username": "${username}", "UserGroupName": "superadmin" } }`,
  );
}
