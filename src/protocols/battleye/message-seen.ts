/**
 * BattlEye sends a server message again (up to 5 times over 10 s) until it is acknowledged, so
 * an acknowledgement lost on the way back brings the same message twice. A sequence number seen
 * within that window is a repeat. At most 256 entries (one per sequence number), whatever the
 * server sends.
 */
const MESSAGE_RETRY_WINDOW_MS = 10_000;

export class MessageSeen {
  readonly #seenAt = new Map<number, number>();

  /** True when `seq` came within the retry window before `now`; records it either way. */
  repeat(seq: number, now: number): boolean {
    const before = this.#seenAt.get(seq);
    this.#seenAt.set(seq, now);
    return before !== undefined && now - before < MESSAGE_RETRY_WINDOW_MS;
  }
}
