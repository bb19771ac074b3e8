/**
 * undici, loaded the first time a transport builds a client on it. The transport list is part of
 * the config schema's module graph, so a static import in the WebRCON or TShock code would make
 * every command that reads a config load undici (~0.1 s), `porter history` among them; the
 * daemon and `porter check` load it anyway, through the Seller API client.
 */
let loading: Promise<typeof import('undici')> | undefined;

export function loadUndici(): Promise<typeof import('undici')> {
  // undici is CommonJS: `default` is its module.exports both when Node imports it (which also
  // names the exports) and in the bundle (whose chunk for it exports `default` alone).
  return (loading ??= import('undici').then((module) => (module as unknown as { default: typeof import('undici') }).default));
}
