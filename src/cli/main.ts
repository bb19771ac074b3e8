#!/usr/bin/env node
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { registerCheck } from './check.js';
import { registerDemo } from './demo.js';
import { registerPlayers } from './players.js';
import { registerRcon } from './rcon.js';
import { registerRun } from './run.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

const program = new Command()
  .name('porter')
  .description("Delivers a game store's purchases to your game server: pulls delivery commands from the Seller API, runs them over RCON, WebRCON or a script, and reports each one exactly once.")
  .version(version)
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nExit codes: 0 clean stop, 78 configuration or credentials error (do not restart), 1 anything else.\nQuick look without a store: porter demo',
  );

registerRun(program);
registerCheck(program);
registerRcon(program);
registerPlayers(program);
registerDemo(program);

await program.parseAsync();
