/** porter's own handlers while it runs: SIGTERM and SIGINT stop it (the second one at once), SIGHUP reloads. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export function onStopSignals(handler: () => void): () => void {
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}

/** Node's default for SIGHUP ends the process with no drain; with this handler it only asks for a reload. */
export function onReloadSignal(handler: () => void): () => void {
  process.on('SIGHUP', handler);
  return () => {
    process.off('SIGHUP', handler);
  };
}
