/** The label a server gets in logs, JSON, metrics and messages: its configured name, else its id. */
export function serverLabel(server: { readonly id: string; readonly name?: string | undefined }): string {
  return server.name ?? server.id;
}
