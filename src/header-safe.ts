/**
 * Whether a token can go into an HTTP header as it is: printable ASCII, no space. A store token
 * never has anything else; a line break, a space or a character beyond ASCII is a copy gone wrong,
 * and undici would refuse the header (or the store the token) with a message that says nothing
 * of the token. One check for the config loader, a token re-read after a 401, and `porter init`.
 */
export function isHeaderSafe(token: string): boolean {
  return /^[\x21-\x7e]+$/.test(token);
}
