import { z } from 'zod';
import { passwordTransport, port, positiveMs, secretSources, urlGameHost } from '../transport-descriptor.js';

const schema = z
  .strictObject({
    type: z.literal('webrcon'),
    host: urlGameHost,
    port: port.default(28016).describe("The Rust server's rcon.port."),
    ...secretSources,
    timeoutMs: positiveMs(5000).describe("Deadline for one command's answer."),
    connectTimeoutMs: positiveMs(5000).describe('Deadline for the TCP connect plus the WebSocket login.'),
  })
  .describe("Rust's WebRCON: JSON over a WebSocket.");

/** Rust's WebRCON: JSON over a WebSocket, the password in the URL's path. */
export const webrconTransport = passwordTransport('webrcon', schema, 'rust', {
  name: 'RCON',
  secretLabel: 'webrcon password of the game server',
});
