/**
 * Secret values are scrubbed from every line porter writes (logs, CLI errors, check output).
 * Kept apart from log.ts so printing an error does not load pino.
 */

export const REDACTED = '[Redacted]';

/**
 * Shorter secrets are not scrubbed from free text: a 1–3 character value would mangle every line
 * that happens to contain it. Their keys are still redacted, and the config loader warns about them.
 */
export const MIN_SCRUB_LENGTH = 4;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms a secret takes in output: raw, escaped once or twice by JSON (a JSON body inside a message), and URL-encoded. */
function secretForms(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [secret, once, twice, encodeURIComponent(secret)];
}

/** One pattern matching every form of every secret long enough to scrub; undefined when there is none. */
export function compileSecrets(secrets: readonly string[]): RegExp | undefined {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SCRUB_LENGTH) continue;
    for (const form of secretForms(secret)) forms.add(form);
  }
  // Longest first, so a secret that contains another is replaced whole.
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  return sorted.length === 0 ? undefined : new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
}

/** Replaces every occurrence of every secret (of at least MIN_SCRUB_LENGTH characters) with `[Redacted]`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const pattern = compileSecrets(secrets);
  return pattern ? text.replace(pattern, REDACTED) : text;
}
