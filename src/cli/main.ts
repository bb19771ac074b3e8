#!/usr/bin/env -S node --max-semi-space-size=16 --no-allocation-site-pretenuring --heap-growing-percent=50
// Three V8 flags, for an idle fleet (docs/benchmarks.md, fleet), where a thousand servers' reads
// and pulls come in bursts. --max-semi-space-size=16 sets the young generation to at most 16 MiB
// per semi-space, V8's own default on 64-bit Node 20, named so that every Node version porter runs
// on behaves the same: at 1 MiB it was collected ~30 times a second and the collector was a third
// of the fleet's CPU. --no-allocation-site-pretenuring: V8 allocates straight into the old
// generation what an allocation site's past says will live long, and it judges that at a
// collection, which in a burst always finds a thousand reads still waiting for their answers; so
// every per-request object was put where only a full collection frees it. Without it a fleet took
// ~15 % less CPU with webhooks and ~7 % less polling; RSS fell ~35 MB with webhooks and rose 10 to
// 60 MB polling (the fleet's target was 250 MB then, 200 MB now); a single server is unchanged.
// --heap-growing-percent=50: V8 let the old generation grow to about four times what was live
// before collecting it (an idle fleet's ~37 MB live reached ~145 MB, and the RSS peak passed
// 200 MB); a fixed factor of 1.5 collects sooner, at a cost in CPU the benchmarks did not see.
// The Dockerfile's ENTRYPOINT passes the same flags, the single executables carry them
// (scripts/release/sea.mjs), and the bench reads them from this line.
// First: it holds a SIGHUP, SIGTERM or SIGINT that arrives while the rest loads.
import './early-signals.js';
import { Command } from 'commander';
import { registerCheck } from './check.js';
import { registerDemo } from './demo.js';
import { registerInit } from './init.js';
import { registerHistory } from './history.js';
import { registerPlayers } from './players.js';
import { registerRcon } from './rcon.js';
import { registerRun } from './run.js';
import { registerSim } from './sim.js';
import { porterVersion } from '../version.js';
import { SecretBook } from '../secret-book.js';
import { learnEnvironmentSecrets } from './common.js';
import { installLastResort } from './last-resort.js';
import { scrubbedOrWithheld } from '../scrub.js';

// Every secret this process learns, from its configuration, its environment or init's answers: no output path prints one.
const secrets = new SecretBook();
learnEnvironmentSecrets(secrets);
installLastResort(secrets);

const program = new Command()
  .name('porter')
  .description(
    "Delivers a game store's purchases to your game server: pulls delivery commands from the Seller API, runs them over RCON, WebRCON, telnet, BattlEye, TShock REST or a script, and reports each one exactly once.",
  )
  .version(porterVersion())
  .showHelpAfterError()
  // commander's own output (a usage error quotes the argument it could not use) is scrubbed like every line.
  .configureOutput({
    writeOut: (text) => process.stdout.write(scrubbedOrWithheld(secrets.scrub, text)),
    writeErr: (text) => process.stderr.write(scrubbedOrWithheld(secrets.scrub, text)),
  })
  // A flag, argument or command commander cannot use is EX_USAGE, for every command; help and --version are 0.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 64))
  .addHelpText(
    'after',
    '\nExit codes: 0 clean stop, 78 configuration or credentials error (do not restart), 64 a flag or command it cannot use, 1 anything else.\nQuick look without a store: porter demo. Rehearse with a simulated store: porter sim',
  );

registerRun(program, secrets);
registerCheck(program, secrets);
registerRcon(program, secrets);
registerPlayers(program, secrets);
registerDemo(program, secrets);
registerSim(program, secrets);
registerInit(program, secrets);
registerHistory(program, secrets);

// Not a top-level await: the single executables are built from this file as one CommonJS script
// (scripts/release/sea.mjs), which has none. Each command's action reports its own errors.
void program.parseAsync();
