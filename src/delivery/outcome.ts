/** How a claimed command ended, as porter reports it to the store. */
export type Outcome = { readonly result: 'done' } | { readonly result: 'failed'; readonly reason: string };
