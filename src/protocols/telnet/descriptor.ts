import { z } from 'zod';
import { defineTransport, GAME_PASSWORD, port, positiveMs, secretSources, withPassword } from '../descriptor.js';

const schema = z.strictObject({
  type: z.literal('telnet'),
  host: z.string().min(1).default('127.0.0.1'),
  port: port.default(8081),
  ...secretSources,
  timeoutMs: positiveMs(5000).describe("Deadline for one command's answer."),
  connectTimeoutMs: positiveMs(5000).describe('Deadline for the TCP connect, and again for the login.'),
});

/** 7 Days to Die's telnet console. */
export const telnetTransport = defineTransport({
  type: 'telnet',
  schema,
  defaultPreset: '7dtd',
  secret: GAME_PASSWORD,
  console: { name: 'telnet', secretLabel: 'telnet password of the game server' },
  openFiles: 1,
  resolve: (parsed: z.output<typeof schema>, { password }) => withPassword(parsed, password),
});
