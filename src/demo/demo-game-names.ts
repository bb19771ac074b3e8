import type { GameName } from '../games/registry.js';

/**
 * The games `porter demo --game` and `porter sim --game` offer, apart from their scenarios
 * (demo-games.ts, which must have one for each): the CLI lists them at every start, and loads the
 * demo only when it runs.
 */
export const DEMO_GAME_NAMES = ['minecraft', 'zomboid', '7dtd', 'terraria', 'dayz'] as const satisfies readonly GameName[];

export type DemoGameName = (typeof DEMO_GAME_NAMES)[number];
