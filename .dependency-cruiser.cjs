/**
 * porter's architecture, checked in CI (`npm run lint:deps`, part of `npm test`): no import cycles
 * between files, and each folder of src/ imports only from the layers below it. Lowest first:
 * a new folder must be placed in this list, which is the map of who may depend on whom.
 */
const LAYERS = [
  '(root)', // errors, clock, abort, log, scrub: depend on nothing of porter's
  'games', // what each game prints and refuses
  'policy', // command policy and failure patterns, over a game
  'net', // the reconnecting link and backoff
  'protocols', // the transports: each one's descriptor (listed in transport-registry.ts) and executor (loaded by type, executor-registry.ts)
  'sim', // the simulators: the simulated Seller API and game servers, over the protocols' wire formats (demo, tests, bench)
  'config', // the schema, assembled from the transport list: the one place configuration is validated
  'players', // who is online: cache, normalisation, player-list scripts
  'api', // the Seller API client and the budget that guards it
  'delivery', // the loop over journal/, history/ and state/ (see DELIVERY_PARTS)
  'webhook', // the webhook listener: verified store events wake the loops
  'health', // /healthz and /metrics
  'agones', // following an Agones GameServer's state
  'daemon', // assembles one loop per server
  'demo', // porter demo and porter sim: the daemon against the simulators
  'init', // porter init: finding a game server's settings on this machine
  'cli', // the commands
];

/**
 * Inside delivery/, lowest first: the state directory knows nothing of what is kept in it; the
 * journal and the history keep their files there and do not know each other; the loop
 * (delivery/*.ts) uses them all. outcome.ts, what a settled delivery came to, is shared by both.
 */
const DELIVERY_PARTS = [
  { part: 'state/', mayImport: [] },
  { part: 'journal/', mayImport: ['state/', 'outcome.ts'] },
  { part: 'history/', mayImport: ['state/', 'outcome.ts'] },
];

/**
 * Inside api/, lowest first: the wire (the client, its transport, connections, routes and token,
 * and the reading of an answer's text) knows nothing of what answers mean; answers/ (the typed
 * error of a status, a pull's claim, the claim gap, the API's health) reads what the wire
 * returns; the budget paces the calls and turns a 429 into its error. types.ts and errors.ts, the
 * words every part uses, are shared by all; server-api.ts (api/*.ts) uses them all.
 */
const API_PARTS = [
  { part: 'types.ts', mayImport: [] },
  { part: 'errors.ts', mayImport: ['types.ts'] },
  { part: 'wire/', mayImport: ['types.ts', 'errors.ts'] },
  { part: 'answers/', mayImport: ['wire/', 'types.ts', 'errors.ts'] },
  { part: 'budget/', mayImport: ['wire/', 'answers/', 'types.ts', 'errors.ts'] },
];

const asPattern = (entry) => (entry.endsWith('/') ? entry : `${entry.replaceAll('.', '\\.')}$`);

const partRules = (folder, parts) =>
  parts.map(({ part, mayImport }) => ({
    name: `${folder}-${part.replace(/\/$|\.ts$/, '')}`,
    comment: `src/${folder}/${part} may import from the rest of ${folder}/ only ${mayImport.join(' and ') || 'nothing'}`,
    severity: 'error',
    from: { path: `^src/${folder}/${asPattern(part)}` },
    to: { path: `^src/${folder}/`, pathNot: `^src/${folder}/(${[part, ...mayImport].map(asPattern).join('|')})` },
  }));

const pathOf = (layer) => (layer === '(root)' ? '^src/[^/]+\\.ts$' : `^src/${layer}/`);

const layerRules = LAYERS.slice(0, -1).map((layer, index) => {
  const above = LAYERS.slice(index + 1);
  return {
    name: `layer-${layer === '(root)' ? 'root' : layer}`,
    comment: `src/${layer === '(root)' ? '*.ts' : layer} is below ${above.join(', ')}: it may not import them`,
    severity: 'error',
    from: { path: pathOf(layer) },
    to: { path: above.map(pathOf).join('|') },
  };
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: break it by moving the shared part into a lower module.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'layer-unlisted',
      comment: 'A folder of src/ that is not in LAYERS: place it there.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: `^src/([^/]+\\.ts$|(${LAYERS.slice(1).join('|')})/)`,
      },
      to: {},
    },
    {
      name: 'sim-faults-for-tests',
      comment:
        'src/sim/faults/ is what only the tests and the benchmarks do to a simulator: nothing porter ships (porter demo and porter sim among it) may load it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/sim/faults/' },
      to: { path: '^src/sim/faults/' },
    },
    ...layerRules,
    ...partRules('delivery', DELIVERY_PARTS),
    ...partRules('api', API_PARTS),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a lower layer naming a higher one's types is coupled to it all the same.
    tsPreCompilationDeps: true,
  },
};
