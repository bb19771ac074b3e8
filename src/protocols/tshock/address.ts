import { urlHost } from '../../url-host.js';

/*
 * Where TShock's REST API listens, and the request paths porter sends it. TShock reads the token
 * only from the `token` parameter (SecureRest.ExecuteCommand: `parms["token"]`; no header), so
 * every path carries it: a path is never logged or put in an error, only the origin is.
 */

/** `http://host:port`: holds no secret, so logs and messages name the server by it. */
export function tshockOrigin(host: string, port: number): string {
  return `http://${urlHost(host)}:${port}`;
}

/** Proves the token without running anything: TShock answers "Token is valid and was passed through correctly.". */
export const TOKEN_TEST_ROUTE = '/tokentest';

const RAW_COMMAND_ROUTE = '/v3/server/rawcmd';

/**
 * The text TShock should run for a store command. Commands.HandleCommand drops the first
 * character of whatever it is given, taking it for the command specifier (`/` by default; `.`
 * runs a command silently), so a command without a leading `/` gets one. A leading `.` gets one
 * too: porter never runs commands silently, and `/.off` is an unknown command where `.off` would
 * stop the server past a deny list that knows `off` and `/off`.
 */
export function tshockCommandText(command: string): string {
  return command.startsWith('/') ? command : `/${command}`;
}

/**
 * GET path of a route with the token. The HTTP server under TShock URL-decodes every query value
 * (HttpServer.Tools.UrlParser, HttpUtility.UrlDecode), and the token is read as decoded once.
 */
export function routePath(route: string, token: string): string {
  return `${route}?token=${encodeURIComponent(token)}`;
}

/**
 * GET path of `/v3/server/rawcmd` for a command. TShock decodes `cmd` twice: once in the HTTP
 * server, and once more through its EscapedParameterCollection (Uri.UnescapeDataString), so the
 * command is encoded twice; encoded once, `50%41` would run as `50A`.
 */
export function rawCommandPath(commandText: string, token: string): string {
  return `${RAW_COMMAND_ROUTE}?cmd=${encodeURIComponent(encodeURIComponent(commandText))}&token=${encodeURIComponent(token)}`;
}
