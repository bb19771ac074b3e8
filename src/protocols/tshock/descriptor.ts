import { z } from 'zod';
import { passwordTransport, port, positiveMs, secretSources, urlGameHost } from '../transport-descriptor.js';

/** TShock's REST API (Terraria): the "password" is a REST token, sent as TShock reads it, in the query. */
const schema = z
  .strictObject({
    type: z.literal('tshock'),
    host: urlGameHost,
    port: port.default(7878).describe("RestApiPort of TShock's tshock/config.json."),
    password: secretSources.password.describe(
      'TShock REST token (a key of ApplicationRestTokens in tshock/config.json). Prefer passwordFile, PORTER_RCON_PASSWORD or the systemd credential porter-rcon-password.',
    ),
    passwordFile: secretSources.passwordFile,
    timeoutMs: positiveMs(5000).describe("Deadline for one request's answer once connected."),
    connectTimeoutMs: positiveMs(5000).describe('Deadline for the TCP connect of one request.'),
  })
  .describe("Terraria's TShock REST API.");

/** Terraria's TShock REST API; its client keeps one connection. */
export const tshockTransport = passwordTransport('tshock', schema, 'terraria', { name: 'the REST API', secretLabel: 'TShock REST token' });
