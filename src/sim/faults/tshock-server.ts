import type { ServerResponse } from 'node:http';
import {
  restHeaders,
  restJson,
  TShockServer,
  type FakeTShockServer as PlainTShockServer,
  type RawCommandExchange,
  type TShockServerOptions,
} from '../tshock-server.js';

/**
 * Faults for the next rawcmd that is not read-only:
 * - hang: runs it and never answers (the connection stays open, nothing is written);
 * - close-before-answer: runs it, then drops the connection without a byte of answer;
 * - close-mid-answer: runs it, writes the headers and half the body, then drops the connection;
 * - close-without-running: drops the connection on receipt; the command does not run;
 * - exception: runs it, then answers as TShock does when a command throws: 500 with `error`,
 *   `errormsg` and `stacktrace`;
 * - proxy-502: does not run it; a reverse proxy's HTML 502 page (TShock behind nginx, stopped);
 * - garbage: runs it, then answers 200 with a body that is not JSON.
 */
export type TShockFault =
  'hang' | 'close-before-answer' | 'close-mid-answer' | 'close-without-running' | 'exception' | 'proxy-502' | 'garbage';

/** The TShock REST simulator with what only tests do to it; porter demo never loads it. */
export interface FakeTShockServer extends PlainTShockServer {
  failNext(fault: TShockFault): void;
  /** Delays every answer by this long (0: none): a slow server. */
  setDelay(ms: number): void;
}

export async function startTShockServer(options: TShockServerOptions): Promise<FakeTShockServer> {
  const server = new FaultyTShockServer(options);
  await server.up();
  return server;
}

class FaultyTShockServer extends TShockServer implements FakeTShockServer {
  readonly #faults: TShockFault[] = [];
  #delayMs = 0;

  failNext(fault: TShockFault): void {
    this.#faults.push(fault);
  }

  setDelay(ms: number): void {
    this.#delayMs = ms;
  }

  override async write(response: ServerResponse, status: number, body: string): Promise<void> {
    if (this.#delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#delayMs));
    return super.write(response, status, body);
  }

  override async serve(exchange: RawCommandExchange): Promise<void> {
    const fault = exchange.query ? undefined : this.#faults.shift();
    const { response } = exchange;
    if (fault === undefined) return super.serve(exchange);
    if (fault === 'close-without-running') return void response.socket?.destroy();
    if (fault === 'proxy-502') return proxyPage(response);
    const lines = exchange.run();
    switch (fault) {
      case 'hang':
        return;
      case 'close-before-answer':
        return void response.socket?.destroy();
      case 'close-mid-answer': {
        const body = restJson({ status: '200', response: lines });
        response.writeHead(200, restHeaders(Buffer.byteLength(body)));
        response.write(body.slice(0, Math.floor(body.length / 2)), () => response.socket?.destroy());
        return;
      }
      case 'exception':
        return exchange.answer({
          status: '500',
          error: 'Internal server error.',
          errormsg: 'Object reference not set to an instance of an object.',
          stacktrace: '   at TShockAPI.Commands.Give(CommandArgs args)',
        });
      case 'garbage':
        return this.write(response, 200, 'Index was outside the bounds of the array.');
    }
  }
}

function proxyPage(response: ServerResponse): void {
  const body =
    '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';
  if (response.destroyed) return;
  response.writeHead(502, { 'Content-Type': 'text/html', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  response.end(body);
}
