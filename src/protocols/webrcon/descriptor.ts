import { z } from 'zod';
import { passwordTransport, port, positiveMs, secretSources, urlHostSchema } from '../descriptor.js';

const schema = z.strictObject({
  type: z.literal('webrcon'),
  host: urlHostSchema.default('127.0.0.1'),
  port: port.default(28016),
  ...secretSources,
  timeoutMs: positiveMs(5000),
  connectTimeoutMs: positiveMs(5000),
});

/** Rust's WebRCON: JSON over a WebSocket, the password in the URL's path. */
export const webrconTransport = passwordTransport('webrcon', schema, 'rust', {
  name: 'RCON',
  secretLabel: 'webrcon password of the game server',
});
