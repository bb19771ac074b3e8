import type { ReconnectingLink } from '../net/reconnecting-link.js';
import type { ExecutorStats } from './executor.js';

/**
 * What an executor is by its reconnecting link alone: readiness, stats, the first connect and
 * waiting for one. The WebRCON, telnet, BattlEye and TShock executors extend it and add how a
 * command travels.
 */
export abstract class LinkedExecutor<Conn> {
  protected abstract readonly link: ReconnectingLink<Conn>;

  isReady(): boolean {
    return this.link.isReady();
  }

  stats(): ExecutorStats {
    return { connected: this.isReady(), reconnects: this.link.reconnects };
  }

  /**
   * One connection attempt now (or joins the one under way). Rejects with CredentialsError when
   * the server refuses the password or token, the protocol's connect error otherwise; does not
   * retry (waitReady does).
   */
  connect(signal?: AbortSignal): Promise<void> {
    return this.link.connect(signal);
  }

  /** Resolves once connected, reconnecting with backoff meanwhile; rejects on abort, close or refused credentials. */
  waitReady(signal?: AbortSignal): Promise<void> {
    return this.link.waitReady(signal);
  }
}
