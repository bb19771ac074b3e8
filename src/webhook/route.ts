/**
 * Which store a request is for: `POST /webhook` is the default store's (`api`), `POST
 * /webhook/<name>` a named store's. Undefined for any other path (404). The query string is not
 * part of the route; a store name has the form the config gives store names.
 */
const STORE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function routeOf(url: string): { readonly store: string | undefined } | undefined {
  const path = url.split('?', 1)[0]!;
  if (path === '/webhook') return { store: undefined };
  const name = path.startsWith('/webhook/') ? path.slice('/webhook/'.length) : undefined;
  return name !== undefined && STORE_NAME.test(name) ? { store: name } : undefined;
}
