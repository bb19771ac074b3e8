/** The Seller API accepts at most this many identifiers per pull (its documented limit). */
export const MAX_IDENTIFIERS = 4096;

/**
 * Identifiers as the pull sends them: trimmed, lowercased, empty ones dropped, de-duplicated in
 * first-seen order, at most 4,096. `cut` says how many distinct identifiers did not fit, so the
 * caller can warn that those players' online-only commands will wait.
 */
export function normalizeIdentifiers(raw: readonly string[]): { ids: string[]; cut: number } {
  const seen = new Set<string>();
  for (const value of raw) {
    const id = value.trim().toLowerCase();
    if (id !== '') seen.add(id);
  }
  const all = [...seen];
  return { ids: all.slice(0, MAX_IDENTIFIERS), cut: Math.max(0, all.length - MAX_IDENTIFIERS) };
}
