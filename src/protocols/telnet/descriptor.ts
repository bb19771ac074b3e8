import { z } from 'zod';
import { gameHost, passwordTransport, port, positiveMs, secretSources } from '../transport-descriptor.js';

const schema = z
  .strictObject({
    type: z.literal('telnet'),
    host: gameHost,
    port: port.default(8081).describe('TelnetPort of serverconfig.xml.'),
    ...secretSources,
    timeoutMs: positiveMs(5000).describe("Deadline for one command's answer."),
    connectTimeoutMs: positiveMs(5000).describe('Deadline for the TCP connect, and again for the login.'),
  })
  .describe("7 Days to Die's telnet console.");

/** 7 Days to Die's telnet console. */
export const telnetTransport = passwordTransport('telnet', schema, '7dtd', {
  name: 'telnet',
  secretLabel: 'telnet password of the game server',
});
