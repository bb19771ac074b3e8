import { readFileSync } from 'node:fs';

/**
 * A recorded game answer from test/fixtures/players. The first line of each file names where
 * the sample comes from and is not part of the answer.
 */
export function fixture(name: string): string {
  const text = readFileSync(new URL(`../../../test/fixtures/players/${name}`, import.meta.url), 'utf8');
  const newline = text.indexOf('\n');
  if (!text.startsWith('# source: ') || newline < 0) {
    throw new Error(`fixture ${name} must start with a "# source: …" line`);
  }
  return text.slice(newline + 1);
}

/** A query function that answers from a table and records what was asked. */
export function scriptedQuery(answers: Record<string, string | Error>): {
  query: (command: string) => Promise<string>;
  asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    query: async (command) => {
      asked.push(command);
      const answer = answers[command];
      if (answer === undefined) throw new Error(`test query got an unexpected command: ${command}`);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}
