import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTelnetServer, type FakeTelnetServer } from '../../src/sim/telnet-server.js';

/**
 * Keeps the simulated console honest (docs/design.md#simulators) with a client that is not
 * porter's: Python's standard socket module, the way 7 Days to Die admin bots talk to the console
 * (wait for "Please enter password:", send the password with CRLF, wait for the banner's last
 * line, then send commands and read lines). Run with Debian's own interpreter, argv only.
 */
const PYTHON = '/usr/bin/python3';
const CLIENT = String.raw`
import json, socket, sys
host, port, password, *commands = sys.argv[1:]
sock = socket.create_connection((host, int(port)), timeout=5)
buffer = b''
def read_until(marker):
    global buffer
    while marker not in buffer:
        chunk = sock.recv(4096)
        if not chunk:
            raise EOFError(buffer.decode('utf-8', 'replace'))
        buffer += chunk
    head, _, buffer = buffer.partition(marker)
    return (head + marker).decode('utf-8')
read_until(b'Please enter password:\r\n')
sock.sendall(password.encode('utf-8') + b'\r\n')
line = read_until(b'\r\n')
if line.startswith('Password incorrect'):
    print(json.dumps({'error': line.strip()}))
    sys.exit(0)
read_until(b"Press 'help' to get a list of all commands. Press 'exit' to end session.\r\n")
answers = []
for command, until in zip(commands[0::2], commands[1::2]):
    sock.sendall(command.encode('utf-8') + b'\r\n')
    text = read_until(until.encode('utf-8'))
    answers.append([l for l in text.replace('\0', '').split('\r\n') if l and not l[:4].isdigit()])
sock.sendall(b'exit\r\n')
print(json.dumps({'login': line.strip(), 'answers': answers, 'closed': sock.recv(1) == b''}))
`;

interface ClientResult {
  login?: string;
  answers?: string[][];
  closed?: boolean;
  error?: string;
}

function python(args: string[]): Promise<{ error: Error | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, args, { timeout: 20_000 }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

const installed = (await python(['-c', 'import socket'])).error === null;
const skip = !installed && process.env.CI !== 'true' ? `${PYTHON} is not installed; required when CI=true` : false;

describe('a Python socket client against the simulated 7 Days to Die console', { skip }, () => {
  let server: FakeTelnetServer;
  before(async () => {
    assert.ok(installed, `${PYTHON} must be installed when CI=true`);
    server = await startTelnetServer({ password: 'interop-pw', players: ['Alice Smith'] });
  });
  after(() => server?.close());

  async function run(password: string, ...commands: string[]): Promise<ClientResult> {
    const { error, stdout, stderr } = await python(['-c', CLIENT, server.host, String(server.port), password, ...commands]);
    assert.equal(error, null, `the Python client failed: ${stderr}`);
    return JSON.parse(stdout) as ClientResult;
  }

  test('logs in, lists players, gives an item, gets the unknown-command line, and exit closes', async () => {
    const result = await run(
      'interop-pw',
      'lp',
      'in the game\r\n',
      'give "Alice Smith" casinoCoin 3',
      'Dropped item\r\n',
      'nope',
      "'nope'\r\n",
    );
    assert.equal(result.login, 'Logon successful.');
    assert.equal(result.answers?.[0]?.length, 2);
    assert.match(result.answers[0][0]!, /^0\. id=\d+, Alice Smith, pos=/);
    assert.equal(result.answers[0][1], 'Total of 1 in the game');
    assert.deepEqual(result.answers?.[1], ['Dropped item']);
    assert.deepEqual(result.answers?.[2], ["*** ERROR: unknown command 'nope'"]);
    assert.equal(result.closed, true);
    assert.ok(server.executed.some((e) => e.command === 'give "Alice Smith" casinoCoin 3'));
  });

  test('a wrong password is answered "Password incorrect, please enter password:"', async () => {
    const failures = server.authFailures;
    assert.deepEqual(await run('not-it'), { error: 'Password incorrect, please enter password:' });
    assert.equal(server.authFailures, failures + 1);
  });
});
