import { isQueryCommand } from '../rcon-answers.js';
import type { BattlEyeAnswer } from '../battleye-commands.js';
import {
  BattlEyeServer,
  type BattlEyeCommandHandler,
  type BattlEyeLoss,
  type BattlEyeServerOptions,
  type FakeBattlEyeServer as PlainBattlEyeServer,
} from '../battleye-server.js';

export type { BattlEyeServerOptions } from '../battleye-server.js';

/**
 * Faults for the next command that is not a query (or, aimed at `empty command`, the next empty
 * command: a keepalive, a probe, a recheck):
 * - drop-command: its datagram is lost on the way in; it does not run (nor count as a command);
 * - drop-answer: it runs, and every datagram of its answer is lost.
 */
type BattlEyeFault = 'drop-command' | 'drop-answer';

/** What a fault is aimed at: the next delivery command, or the next empty command. */
type BattlEyeFaultTarget = 'command' | 'empty command';

/** How the parts of a split answer go out. */
type PartOrder = 'in-order' | 'reversed' | 'duplicated';

/** The BattlEye simulator with what only tests do to it (lost datagrams, parts out of order); porter demo never loads it. */
export interface FakeBattlEyeServer extends PlainBattlEyeServer {
  failNext(fault: BattlEyeFault, target?: BattlEyeFaultTarget): void;
  setPartOrder(order: PartOrder): void;
  /** Answers commands before the server's mod and the game; undefined from it: theirs. */
  setHandler(handler: BattlEyeCommandHandler | undefined): void;
  /** Stops answering anything (datagrams in are ignored, nothing goes out) until `silent(false)`. */
  silent(on: boolean): void;
  /** Loses each datagram in and out with these odds (0 to 1); `random` defaults to Math.random. */
  setLoss(loss: { readonly in?: number; readonly out?: number }, random?: () => number): void;
}

export async function startBattlEyeServer(options: BattlEyeServerOptions): Promise<FakeBattlEyeServer> {
  const server = new FaultyBattlEyeServer(options);
  await server.up();
  return server;
}

const LOSS_OF: Record<BattlEyeFault, BattlEyeLoss> = { 'drop-command': 'command', 'drop-answer': 'answer' };

class FaultyBattlEyeServer extends BattlEyeServer implements FakeBattlEyeServer {
  readonly #faults: BattlEyeFault[] = [];
  readonly #emptyFaults: BattlEyeFault[] = [];
  #handler: BattlEyeCommandHandler | undefined;
  #partOrder: PartOrder = 'in-order';
  #silent = false;
  #loss = { in: 0, out: 0 };
  #random: () => number = Math.random;

  failNext(fault: BattlEyeFault, target: BattlEyeFaultTarget = 'command'): void {
    (target === 'command' ? this.#faults : this.#emptyFaults).push(fault);
  }

  setPartOrder(order: PartOrder): void {
    this.#partOrder = order;
  }

  setHandler(handler: BattlEyeCommandHandler | undefined): void {
    this.#handler = handler;
  }

  silent(on: boolean): void {
    this.#silent = on;
  }

  setLoss(loss: { readonly in?: number; readonly out?: number }, random: () => number = Math.random): void {
    this.#loss = { in: loss.in ?? 0, out: loss.out ?? 0 };
    this.#random = random;
  }

  override passes(direction: 'in' | 'out'): boolean {
    if (this.#silent) return false;
    const odds = this.#loss[direction];
    return !(odds > 0 && this.#random() < odds);
  }

  override lost(command: string): BattlEyeLoss | undefined {
    const fault = command === '' ? this.#emptyFaults.shift() : isQueryCommand(command) ? undefined : this.#faults.shift();
    return fault && LOSS_OF[fault];
  }

  override order(parts: Buffer[]): Buffer[] {
    if (this.#partOrder === 'reversed') return parts.reverse();
    if (this.#partOrder === 'duplicated') return parts.flatMap((part) => [part, part]);
    return parts;
  }

  override answerFor(command: string, adminId: number): BattlEyeAnswer {
    const custom = this.#handler?.(command, this.roster);
    if (custom === undefined) return super.answerFor(command, adminId);
    return typeof custom === 'string' ? { text: custom } : custom;
  }
}
