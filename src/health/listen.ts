import { ConfigError } from '../errors.js';

/** `health.listen`: "host:port" or "[ipv6]:port"; port 0 picks a free port (tests). */
export function parseListen(listen: string): { host: string; port: number } {
  const match = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(listen) ?? /^([^:[\]]+):(\d+)$/.exec(listen);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`health.listen: expected host:port such as 127.0.0.1:9464 or [::1]:9464, got "${listen}"`);
  }
  return { host: match[1]!, port };
}
