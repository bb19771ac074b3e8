import { defaultSimStatePath, isAlive, readSimState } from '../demo/sim-state.js';
import { GAME_TRANSPORTS } from './game-transport.js';
import type { InitOptions } from './options.js';
import type { Prompter } from './prompter.js';
import { askStore } from './token-step.js';

/** The store of a running `porter sim` (or `porter demo --keep-running`) the owner chose to rehearse with. */
interface ChosenSim {
  readonly baseUrl: string;
  readonly token: string;
}

/**
 * On a terminal, with no store address given, a `porter sim` running for this user is offered as
 * the store: its state file (the one `porter sim buy` reads) says where it is and its token. The
 * file alone proves nothing (a sim killed with -9 leaves it, and its pid may be reused since), so
 * the sim is offered only while its process runs and its store accepts the token it wrote; a file
 * that fails either is named and passed over, never used. From flags nothing of this happens.
 */
export async function offerRunningSim(prompter: Prompter, options: InitOptions, env: NodeJS.ProcessEnv): Promise<ChosenSim | undefined> {
  if (!prompter.interactive || options.apiUrl !== undefined) return undefined;
  let path: string;
  let state: ReturnType<typeof readSimState>;
  try {
    path = defaultSimStatePath(env);
    state = readSimState(path);
  } catch {
    // No home folder, or a state file that cannot be read: nothing to offer, and nothing wrong with init.
    return undefined;
  }
  if (state === undefined) return undefined;
  const left = `a porter sim's state file ${path} is left from pid ${state.pid}`;
  if (!isAlive(state.pid)) {
    prompter.say('info', `${left}, which no longer runs: not offered as the store`);
    return undefined;
  }
  const answer = await askStore(state.storeUrl, state.token).catch((error: unknown) => ({ failed: String(error) }));
  if ('failed' in answer || !answer.check.ok) {
    prompter.say('info', `${left}, whose store does not answer at ${state.storeUrl}: not offered as the store`);
    return undefined;
  }
  const title = GAME_TRANSPORTS[state.game]?.title ?? state.game;
  const use = await prompter.select({
    message: `porter sim is running here (${title}, pid ${state.pid}): rehearse with its store?`,
    flag: '--api-url',
    env: 'PORTER_API_URL',
    choices: [
      { value: true, label: `Use the sim's store at ${state.storeUrl}`, hint: 'its token too' },
      { value: false, label: 'Another store', hint: 'type its address' },
    ],
  });
  return use ? { baseUrl: state.storeUrl, token: state.token } : undefined;
}
