/**
 * What came over BattlEye RCon that was not an answer porter waited for, across reconnects: the
 * evidence that hostile or broken datagrams were dropped rather than trusted.
 */
export interface BattlEyeTraffic {
  /** Datagrams that are not BattlEye RCon (short, bad header or checksum, unknown type, bad shape). */
  dropped: number;
  /** Answers for no command in flight (a stale or unknown sequence number) and parts that disagreed with the rest. */
  ignoredAnswers: number;
  /** Server messages acknowledged, repeats included. */
  messages: number;
  /** Server messages that repeated one already acknowledged (the server retries until it sees the ack). */
  repeatedMessages: number;
  /** Empty commands sent to keep the login alive. */
  keepalives: number;
  /** Keepalives answered in time. */
  answeredKeepalives: number;
  /** Empty commands sent to check the session after a request went unanswered. */
  rechecks: number;
  /** Answers (or parts) that came for a request after it went unanswered: ignored, the request stays unknown. */
  lateAnswers: number;
}

export function emptyTraffic(): BattlEyeTraffic {
  return {
    dropped: 0,
    ignoredAnswers: 0,
    messages: 0,
    repeatedMessages: 0,
    keepalives: 0,
    answeredKeepalives: 0,
    rechecks: 0,
    lateAnswers: 0,
  };
}
