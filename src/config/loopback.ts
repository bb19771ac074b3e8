import { isIP } from 'node:net';

/**
 * porter's one definition of "loopback" (docs/design.md#the-api-contract): 127.0.0.0/8, ::1, the name
 * localhost, and IPv4-mapped IPv6 addresses of 127.0.0.0/8 (::ffff:127.x.y.z), which reach the
 * same IPv4 loopback interface. Used for plain http:// to the API and for health.listen.
 *
 * The host is first written the way the WHATWG URL parser writes it, so every spelling of one
 * address gets the same answer: `127.1` is 127.0.0.1, `[0:0::1]` is ::1, `::ffff:127.0.0.1` is
 * ::ffff:7f00:1, `LOCALHOST` is localhost.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let canonical: string;
  try {
    canonical = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return false;
  }
  if (canonical === 'localhost') return true;
  if (isIP(canonical) === 4) return canonical.startsWith('127.');
  return canonical === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}

/** What the messages say loopback is. */
export const LOOPBACK_HOSTS = '127.0.0.0/8, ::1, ::ffff:127.x.x.x, localhost';
