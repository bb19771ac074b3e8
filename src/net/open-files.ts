import { readdirSync, readFileSync } from 'node:fs';
import { PorterError } from '../errors.js';

/**
 * The process's open-file limit (RLIMIT_NOFILE), as the rest of porter needs it: every game-server
 * connection and every HTTP connection to the Seller API is a descriptor, and so are the journal
 * and the history. When the limit is reached, connect() fails with EMFILE (ENFILE: the whole
 * system's table is full), which has nothing to do with the network: these errors say so and say
 * how to raise the limit.
 *
 * Node.js raises the soft limit to the hard one when it starts (PlatformInit in src/node.cc), so the
 * soft limit porter sees is already the hard limit its service manager set (systemd:
 * LimitNOFILE=, a shell: ulimit -Hn).
 *
 * Once a connect has failed for want of descriptors, a guard keeps the last few descriptors
 * (reservedFiles) for porter itself: a game-server connection (re)opened then must leave that many free, so the
 * journal's snapshot, the history's files and the Seller API's few connections still find one.
 * Servers that got a connection keep delivering; the others retry with backoff.
 */

export const OUT_OF_FILES_CODES: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE']);

/** Descriptors kept for the journal's snapshot, the history's files and the lock, besides the API's connections. */
const OWN_FILES = 8;
/** The most HTTP connections to one Seller API address, however high the limit. */
const MAX_API_CONNECTIONS = 128;

export interface OpenFileLimit {
  readonly soft: number;
  readonly hard: number;
}

/** The "Max open files" line of /proc/<pid>/limits; undefined when absent or unlimited. */
export function parseOpenFileLimit(limitsText: string): OpenFileLimit | undefined {
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limitsText);
  if (!match) return undefined;
  const soft = Number(match[1]);
  const hard = match[2] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[2]);
  return Number.isFinite(soft) && soft > 0 ? { soft, hard } : undefined;
}

let knownLimit: OpenFileLimit | undefined;

/**
 * This process's limit, from /proc/self/limits (Linux); undefined elsewhere. Read once and kept:
 * nothing in porter changes it, and reading the file needs the very descriptor that may be missing.
 */
export function openFileLimit(): OpenFileLimit | undefined {
  if (knownLimit) return knownLimit;
  try {
    knownLimit = parseOpenFileLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    // not Linux, or no descriptor left to read it with
  }
  return knownLimit;
}

/** Descriptors this process holds now (Linux); undefined elsewhere; Infinity when none is left to look. */
function openFilesInUse(): number | undefined {
  try {
    // readdir itself holds one while it reads.
    return readdirSync('/proc/self/fd').length - 1;
  } catch (error) {
    return isOutOfFiles(error) ? Number.POSITIVE_INFINITY : undefined;
  }
}

/** True when `error`, or any error it wraps (cause, AggregateError), is EMFILE or ENFILE. */
export function isOutOfFiles(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && OUT_OF_FILES_CODES.has(code)) return true;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) queue.push(...(errors as unknown[]));
    queue.push((current as { cause?: unknown }).cause);
  }
  return false;
}

/**
 * How many connections the Seller API client may open to its address: an eighth of the limit, at
 * least 2 and at most MAX_API_CONNECTIONS. Without a bound, 1,000 servers pulling at once would
 * open 1,000 sockets (undici's Pool opens one per request in flight), each a descriptor.
 */
export function apiConnectionCap(limit: OpenFileLimit | undefined = openFileLimit()): number {
  if (!limit) return MAX_API_CONNECTIONS;
  return Math.max(2, Math.min(MAX_API_CONNECTIONS, Math.floor(limit.soft / 8)));
}

/** Descriptors a game-server connection must leave free once the limit was reached: the API's and porter's own. */
function reservedFiles(limit: OpenFileLimit): number {
  return apiConnectionCap(limit) + OWN_FILES;
}

/** What to do about it, for messages: names the limit and both ways of raising it. */
export function outOfFilesAdvice(limit: OpenFileLimit | undefined = openFileLimit()): string {
  const which = limit ? `the open-file limit (${limit.soft})` : 'the open-file limit';
  return (
    `porter has run out of open files: ${which} is reached, not a network problem; ` +
    'raise it (LimitNOFILE= in porter.service, `ulimit -n` in the shell that starts porter, ulimits.nofile in compose) ' +
    'or run fewer servers in this porter'
  );
}

/** A connection porter did not open, to keep its last descriptors for its journal and the API. */
class OutOfFilesError extends PorterError {
  override readonly code: string = 'EMFILE';
}

let guarded = false;
/** Connections being opened right now: their descriptors may not show in /proc/self/fd yet. */
let opening = 0;

/** From now on, connections must leave the reserve free: a connect hit the limit, or the configuration needs more than it. */
export function guardOpenFiles(): void {
  guarded = true;
}

/** A connect failed: when for want of descriptors, the guard goes on. */
export function noteOutOfFiles(error: unknown): void {
  if (isOutOfFiles(error)) guarded = true;
}

/**
 * Before opening a connection for `what`: throws OutOfFilesError (code EMFILE) when it would eat
 * into the reserve, else returns the function to call once the attempt has ended. Costs nothing
 * until the guard is on.
 */
export function claimFileFor(what: string): () => void {
  if (!guarded) return () => undefined;
  const limit = openFileLimit();
  const inUse = openFilesInUse();
  if (limit === undefined || inUse === undefined) return () => undefined;
  const reserved = reservedFiles(limit);
  if (inUse + opening + 1 + reserved > limit.soft) {
    const shown = Number.isFinite(inUse) ? `${inUse + opening} of ${limit.soft}` : `all ${limit.soft}`;
    throw new OutOfFilesError(
      `EMFILE: not opening ${what}: ${shown} open files are in use and porter keeps the last ${reserved} ` +
        `for its journal and the Seller API; ${outOfFilesAdvice(limit)}`,
    );
  }
  opening++;
  let released = false;
  return () => {
    if (!released) opening--;
    released = true;
  };
}
