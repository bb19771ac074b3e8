import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { simEchoText } from '../../src/sim/rcon-answers.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';

/**
 * Keeps the fake honest (docs/design.md#simulators): Debian's python3-rcon (conqp/rcon), an independent client,
 * must agree with it. Run with Debian's own interpreter, argv only, never a shell.
 */
const PYTHON = '/usr/bin/python3';
const CLIENT = `
import json, sys
from rcon.source import Client
from rcon.exceptions import WrongPassword
host, port, passwd, *commands = sys.argv[1:]
try:
    with Client(host, int(port), passwd=passwd, timeout=5) as client:
        print(json.dumps({'answers': [client.run(command) for command in commands]}))
except WrongPassword:
    print(json.dumps({'error': 'WrongPassword'}))
`;

interface ClientResult {
  answers?: string[];
  error?: string;
}

function python(args: string[]): Promise<{ error: Error | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, args, { timeout: 20_000 }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

async function runClient(server: FakeRconServer, password: string, ...commands: string[]): Promise<ClientResult> {
  const { error, stdout, stderr } = await python(['-c', CLIENT, server.host, String(server.port), password, ...commands]);
  assert.equal(error, null, `python3-rcon failed: ${stderr}`);
  return JSON.parse(stdout) as ClientResult;
}

const installed = (await python(['-c', 'import rcon.source'])).error === null;
const skip =
  !installed && process.env.CI !== 'true'
    ? 'python3-rcon is not installed (apt-get install -y python3-rcon); required when CI=true'
    : false;

describe('python3-rcon against the fake Minecraft RCON server', { skip }, () => {
  let server: FakeRconServer;
  before(async () => {
    assert.ok(
      installed,
      `python3-rcon must be installed when CI=true: apt-get install -y python3-rcon (tried ${PYTHON} -c "import rcon.source")`,
    );
    server = await startRconServer({ password: 'interop-pw', flavour: 'minecraft', players: ['Steve'] });
  });
  after(() => server?.close());

  test('logs in with the right password and runs a command', async () => {
    const result = await runClient(server, 'interop-pw', 'give Steve diamond 3', 'list');
    assert.deepEqual(result.answers, ['Gave 3 [Diamond] to Steve', 'There are 1 of a max of 20 players online: Steve']);
    assert.ok(server.executed.some((entry) => entry.command === 'give Steve diamond 3'));
  });

  test('a wrong password is refused', async () => {
    const failuresBefore = server.authFailures;
    const result = await runClient(server, 'not-the-password', 'give Steve diamond');
    assert.deepEqual(result, { error: 'WrongPassword' });
    assert.equal(server.authFailures, failuresBefore + 1);
  });

  test('an answer longer than 4,096 characters arrives whole', async () => {
    const result = await runClient(server, 'interop-pw', 'porter-sim echo 10000', 'porter-sim echo 5000');
    assert.equal(result.answers?.[0], simEchoText(10_000));
    assert.equal(result.answers?.[1], simEchoText(5000));
    assert.equal(server.framingViolations, 0, 'the independent client never tripped the 1,460-byte read rule');
  });
});
