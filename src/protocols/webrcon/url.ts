import { urlHost } from '../../url-host.js';

/**
 * Rust's WebRCON takes the password as the URL path: `ws://host:port/<password>`. Its server
 * (Facepunch.Rcon, on Fleck) compares the raw request path with "/" + rcon.password and decodes
 * nothing, so the password is sent literally wherever a URL allows it; characters a URL cannot
 * carry literally (space, '#', '?', quotes, non-ASCII, …) are percent-encoded, and such a
 * password can never match on a real Rust server — `literal` says so, for a clear error.
 */
export interface WebRconAddress {
  /** The URL to connect to. Contains the password: never log it or put it in an error. */
  readonly url: string;
  /** For logs and errors. */
  readonly display: string;
  /** False when the password had to be encoded or normalised to fit in a URL path. */
  readonly literal: boolean;
}

export function webrconAddress(host: string, port: number, password: string): WebRconAddress {
  const hostPart = urlHost(host);
  const url = new URL(`ws://${hostPart}:${port}/`);
  url.pathname = `/${password}`;
  return {
    url: url.href,
    display: `ws://${hostPart}:${port}/<password>`,
    literal: url.pathname === `/${password}`,
  };
}

export const NON_LITERAL_PASSWORD_HINT =
  'the password contains characters a URL path cannot carry literally (space, #, ?, quotes, backslash, non-ASCII or "." segments), ' +
  'and Rust compares the path literally, so it can never match: set an rcon.password of letters, digits and -._~ only';
