import { parseHistoryQuery, selectHistory, type RawHistoryQuery } from '../delivery/history/history-query.js';
import { PorterError, UsageError } from '../errors.js';
import type { HealthSource } from './source.js';

/**
 * GET /history (docs/operations.md#what-happened-to-a-purchase): the delivery history as JSON,
 * with the filters of `porter history` as query parameters. Served only on a loopback
 * health.listen: the endpoint has no authentication, and command texts name the store's buyers.
 */

interface HistoryAnswer {
  readonly status: number;
  readonly body: string;
}

const PARAMETERS = ['player', 'id', 'failed', 'since', 'limit'] as const satisfies readonly (keyof RawHistoryQuery)[];

export async function historyAnswer(
  source: HealthSource,
  parameters: URLSearchParams,
  options: { readonly onLoopback: boolean; readonly now: number },
): Promise<HistoryAnswer> {
  if (!options.onLoopback) {
    return error(
      403,
      '/history is served only when health.listen is a loopback address: it shows command texts, which name your buyers. Run "porter history" on the host instead',
    );
  }
  if (!source.history) return error(404, 'this porter keeps no delivery history');
  const unknown = [...parameters.keys()].filter((key) => !(PARAMETERS as readonly string[]).includes(key));
  if (unknown.length > 0) return error(400, `unknown query parameter ${unknown.join(', ')}: use ${PARAMETERS.join(', ')}`);
  let query;
  try {
    const raw: Record<string, string | undefined> = {};
    for (const key of PARAMETERS) raw[key] = parameters.get(key) ?? undefined;
    query = parseHistoryQuery(raw, options.now, (key) => `query parameter ${key}`);
  } catch (problem) {
    if (problem instanceof UsageError) return error(400, problem.message);
    throw problem;
  }
  let records;
  try {
    records = await source.history.read();
  } catch (problem) {
    // The history's files cannot be read (a FIFO or a directory in place of history.jsonl, permissions): say which and why.
    if (problem instanceof PorterError) return error(500, problem.message);
    throw problem;
  }
  return { status: 200, body: JSON.stringify({ records: selectHistory(records, query) }) };
}

function error(status: number, message: string): HistoryAnswer {
  return { status, body: JSON.stringify({ error: message }) };
}
