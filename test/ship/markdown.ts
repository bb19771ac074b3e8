/** Just enough Markdown reading for the docs tests: fenced code is not prose, links and headings are. */

const FENCE = /^\s*(`{3,}|~{3,})/;

/** The lines of `text` outside fenced code blocks. */
export function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      continue;
    }
    lines.push(line);
  }
  return lines;
}

/** Code spans hold examples, not links: `[x](y)` inside backquotes is text. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, '');
}

/** Every link target in the prose: inline `[text](target "title")`, images, and `[label]: target` definitions. */
export function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text).map(withoutCodeSpans)) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(line);
    if (definition) targets.push(definition[1]!);
  }
  return targets;
}

/**
 * The anchor GitHub gives a heading: its text as rendered (link targets, emphasis and code marks
 * dropped), lower-cased, every character but letters, digits, spaces, '-' and '_' removed, each
 * space turned into '-'. A repeated anchor gets '-1', '-2', … in order.
 */
export function githubSlug(heading: string): string {
  const rendered = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of every heading in the prose of `text`, duplicates numbered as GitHub does. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
