/** A request header by its lower-case name; a repeated header is refused by the schemes, so it reads as absent. */
export type HeaderOf = (name: string) => string | undefined;

/** Why a request's signature headers were refused before the body was read, or after. */
export type Refusal = 'signature' | 'timestamp';

export type HeaderCheck<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: Refusal };

/** node:http joins repeated unknown headers into one string and gives arrays for a few; either way one value is expected. */
export function headerOf(headers: Readonly<Record<string, string | string[] | undefined>>): HeaderOf {
  return (name) => {
    const value = headers[name];
    return typeof value === 'string' ? value : undefined;
  };
}
