import { writeFileSync } from 'node:fs';

/**
 * Preloaded (`node --import`) into a program a test runs in a terminal: tmux does not always
 * learn a pane's exit status (when the terminal closes before the process is reaped), so the
 * program writes its own into PORTER_TEST_EXIT_FILE.
 */
const file = process.env.PORTER_TEST_EXIT_FILE;
if (file) process.on('exit', (code) => writeFileSync(file, String(code)));
