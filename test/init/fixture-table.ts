import { readFileSync } from 'node:fs';
import { gameDir } from './helpers.js';

/** What detection must make of one folder of test/fixtures/game-dirs. */
export interface FixtureExpectation {
  readonly game: string;
  readonly type: string;
  readonly port: number;
  /** Undefined where the folder's settings have none. */
  readonly password: string | undefined;
  /** The problem codes, in the order detection reports them. */
  readonly problems: readonly string[];
}

/** Every `code` span of a cell, in order. */
function codes(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
}

function firstWord(cell: string, column: string, folder: string): string {
  const word = /^[\w-]+/.exec(cell)?.[0];
  if (word === undefined) throw new Error(`game-dirs/README.md, row ${folder}: no ${column} in "${cell}"`);
  return word;
}

/** A cell without its note: what follows in parentheses is for the reader. */
function withoutNote(cell: string): string {
  const note = cell.indexOf(' (');
  return note < 0 ? cell : cell.slice(0, note);
}

function expectation(cells: readonly string[]): [string, FixtureExpectation] {
  const [folderCell = '', game = '', type = '', port = '', password = '', problems = ''] = cells.map(withoutNote);
  const folder = codes(folderCell)[0] ?? folderCell;
  return [
    folder,
    {
      game: firstWord(game, 'game', folder),
      type: firstWord(type, 'executor', folder),
      port: Number(firstWord(port, 'port', folder)),
      password: password.startsWith('none') ? undefined : codes(password)[0],
      problems: problems.startsWith('none') ? [] : codes(problems),
    },
  ];
}

/**
 * The table of test/fixtures/game-dirs/README.md, read as the tests' expectations so the folder's
 * documentation and what the tests hold cannot differ: in each cell the words before a parenthesis
 * count (a name, a number, `code` spans, or "none" for no password or no problem), and the
 * parenthesis is a note for the reader.
 */
export function fixtureTable(): ReadonlyMap<string, FixtureExpectation> {
  const lines = readFileSync(gameDir('README.md'), 'utf8').split('\n');
  const header = lines.findIndex((line) => line.startsWith('| folder |'));
  const rows: [string, FixtureExpectation][] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      expectation(
        line
          .slice(1, -1)
          .split('|')
          .map((cell) => cell.trim()),
      ),
    );
  }
  return new Map(rows);
}
