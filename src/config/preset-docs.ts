import { presetNames } from './schema.js';

/**
 * configuration.md's row for `servers[].players.preset` lists every game's id, written from the
 * games registry by `npm run schema` (as the Executors section is), so a game added there is
 * documented without a hand edit, and a test fails when the row is stale.
 */
const PRESET_ROW = /^(\| `servers\[\]\.players\.preset` \| [^|]+ \| how online players are read: ).*( \|)$/m;

/** The document with the preset row's list replaced by the current one. */
export function withPresetDocs(doc: string): string {
  if (!PRESET_ROW.test(doc)) {
    throw new Error(
      'docs/configuration.md has lost its `servers[].players.preset` row ("… | how online players are read: … |"); put it back',
    );
  }
  return doc.replace(
    PRESET_ROW,
    (_row, head: string, tail: string) => `${head}${presetNames.map((name) => `\`${name}\``).join(', ')}${tail}`,
  );
}
