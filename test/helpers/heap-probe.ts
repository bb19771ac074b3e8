/**
 * Loaded into a spawned porter with NODE_OPTIONS=--import (test/integration/churn.test.ts), never
 * by porter itself: a loopback HTTP endpoint that collects garbage fully and answers the heap
 * used, so a test can see whether the daemon's memory levels off. It writes its port to the file
 * HEAP_PROBE_FILE names. Nothing of porter changes: gc is reached through V8's flag, set here.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const file = process.env.HEAP_PROBE_FILE;
if (file !== undefined) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const server = createServer((_request, response) => {
    // Twice: what the first collection freed may hold the last references to more.
    gc();
    gc();
    response.end(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed }));
  });
  server.listen(0, '127.0.0.1', () => writeFileSync(file, String((server.address() as AddressInfo).port)));
  // porter's own life decides when the process ends.
  server.unref();
}
