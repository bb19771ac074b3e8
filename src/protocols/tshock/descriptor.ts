import { z } from 'zod';
import { passwordTransport, port, positiveMs, secretSources, urlHostSchema } from '../descriptor.js';

/** TShock's REST API (Terraria): the "password" is a REST token, sent as TShock reads it, in the query. */
const schema = z.strictObject({
  type: z.literal('tshock'),
  host: urlHostSchema.default('127.0.0.1'),
  port: port.default(7878),
  password: secretSources.password.describe(
    'TShock REST token (a key of ApplicationRestTokens in tshock/config.json). Prefer passwordFile or PORTER_RCON_PASSWORD.',
  ),
  passwordFile: secretSources.passwordFile,
  timeoutMs: positiveMs(5000).describe("Deadline for one request's answer once connected."),
  connectTimeoutMs: positiveMs(5000).describe('Deadline for the TCP connect of one request.'),
});

/** Terraria's TShock REST API; its client keeps one connection. */
export const tshockTransport = passwordTransport('tshock', schema, 'terraria', { name: 'the REST API', secretLabel: 'TShock REST token' });
