import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { projectUrls } from './project-urls.js';
import { readRepoFile } from './repo.js';
import { missingTool } from './run.js';
import { loadYamlDocuments, yamlMissing } from './yaml.js';

/**
 * The Agones examples name real images only, and the `agones-ready` container, which stands in
 * for the Agones SDK that itzg/minecraft-server lacks, does what Agones needs of a game: `POST
 * /ready` once the game answers (and not before), then `POST /health` while it keeps answering,
 * each with `{}` as JSON (Agones' REST SDK reference). Its script is run here with bash and curl
 * against a fake SDK gateway, with `mc-health` (the image's status ping) replaced by a stub that
 * says whether the game is up.
 */

const skip = (await yamlMissing()) || missingTool('curl', 'apt-get install curl') || missingTool('bash', 'apt-get install bash');
const FILES = ['deploy/kubernetes/agones-gameserver.yaml', 'deploy/kubernetes/agones-fleet.yaml'];
/** Images that exist on Docker Hub; porter's own is built from the Dockerfile and pushed by the owner (docs/install.md#kubernetes). */
const PUBLIC_IMAGES = ['itzg/minecraft-server'];

type Container = { name: string; image: string; command?: string[]; args?: string[] };
type Pod = { spec: { containers: Container[]; initContainers?: Container[] } };

async function pods(file: string): Promise<Pod[]> {
  const docs = (await loadYamlDocuments(readRepoFile(file))) as Array<{ kind: string; spec: unknown }>;
  return docs.flatMap((doc) => {
    if (doc.kind === 'GameServer') return [(doc.spec as { template: Pod }).template];
    if (doc.kind === 'Fleet') return [(doc.spec as { template: { spec: { template: Pod } } }).template.spec.template];
    if (doc.kind === 'StatefulSet') return [(doc.spec as { template: Pod }).template];
    return [];
  });
}

describe('the Kubernetes examples name images that exist', { skip }, () => {
  test("every image is a public one or porter's own, of this version", async () => {
    const { image: porterImage } = await projectUrls();
    for (const file of [...FILES, 'deploy/kubernetes/minecraft-sidecar.yaml', 'deploy/kubernetes/porter-pool.yaml']) {
      for (const pod of await pods(file)) {
        for (const container of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
          const ok = PUBLIC_IMAGES.some((image) => container.image === image || container.image.startsWith(`${image}:`));
          const porters = container.image === porterImage;
          assert.ok(ok || (porters && container.name === 'porter'), `${file}: ${container.name} runs ${container.image}`);
        }
      }
    }
  });
});

describe('agones-ready: Ready and health for a game without the Agones SDK', { skip }, () => {
  let sdk: Server;
  let dir = '';
  const calls: Array<{ path: string; body: string; type: string | undefined }> = [];
  const sent = () => calls.length;
  let script = '';

  before(async () => {
    const scripts = new Set<string>();
    for (const file of FILES) {
      for (const pod of await pods(file)) {
        const helper = pod.spec.containers.find((c) => c.name === 'agones-ready');
        assert.ok(helper, `${file}: an agones-ready container`);
        assert.equal(helper.image, 'itzg/minecraft-server', 'the game image itself: it has mc-health and curl');
        assert.deepEqual(helper.command, ['bash', '-c']);
        scripts.add(helper.args![0]!);
      }
    }
    assert.equal(scripts.size, 1, 'the GameServer and the Fleet run the same script');
    script = [...scripts][0]!;
    sdk = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        calls.push({ path: `${req.method} ${req.url}`, body, type: req.headers['content-type'] });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => sdk.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'porter-agones-ready-'));
    // mc-health: up while the file "up" exists; each call is counted.
    writeFileSync(join(dir, 'mc-health'), `#!/bin/bash\necho >> "${dir}/pings"\n[ -e "${dir}/up" ]\n`);
    chmodSync(join(dir, 'mc-health'), 0o755);
  });

  after(async () => {
    await new Promise((resolve) => sdk?.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const pings = () => {
    try {
      return readFileSync(join(dir, 'pings'), 'utf8').length;
    } catch {
      return 0;
    }
  };

  test('Ready only once the game answers, then health pings until it stops answering', async () => {
    const port = (sdk.address() as AddressInfo).port;
    // localhost in the pod is the SDK's; here the fake answers on 127.0.0.1.
    const child = spawn('bash', ['-c', script.replace('http://localhost:', 'http://127.0.0.1:')], {
      env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, AGONES_SDK_HTTP_PORT: String(port) },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(() => pings() >= 2, { timeoutMs: 30_000, what: 'two status pings while the game is down' });
      assert.equal(sent(), 0, 'nothing sent to the SDK while the game does not answer');
      writeFileSync(join(dir, 'up'), '');
      await waitFor(() => calls.filter((c) => c.path === 'POST /health').length >= 2, { timeoutMs: 30_000, what: 'health pings' });
      assert.equal(calls[0]!.path, 'POST /ready');
      for (const call of calls) assert.deepEqual({ body: call.body, type: call.type }, { body: '{}', type: 'application/json' });
      unlinkSync(join(dir, 'up'));
      assert.equal(await exited, 0, 'it ends when the game stops answering, and the health pings with it');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
