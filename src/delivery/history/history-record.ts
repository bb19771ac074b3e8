import { z } from 'zod';
import { excerpt, stripColourCodes } from '../../games/text.js';
import type { Outcome } from '../outcome.js';

/**
 * One line of the delivery history (`history.jsonl` in stateDir): what became of one claimed
 * command, for the support question "did Steve get his VIP?" (docs/operations.md#what-happened-to-a-purchase).
 * Pure: no file access here, so the record's shape and its parsing are tested on strings.
 */

/** Why a command ended failed, as the history shows it. */
export type FailureKind =
  /** The game's answer matched a failure pattern. */
  | 'game-answer'
  /** The command policy or command safety refused it; it never reached the game server. */
  | 'refused'
  /** It provably never reached the game server (connection down for notSentRetryMs, credentials rejected). */
  | 'not-sent'
  /** It was sent, but porter cannot know whether it ran (no answer, porter stopped mid-command). */
  | 'unknown'
  /** porter did not run it: the claim had no command text, or could not be journaled. */
  | 'not-run'
  /** The executor reported it failed (a script's non-zero exit). */
  | 'command-failed';

/** What the delivery loop hands over once a command's outcome is decided. */
export interface SettledDelivery {
  readonly serverId: string;
  /** The server's configured name, when it has one. */
  readonly serverName?: string | undefined;
  /** The command id with the exact digits the API sent. */
  readonly id: string;
  /** Undefined when the API's claim carried no command text. */
  readonly command: string | undefined;
  readonly outcome: Outcome;
  /** Set when the outcome is failed. */
  readonly failure?: FailureKind;
  /** The game's answer of an executed command. */
  readonly answer?: string;
  /** Claim to outcome; undefined when porter cannot know (a command left unknown by the previous run). */
  readonly ms: number | undefined;
  /** When the outcome was decided (ms since the epoch). */
  readonly at: number;
  /**
   * Set on the second record of a command whose report the API refused for good: its status and
   * code ("400 INVALID_ID"), never its free text. porter gave the report up.
   */
  readonly reportRefused?: string;
}

const FAILURE_KINDS = [
  'game-answer',
  'refused',
  'not-sent',
  'unknown',
  'not-run',
  'command-failed',
] as const satisfies readonly FailureKind[];

/** Long enough for any store command and a game's usual answer; the full text stays in porter's log. */
const MAX_COMMAND_POINTS = 1000;
const MAX_TEXT_POINTS = 500;

const recordSchema = z.object({
  at: z.string().min(1),
  serverId: z.string().min(1),
  server: z.string().min(1).optional(),
  id: z.string().min(1),
  command: z.string().optional(),
  outcome: z.enum(['executed', 'failed']),
  why: z.enum(FAILURE_KINDS).optional(),
  answer: z.string().optional(),
  reason: z.string().optional(),
  ms: z.number().nullable(),
  reportRefused: z.string().optional(),
});

/** A line of the history as it is stored, printed by `porter history --json` and served at /history. */
export type HistoryRecord = z.output<typeof recordSchema>;

/**
 * The record of one delivery as one JSON line. Every text is scrubbed of secrets before it is cut
 * to length, so a cut can never leave part of a secret behind. Answers and reasons are flattened
 * to one line (a game's answer may have many).
 */
export function encodeHistoryRecord(delivery: SettledDelivery, scrub: (text: string) => string): string {
  const { outcome } = delivery;
  const record: HistoryRecord = {
    at: new Date(delivery.at).toISOString(),
    serverId: delivery.serverId,
    ...(delivery.serverName === undefined ? {} : { server: delivery.serverName }),
    id: delivery.id,
    ...(delivery.command === undefined ? {} : { command: cut(scrub(delivery.command), MAX_COMMAND_POINTS) }),
    outcome: outcome.result === 'done' ? 'executed' : 'failed',
    ...(outcome.result === 'failed' ? { why: delivery.failure ?? 'unknown', reason: excerpt(scrub(outcome.reason), MAX_TEXT_POINTS) } : {}),
    ...(outcome.result === 'done' && delivery.answer ? { answer: excerpt(scrub(stripColourCodes(delivery.answer)), MAX_TEXT_POINTS) } : {}),
    ms: delivery.ms ?? null,
    ...(delivery.reportRefused === undefined ? {} : { reportRefused: cut(scrub(delivery.reportRefused), 120) }),
  };
  return `${JSON.stringify(record)}\n`;
}

/** The record a line holds; undefined for anything else (a line cut short by a crash, zeros after a power cut). */
export function parseHistoryLine(line: string): HistoryRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = recordSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The command exactly as the store sent it (spaces and all), only cut when very long. */
function cut(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}
