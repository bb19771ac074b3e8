import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startBattlEyeServer, type FakeBattlEyeServer } from '../../src/sim/battleye-server.js';
import { simEchoText } from '../../src/sim/rcon-answers.js';

/**
 * Keeps the BattlEye simulator honest (docs/design.md#simulators) with clients that share no code
 * with porter: Debian's python3-rcon (conqp/rcon, `rcon.battleye.Client`), and a few lines of
 * Python on a bare socket with zlib.crc32, which checks the checksum of every datagram the
 * simulator sends (python3-rcon does not), reassembles a split answer and acknowledges messages.
 * Run with Debian's own interpreter, argv only, never a shell.
 */
const PYTHON = '/usr/bin/python3';

const LIBRARY_CLIENT = `
import json, sys
from rcon.battleye import Client
from rcon.exceptions import WrongPassword
host, port, passwd, *commands = sys.argv[1:]
messages = []
try:
    with Client(host, int(port), passwd=passwd, timeout=5, message_handler=lambda m: messages.append(m.message)) as client:
        answers = [client.run(command) for command in commands]
        print(json.dumps({'answers': answers, 'messages': messages}))
except WrongPassword:
    print(json.dumps({'error': 'WrongPassword'}))
`;

const SOCKET_CLIENT = `
import json, socket, sys, zlib
host, port, passwd, command = sys.argv[1:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.connect((host, int(port)))
def send(payload):
    body = b'\\xff' + payload
    s.send(b'BE' + zlib.crc32(body).to_bytes(4, 'little') + body)
def receive():
    data = s.recv(65535)
    assert data[:2] == b'BE' and data[6] == 0xff, data[:8]
    assert zlib.crc32(data[6:]) == int.from_bytes(data[2:6], 'little'), 'bad checksum'
    return data[7], data[8:]
send(b'\\x00' + passwd.encode())
kind, rest = receive()
assert kind == 0 and rest == b'\\x01', (kind, rest)
send(b'\\x01\\x05' + command.encode())
parts, total, messages = {}, None, []
while total is None or len(parts) < total:
    kind, rest = receive()
    if kind == 2:
        send(b'\\x02' + rest[:1])
        messages.append(rest[1:].decode())
        continue
    assert kind == 1 and rest[0] == 5, (kind, rest[:1])
    if len(rest) > 1 and rest[1] == 0:
        total = rest[2]
        parts[rest[3]] = rest[4:]
    else:
        total = 1
        parts[0] = rest[1:]
print(json.dumps({'answer': b''.join(parts[i] for i in range(total)).decode(), 'parts': total, 'messages': messages}))
`;

function python(args: string[]): Promise<{ error: Error | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, args, { timeout: 20_000 }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

async function run<T>(script: string, server: FakeBattlEyeServer, password: string, ...commands: string[]): Promise<T> {
  const { error, stdout, stderr } = await python(['-c', script, server.host, String(server.port), password, ...commands]);
  assert.equal(error, null, `the Python client failed: ${stderr}`);
  return JSON.parse(stdout) as T;
}

const installed = (await python(['-c', 'import rcon.battleye'])).error === null;
const skip =
  !installed && process.env.CI !== 'true'
    ? 'python3-rcon is not installed (apt-get install -y python3-rcon); required when CI=true'
    : false;

describe('independent clients against the simulated BattlEye server', { skip }, () => {
  let server: FakeBattlEyeServer;
  before(async () => {
    assert.ok(
      installed,
      `python3-rcon must be installed when CI=true: apt-get install -y python3-rcon (tried ${PYTHON} -c "import rcon.battleye")`,
    );
    server = await startBattlEyeServer({ password: 'interop-pw', players: ['Survivor', { name: 'Smith, John', lobby: true }] });
  });
  after(() => server?.close());

  test('python3-rcon logs in and runs commands; the player table is what the simulator holds', async () => {
    const result = await run<{ answers: string[]; messages: string[] }>(LIBRARY_CLIENT, server, 'interop-pw', 'players', 'say -1 hello');
    assert.deepEqual(result.answers, [server.roster.table(), '']);
    assert.ok(server.executed.some((entry) => entry.command === 'say -1 hello'));
    assert.ok(result.messages.some((message) => /^RCon admin #\d+ \(127\.0\.0\.1:\d+\) logged in$/.test(message)));
  });

  test('python3-rcon: a wrong password is refused', async () => {
    const failures = server.stats.authFailures;
    assert.deepEqual(await run(LIBRARY_CLIENT, server, 'not-the-password', 'players'), { error: 'WrongPassword' });
    assert.equal(server.stats.authFailures, failures + 1);
  });

  test('a bare socket with zlib.crc32: every checksum right, a split answer reassembled, messages acknowledged', async () => {
    const acks = server.stats.acks;
    const result = await run<{ answer: string; parts: number; messages: string[] }>(
      SOCKET_CLIENT,
      server,
      'interop-pw',
      'porter-sim echo 3500',
    );
    assert.equal(result.answer, simEchoText(3500));
    assert.equal(result.parts, 4);
    assert.ok(server.stats.acks > acks, 'the acknowledgements reached the simulator');
  });
});
