import { isIP } from 'node:net';

/**
 * Rules that span more than one key or need more than a type check. They take the raw file data
 * and stay quiet about anything the schema already reports, so they can run alongside it and the
 * user sees every problem in one pass.
 */

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host.toLowerCase() === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) {
    const lower = host.toLowerCase();
    // WHATWG URL writes ::ffff:127.0.0.1 as ::ffff:7f00:1.
    return lower === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(lower) || /^::ffff:127\./.test(lower);
  }
  return false;
}

/** The token travels in a header, so a non-loopback `http://` would send it over the network in clear. */
export function checkBaseUrl(baseUrl: unknown): string[] {
  if (typeof baseUrl !== 'string') return [];
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return [];
  }
  const problems: string[] = [];
  if (url.username !== '' || url.password !== '') {
    problems.push('api.baseUrl: must not contain a user name or password; the API token goes in api.token, api.tokenFile or PORTER_API_TOKEN');
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    problems.push(
      `api.baseUrl: plain http:// to ${url.hostname} would send the API token unencrypted; use https:// (http:// is only allowed to loopback: 127.0.0.0/8, ::1, localhost)`,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    problems.push('api.baseUrl: must not contain a query string or fragment; give the scheme, host and an optional path prefix only');
  }
  return problems;
}

/** Two entries with one id would run two delivery loops that claim from the same queue and budget. */
export function checkDuplicateServerIds(servers: unknown): string[] {
  if (!Array.isArray(servers)) return [];
  const seen = new Map<string, number>();
  const problems: string[] = [];
  servers.forEach((server: unknown, index) => {
    const id = server && typeof server === 'object' ? (server as { id?: unknown }).id : undefined;
    if (typeof id !== 'string') return;
    const first = seen.get(id.toLowerCase());
    if (first === undefined) seen.set(id.toLowerCase(), index);
    else problems.push(`servers[${index}].id: the same server id as servers[${first}].id; each server may appear only once`);
  });
  return problems;
}
