import { renameSync, writeFileSync } from 'node:fs';

/**
 * Preloaded (`node --import`) into a program a test runs in a terminal: tmux does not always
 * learn a pane's exit status (when the terminal closes before the process is reaped), so the
 * program writes its own into PORTER_TEST_EXIT_FILE.
 */
const file = process.env.PORTER_TEST_EXIT_FILE;
// Written beside it and renamed into place: a reader polling the file must never find it created
// and still empty, which reads as exit status 0 (CI on Node 24 saw 0 for a Ctrl-C's 130 so).
if (file)
  process.on('exit', (code) => {
    writeFileSync(`${file}.partial`, String(code));
    renameSync(`${file}.partial`, file);
  });
