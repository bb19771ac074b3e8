/** A host as a URL's authority writes it: an IPv6 address in brackets, anything else as it is. */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
