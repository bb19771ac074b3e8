import { isLogLine } from './console-text.js';

export type FrameStep = 'more' | 'end' | 'overflow';

/**
 * The answer to one command, read line by line up to its end marker's reply
 * (docs/design.md#executors). Server log lines are not part of it: the echo
 * `… INF Executing command '<cmd>' by Telnet from …` (absent when the server sets
 * HideCommandExecutionLog) and whatever other threads log meanwhile. Every other line that comes
 * before the marker's reply is the command's output: the console sends a command's output in one
 * piece after running it, and runs a session's commands in order.
 */
export class AnswerFrame {
  readonly #endReply: string;
  readonly #maxBytes: number;
  readonly #lines: string[] = [];
  #bytes = 0;

  constructor(endReply: string, maxBytes: number) {
    this.#endReply = endReply;
    this.#maxBytes = maxBytes;
  }

  /** Lines of the answer so far. */
  get lineCount(): number {
    return this.#lines.length;
  }

  take(line: string): FrameStep {
    if (line === this.#endReply) return 'end';
    if (isLogLine(line)) return 'more';
    // The newline that will join it counts too, so the cap bounds the text returned.
    this.#bytes += Buffer.byteLength(line, 'utf8') + 1;
    if (this.#bytes > this.#maxBytes) return 'overflow';
    this.#lines.push(line);
    return 'more';
  }

  /** The answer's lines joined by "\n", without the blank lines around it. */
  text(): string {
    let start = 0;
    let end = this.#lines.length;
    while (start < end && this.#lines[start]!.trim() === '') start += 1;
    while (end > start && this.#lines[end - 1]!.trim() === '') end -= 1;
    return this.#lines.slice(start, end).join('\n');
  }
}
