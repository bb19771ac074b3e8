import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';

/**
 * Keeps the simulated Project Zomboid console honest (docs/design.md#simulators) with a client
 * that is not porter's: Python's socket and struct modules speaking Source RCON as the Valve
 * wiki describes it, reading whole packets by their length field however TCP cuts or joins
 * them. (Debian's python3-rcon reads one packet per recv, so it loses Zomboid's second login
 * packet whenever the two arrive together: it cannot check this simulator reliably.)
 */
const PYTHON = '/usr/bin/python3';
const CLIENT = String.raw`
import json, socket, struct, sys
host, port, password, *commands = sys.argv[1:]
sock = socket.create_connection((host, int(port)), timeout=5)
buffer = b''
def packet():
    global buffer
    while True:
        if len(buffer) >= 4:
            size = struct.unpack('<i', buffer[:4])[0]
            if len(buffer) >= 4 + size:
                body, buffer = buffer[4:4 + size], buffer[4 + size:]
                rid, kind = struct.unpack('<ii', body[:8])
                return {'id': rid, 'type': kind, 'body': body[8:-2].decode('utf-8')}
        chunk = sock.recv(4096)
        if not chunk:
            return None
        buffer += chunk
def send(rid, kind, text):
    data = struct.pack('<ii', rid, kind) + text.encode('utf-8') + b'\0\0'
    sock.sendall(struct.pack('<i', len(data)) + data)
send(7, 3, password)
login = [packet(), packet()]
out = {'login': login, 'answers': []}
if login[1] is not None and login[1]['id'] == 7:
    for i, command in enumerate(commands):
        send(100 + i, 2, command)
        out['answers'].append(packet())
    send(200, 0, '')
    out['probe'] = [packet(), packet()]
print(json.dumps(out))
`;

interface Packet {
  id: number;
  type: number;
  body: string;
}

function client(port: number, password: string, commands: string[]): Promise<{ login: Packet[]; answers: Packet[]; probe?: Packet[] }> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', CLIENT, '127.0.0.1', String(port), password, ...commands], { timeout: 20_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as { login: Packet[]; answers: Packet[] }),
    );
  });
}

const installed = await new Promise<boolean>((resolve) => execFile(PYTHON, ['-c', 'import struct'], (error) => resolve(error === null)));
const skip = !installed && process.env.CI !== 'true' ? `${PYTHON} is not installed; required when CI=true` : false;

describe('a Python Source RCON client against the simulated Project Zomboid console', { skip }, () => {
  let server: FakeRconServer;
  before(async () => {
    server = await startRconServer({ password: 'pz-interop-secret', flavour: 'source', game: 'zomboid', players: ['alice', 'bob smith'] });
  });
  after(() => server.close());

  test('login: an empty RESPONSE_VALUE, then AUTH_RESPONSE with the request id', async () => {
    for (let i = 0; i < 20; i++) {
      const { login } = await client(server.port, 'pz-interop-secret', []);
      assert.deepEqual(login, [
        { id: 7, type: 0, body: '' },
        { id: 7, type: 2, body: '' },
      ]);
    }
  });

  test('a wrong password: AUTH_RESPONSE with id -1, then the connection closes', async () => {
    const { login, answers } = await client(server.port, 'wrong', ['players']);
    assert.deepEqual(login[1], { id: -1, type: 2, body: '' });
    assert.deepEqual(answers, []);
  });

  test('players, additem and an unknown command, each answered whole in one packet; an empty probe answered twice, identically', async () => {
    const { answers, probe } = await client(server.port, 'pz-interop-secret', ['players', 'additem "alice" "Base.Axe"', 'dance']);
    assert.deepEqual(
      answers.map((a) => [a.id, a.type]),
      [
        [100, 0],
        [101, 0],
        [102, 0],
      ],
    );
    assert.equal(answers[0]!.body, 'Players connected (2): \n-alice\n-bob smith');
    assert.match(answers[1]!.body, /^Item Base\.Axe Added in alice's inventory\./);
    assert.match(answers[2]!.body, /Unknown command/);
    assert.deepEqual(probe, [
      { id: 200, type: 0, body: '' },
      { id: 200, type: 0, body: '' },
    ]);
  });
});
