import { z } from 'zod';
import { defineTransport, GAME_PASSWORD, port, positiveMs, secretSources, urlHostSchema, withPassword } from '../descriptor.js';

const schema = z.strictObject({
  type: z.literal('webrcon'),
  host: urlHostSchema.default('127.0.0.1'),
  port: port.default(28016),
  ...secretSources,
  timeoutMs: positiveMs(5000),
  connectTimeoutMs: positiveMs(5000),
});

/** Rust's WebRCON: JSON over a WebSocket, the password in the URL's path. */
export const webrconTransport = defineTransport({
  type: 'webrcon',
  schema,
  defaultPreset: 'rust',
  secret: GAME_PASSWORD,
  console: { name: 'RCON', secretLabel: 'webrcon password of the game server' },
  openFiles: 1,
  resolve: (parsed: z.output<typeof schema>, { password }) => withPassword(parsed, password),
});
