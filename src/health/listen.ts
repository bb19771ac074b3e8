import { parseListenAddress, LISTEN_FORM } from '../config/listen-address.js';
import { ConfigError } from '../errors.js';

/** `health.listen` as the server binds it; the config schema has already refused anything else. */
export function parseListen(listen: string): { host: string; port: number } {
  const address = parseListenAddress(listen);
  if (!address) throw new ConfigError(`health.listen: expected ${LISTEN_FORM}, got "${listen}"`);
  return address;
}
