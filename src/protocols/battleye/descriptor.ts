import { z } from 'zod';
import { gameHost, passwordTransport, port, positiveMs, secretSources } from '../transport-descriptor.js';

/**
 * BattlEye has no fixed RCon port: RConPort in BEServer_x64.cfg sets it. 2305 (game port + 3) is
 * what hosting panels and admin tools set for DayZ by default; Arma 3 guides often use 2306.
 */
const schema = z
  .strictObject({
    type: z.literal('battleye'),
    host: gameHost,
    port: port.default(2305).describe('RConPort from BEServer_x64.cfg (UDP).'),
    ...secretSources,
    timeoutMs: positiveMs(5000).describe("Deadline for one command's answer; an unanswered command's outcome is unknown."),
    connectTimeoutMs: positiveMs(5000).describe('Deadline for the login answer.'),
  })
  .describe('BattlEye RCon over UDP: DayZ, Arma 3.');

/** BattlEye RCon over UDP (DayZ, Arma 3). */
export const battleyeTransport = passwordTransport('battleye', schema, 'dayz', {
  name: 'BattlEye RCon',
  secretLabel: 'battleye password of the game server',
});
