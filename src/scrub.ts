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

/**
 * What is written instead of a text that could not be scrubbed: never the text, never anything
 * the scrubber was built from. Not expected to happen (the scrubber below builds no pattern an
 * engine can refuse), but every output path falls back to it rather than to the raw text.
 */
export const WITHHELD = '[text withheld: porter could not scrub it of secrets]';

/** A function that returns its text with every secret replaced; see `Scrubber`. */
type Scrub = (text: string) => string;

/** The forms a secret takes in output: raw, escaped once or twice by JSON (a JSON body inside a message), and URL-encoded. */
function secretForms(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  const forms = [secret, once, twice];
  // A lone surrogate cannot be URL-encoded (URIError), so no output of porter's holds it in that form.
  try {
    forms.push(encodeURIComponent(secret));
  } catch {
    /* the other forms cover it */
  }
  return forms;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A form longer than this is looked for by its first PREFIX characters and then compared whole, so
 * no alternative of a pattern is long. A regular expression is what finds a literal fastest in
 * V8, but V8 refuses one past some size ("Regular expression too large", at 60,000 repeated
 * characters yet not at 200,000 random ones), and that error quotes the pattern: every secret in
 * clear. So the patterns here stay small, each at most CHUNK characters of alternatives short
 * enough to be harmless, and one that is refused all the same is searched with indexOf instead.
 */
const PREFIX = 128;
const CHUNK = 8192;

/** Where each alternative of one group occurs in a text: at every position, the longest one that starts there. */
type Finder = (text: string, found: (at: number, alternative: string) => void) => void;

/** The alternatives as one pattern, longest first so the longest one that starts at a position is the one matched. */
function patternFinder(alternatives: readonly string[]): Finder {
  const pattern = new RegExp(alternatives.map(escapeRegExp).join('|'), 'g');
  return (text, found) => {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      found(match.index, match[0]);
      // From the next character on, not past the match: occurrences that overlap it are found too.
      pattern.lastIndex = match.index + 1;
    }
  };
}

/** The same without a pattern: every occurrence of every alternative, each a candidate to be checked whole. */
function searchFinder(alternatives: readonly string[]): Finder {
  return (text, found) => {
    for (const alternative of alternatives) {
      for (let at = text.indexOf(alternative); at >= 0; at = text.indexOf(alternative, at + 1)) found(at, alternative);
    }
  };
}

function finderOf(alternatives: readonly string[]): Finder {
  try {
    return patternFinder(alternatives);
  } catch {
    return searchFinder(alternatives);
  }
}

/**
 * Every form of every secret long enough to scrub, found wherever it occurs, whatever the number
 * and size of the secrets.
 *
 * Every occurrence is covered, overlapping ones too: where occurrences overlap (a secret
 * containing another, or the end of one being the start of the next) the whole stretch becomes one
 * `[Redacted]`, so not even part of a longer secret is left around a shorter one. Occurrences that
 * merely touch stay separate `[Redacted]`s.
 */
export class Scrubber {
  readonly #finders: Finder[] = [];
  /**
   * The forms an alternative found at a position may be, longest first: for a short form, itself;
   * for the first PREFIX characters of long forms, those forms and every short form that begins it.
   */
  readonly #candidates = new Map<string, string[]>();

  constructor(forms: ReadonlySet<string>) {
    for (const form of forms) {
      const alternative = form.slice(0, PREFIX);
      const list = this.#candidates.get(alternative);
      if (list === undefined) this.#candidates.set(alternative, [form]);
      else list.push(form);
    }
    for (const [alternative, list] of this.#candidates) {
      if (alternative.length < PREFIX) continue;
      // Found where a long form's start is but the rest is not, a shorter secret may still start there.
      for (let length = MIN_SCRUB_LENGTH; length < PREFIX; length++) {
        const short = alternative.slice(0, length);
        if (forms.has(short)) list.push(short);
      }
    }
    for (const list of this.#candidates.values()) list.sort((a, b) => b.length - a.length);

    const alternatives = [...this.#candidates.keys()].sort((a, b) => b.length - a.length);
    for (let first = 0, size = 0, index = 0; index <= alternatives.length; index++) {
      if (index === alternatives.length || (size + alternatives[index]!.length > CHUNK && index > first)) {
        this.#finders.push(finderOf(alternatives.slice(first, index)));
        first = index;
        size = 0;
      }
      if (index < alternatives.length) size += alternatives[index]!.length + 1;
    }
  }

  readonly scrub = (text: string): string => {
    const stretches: [number, number][] = [];
    for (const find of this.#finders) {
      find(text, (at, alternative) => {
        const form = this.#candidates.get(alternative)!.find((candidate) => text.startsWith(candidate, at));
        if (form !== undefined) stretches.push([at, at + form.length]);
      });
    }
    if (stretches.length === 0) return text;
    // Several groups report out of order; overlapping stretches merge.
    stretches.sort((a, b) => a[0] - b[0]);
    let out = '';
    let copied = 0;
    let [start, end] = stretches[0]!;
    for (const [from, to] of stretches) {
      if (from < end) {
        end = Math.max(end, to);
        continue;
      }
      out += text.slice(copied, start) + REDACTED;
      copied = end;
      [start, end] = [from, to];
    }
    return out + text.slice(copied, start) + REDACTED + text.slice(end);
  };
}

/** The scrubber of every form of every secret long enough to scrub; undefined when there is none. */
export function compileSecrets(secrets: readonly string[]): Scrubber | undefined {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SCRUB_LENGTH) continue;
    for (const form of secretForms(secret)) forms.add(form);
  }
  return forms.size === 0 ? undefined : new Scrubber(forms);
}

/** Replaces every occurrence of every secret (of at least MIN_SCRUB_LENGTH characters) with `[Redacted]`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const scrubber = compileSecrets(secrets);
  return scrubber ? scrubber.scrub(text) : text;
}

/**
 * `scrub(text)`, or WITHHELD when scrubbing throws: for every path that writes to a log, stdout or
 * stderr, so a failure of the scrubber can never print the raw text, nor the error it threw
 * (which may quote the secrets, as V8's "Regular expression too large" did).
 */
export function scrubbedOrWithheld(scrub: Scrub, text: string): string {
  try {
    return scrub(text);
  } catch {
    return WITHHELD;
  }
}
