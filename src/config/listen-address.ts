/**
 * `health.listen`: "host:port" or "[ipv6]:port", port 0–65535 (0 lets the system pick a free
 * port, which tests use). Undefined when the text is not of that form. The config schema and the
 * health server both parse with this, so `porter check` accepts exactly what `porter run` can bind.
 */
export function parseListenAddress(listen: string): { host: string; port: number } | undefined {
  const match = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(listen) ?? /^([^:[\]]+):(\d{1,5})$/.exec(listen);
  if (!match) return undefined;
  const port = Number(match[2]);
  return port <= 65535 ? { host: match[1]!, port } : undefined;
}

export const LISTEN_FORM = 'host:port such as 127.0.0.1:9464 or [::1]:9464, port 0–65535';
